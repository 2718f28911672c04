package bridge

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// An outage must be seen without a dashboard: the health loop asks the
// brokers every HealthInterval whether they answer and whether the inbound
// topics exist, and logs each state change once: down (warn), still down
// every OutageLogInterval (warn), up again (info, with how long it was
// down). edihub_bridge_broker_up says the same to Prometheus.

// state logs the changes of one yes/no condition.
type state struct {
	log      zerolog.Logger
	what     string // "Kafka brokers", "inbound topic partners.in"
	bad      bool
	since    time.Time
	lastLog  time.Time
	every    time.Duration
	lastErr  string
	badWords string // "unreachable", "missing"
}

// set records the condition; err nil means good.
func (s *state) set(err error, now time.Time) {
	switch {
	case err != nil && !s.bad:
		s.bad, s.since, s.lastLog, s.lastErr = true, now, now, err.Error()
		s.log.Warn().Err(err).Msg(s.what + " " + s.badWords)
	case err != nil && now.Sub(s.lastLog) >= s.every:
		s.lastLog, s.lastErr = now, err.Error()
		s.log.Warn().Err(err).Dur("for", now.Sub(s.since).Round(time.Second)).Msg(s.what + " still " + s.badWords)
	case err == nil && s.bad:
		s.bad = false
		s.log.Info().Dur("after", now.Sub(s.since).Round(time.Millisecond)).Str("last_error", s.lastErr).Msg(s.what + " back")
	}
}

// health runs until ctx is done.
func (b *Bridge) health(ctx context.Context, cl *kgo.Client) {
	adm := kadm.NewClient(cl)
	broker := &state{log: b.log, what: "Kafka brokers", badWords: "unreachable", every: b.cfg.OutageLogInterval}
	topics := map[string]*state{}
	var names []string
	for _, in := range b.in {
		if _, ok := topics[in.r.Topic]; !ok {
			names = append(names, in.r.Topic)
			topics[in.r.Topic] = &state{log: b.log.With().Str("route", in.r.Name).Logger(),
				what: "inbound topic " + in.r.Topic, badWords: "does not exist", every: b.cfg.OutageLogInterval}
		}
	}
	b.m.brokerUp.Set(0)
	t := time.NewTicker(b.cfg.HealthInterval)
	defer t.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, max(b.cfg.HealthInterval, time.Second))
		var err error
		if len(names) > 0 {
			var md kadm.Metadata
			md, err = adm.Metadata(qctx, names...)
			if err == nil {
				for _, n := range names {
					var terr error
					if td, ok := md.Topics[n]; !ok {
						terr = kerr.UnknownTopicOrPartition
					} else if td.Err != nil {
						terr = td.Err
					}
					topics[n].set(terr, time.Now())
				}
			}
		} else {
			err = cl.Ping(qctx)
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		broker.set(err, time.Now())
		if err != nil {
			b.m.brokerUp.Set(0)
		} else {
			b.m.brokerUp.Set(1)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// saslHint is what kgo appends when a broker hangs up on the first request
// of a connection. Only an EOF can mean missing SASL; on a timeout or a
// refused dial the hint misleads, so the logger leaves it out.
const saslHint = " (is SASL missing?)"

func dropSASLHint(msg string, keyvals []any) string {
	if !strings.Contains(msg, saslHint) {
		return msg
	}
	for i := 0; i+1 < len(keyvals); i += 2 {
		if k, _ := keyvals[i].(string); k == "err" {
			if err, ok := keyvals[i+1].(error); ok && (err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)) {
				return msg
			}
		}
	}
	return strings.Replace(msg, saslHint, "", 1)
}
