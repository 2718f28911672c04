package app

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/partner"
)

// startPartners loads the partner profiles, provisions the OUTBOUND stream
// of acknowledgements and reloads the profiles on SIGHUP until ctx ends (a
// bad file keeps the profiles in force; see partner.Registry.Reload).
func startPartners(ctx context.Context, cfg *Config, j js.JetStream, log zerolog.Logger, reg prometheus.Registerer) (*partner.Registry, error) {
	r, err := partner.New(cfg.Partners, &partner.Options{Logger: log, Registry: reg, Replicas: cfg.NATS.Replicas})
	if err != nil {
		return nil, err
	}
	if err := r.Provision(ctx, j); err != nil {
		return nil, err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		r.ReloadOn(ctx, hup)
	}()
	if cfg.Partners.Enabled() {
		log.Info().Str("component", "partners").Strs("partners", r.Set().IDs()).
			Msg("partner profiles in force: interchanges of other partners are refused (partner-rejected); SIGHUP reloads them")
	}
	return r, nil
}
