package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/api"
	"github.com/edihub/edihub/hub/console"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// newMux is the application's HTTP handler: /metrics, /healthz (the
// process lives), /readyz (see readyzHandler) and, with API tokens, the
// API and the web console over it.
func newMux(reg *prometheus.Registry, notReady func() string, nc *nats.Conn, wc *jsWriteCheck, apiHandler http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	if apiHandler != nil {
		mux.Handle(api.Prefix, apiHandler)
		mux.Handle(console.Prefix, console.Handler()) // the web console: static files over the API
	} else {
		// No tokens, no API: say how to turn it on rather than a bare 404.
		mux.Handle(console.Prefix, console.OffHandler())
		mux.HandleFunc(api.Prefix, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintln(w, `{"error":"the API is off: no api.tokens are configured (see configs/console.yaml and the README's Web console section)"}`)
		})
	}
	mux.Handle("GET /console", http.RedirectHandler(console.Prefix, http.StatusMovedPermanently))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("/readyz", readyzHandler(nc, notReady, wc))
	return mux
}

// consoleURL is what the start-up log says of the web console: its URL (a
// wildcard listen address shown as 127.0.0.1), or that it is off and why.
func consoleURL(addr net.Addr, on bool) string {
	if !on {
		return "off: no api.tokens are configured (see configs/console.yaml)"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + console.Prefix
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + console.Prefix
}

// startHTTP serves h on ln until Shutdown.
func startHTTP(ln net.Listener, h http.Handler, log zerolog.Logger) *http.Server {
	srv := newHTTPServer(h)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Str("component", "http").Err(err).Msg("http server stopped")
		}
	}()
	return srv
}

// HTTP server timeouts: a client that sends its headers or body slowly, or
// never reads the answer, or keeps an idle connection, holds a connection
// and a goroutine for at most this long. The write timeout leaves room for
// a bulk replay through the API.
const (
	httpReadHeaderTimeout = 5 * time.Second
	httpReadTimeout       = 30 * time.Second
	httpWriteTimeout      = 2 * time.Minute
	httpIdleTimeout       = 2 * time.Minute
)

func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: httpReadHeaderTimeout, ReadTimeout: httpReadTimeout,
		WriteTimeout: httpWriteTimeout, IdleTimeout: httpIdleTimeout, MaxHeaderBytes: 64 << 10}
}

// readyzHandler reports ready while NATS is connected, the hub runs and
// JetStream takes writes; otherwise 503 with the one condition that does
// not hold (notReady's reason: the hub's step or its publish health, the
// server's limits). A full store (disk or limits) makes every copy,
// dead letter and ingest publish fail, so the hub is not ready then; the
// write check runs again on later requests, so readiness returns by
// itself once space is freed.
func readyzHandler(nc *nats.Conn, notReady func() string, wc *jsWriteCheck) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reason := ""
		if nc.IsConnected() {
			reason = notReady()
		}
		switch {
		case !nc.IsConnected():
			http.Error(w, "not connected to NATS", http.StatusServiceUnavailable)
		case reason != "":
			http.Error(w, escape.Text(oneLine(reason)), http.StatusServiceUnavailable)
		case storeRefusing():
			_, last := ejs.StoreFaults.Unavailable(time.Now())
			http.Error(w, "JetStream store refuses writes: "+escape.Text(oneLine(last)), http.StatusServiceUnavailable)
		default:
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := wc.check(ctx); err != nil {
				http.Error(w, "JetStream refuses writes: "+escape.Text(oneLine(err.Error())), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ready")
		}
	})
}

// The write check's stream: one file-stored message at most (each probe
// replaces the one before), on a subject inside edi.>, which the
// hub's NATS user may write.
const (
	readyzStream  = wire.ReadyzStream
	readyzSubject = wire.ReadyzSubject
)

// jsWriteCheck publishes to the probe stream and remembers the outcome for
// a second, so a busy prober costs at most one write a second. It is a real
// write to the file store, so it fails as the hub's own publishes do when
// JetStream is out of space (server or account limits, a full disk), and
// succeeds again once there is room.
type jsWriteCheck struct {
	js       js.JetStream
	every    time.Duration
	replicas int

	mu      sync.Mutex
	at      time.Time
	err     error
	created bool
}

func newJSWriteCheck(j js.JetStream, replicas int) *jsWriteCheck {
	return &jsWriteCheck{js: j, every: time.Second, replicas: replicas}
}

func (c *jsWriteCheck) check(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < c.every {
		return c.err
	}
	c.err = c.probe(ctx)
	c.at = time.Now()
	return c.err
}

func (c *jsWriteCheck) probe(ctx context.Context) error {
	if !c.created {
		_, err := ejs.EnsureStream(ctx, c.js, readyzStreamConfig(c.replicas))
		if err != nil {
			return fmt.Errorf("probe stream %s: %w", readyzStream, err)
		}
		c.created = true
	}
	if _, err := c.js.Publish(ctx, readyzSubject, nil); err != nil {
		if errors.Is(err, js.ErrNoStreamResponse) || errors.Is(err, js.ErrStreamNotFound) {
			c.created = false // deleted behind our back: create it again next time
		}
		return err
	}
	return nil
}

// readyzStreamConfig is the write check's stream.
func readyzStreamConfig(replicas int) js.StreamConfig {
	return js.StreamConfig{
		Name: readyzStream, Subjects: []string{readyzSubject}, Storage: js.FileStorage,
		MaxMsgs: 1, Discard: js.DiscardOld, MaxAge: time.Hour, Replicas: max(replicas, 1),
		Description: "edihub /readyz write check: one message, replaced on every check",
	}
}

// storeRefusing is /readyz's storage condition: a write of any hub stream
// or of the attempt store was refused in the last seconds (ejs.StoreFaults).
func storeRefusing() bool {
	u, _ := ejs.StoreFaults.Unavailable(time.Now())
	return u
}
