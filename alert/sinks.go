package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/escape"
)

// logSink writes alerts to the log at warn level.
type logSink struct{ log zerolog.Logger }

func (s logSink) Name() string { return "log" }
func (s logSink) Send(_ context.Context, a Alert) error {
	// Partner and summary may quote what a partner sent: escaped, so that
	// a pretty-printing log on a terminal shows no control sequence.
	ev := s.log.Warn().Str("alert", a.Name).Str("severity", a.Severity).Str("partner", escape.Line(a.Partner))
	for k, v := range a.Labels {
		ev = ev.Str(k, escape.Line(v))
	}
	if a.Suppressed > 0 {
		ev = ev.Int("suppressed", a.Suppressed)
	}
	ev.Msg(escape.Text(a.Summary))
	return nil
}

// natsSink publishes alerts as JSON on <prefix>.<name>.
type natsSink struct {
	nc     *nats.Conn
	prefix string
}

func (s natsSink) Name() string { return "nats" }
func (s natsSink) Send(_ context.Context, a Alert) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.nc.Publish(s.prefix+"."+a.Name, b)
}

// webhookSink speaks Alertmanager's POST /api/v2/alerts.
type webhookSink struct {
	url    string
	client *http.Client
}

func newWebhookSink(base string, timeout time.Duration) webhookSink {
	return webhookSink{url: strings.TrimRight(base, "/") + "/api/v2/alerts", client: &http.Client{Timeout: timeout}}
}

func (s webhookSink) Name() string { return "webhook" }

// amAlert is one element of Alertmanager's postableAlerts.
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt,omitempty"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

func (s webhookSink) Send(ctx context.Context, a Alert) error {
	labels := map[string]string{"alertname": a.Name, "severity": a.Severity, "service": "edihub"}
	if a.Partner != "" {
		labels["partner"] = a.Partner
	}
	for k, v := range a.Labels {
		labels[k] = v
	}
	ann := map[string]string{"summary": a.Summary}
	if a.Suppressed > 0 {
		ann["suppressed"] = fmt.Sprint(a.Suppressed)
		labels["digest"] = "true"
	}
	body, err := json.Marshal([]amAlert{{Labels: labels, Annotations: ann, StartsAt: a.At, EndsAt: a.At.Add(time.Hour)}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", s.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", s.url, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook %s: status %s", s.url, resp.Status)
	}
	return nil
}

// BuildSinks turns the config's sink names into sinks.
func BuildSinks(c Config, nc *nats.Conn, log zerolog.Logger) []Sink {
	var out []Sink
	for _, s := range c.Sinks {
		switch s {
		case "log":
			out = append(out, logSink{log: log})
		case "nats":
			out = append(out, natsSink{nc: nc, prefix: c.SubjectPrefix})
		case "webhook":
			out = append(out, newWebhookSink(c.WebhookURL, c.WebhookTimeout))
		}
	}
	return out
}
