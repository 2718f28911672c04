package hub

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

type recordingSink struct {
	mu  sync.Mutex
	got []Alert
}

func (r *recordingSink) Name() string { return "rec" }
func (r *recordingSink) Send(_ context.Context, a Alert) error {
	r.mu.Lock()
	r.got = append(r.got, a)
	r.mu.Unlock()
	return nil
}

func TestAlerterRateLimitAndDigest(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sink := &recordingSink{}
	a := NewAlerter(time.Minute, []AlertSink{sink}, zerolog.Nop(), func() time.Time { return now })
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		a.Fire(ctx, Alert{Name: "PoisonMessageDetected", Partner: "ACME", Summary: "x"})
		now = now.Add(100 * time.Millisecond)
	}
	a.Fire(ctx, Alert{Name: "PoisonMessageDetected", Partner: "GLOBEX"}) // other partner: own budget
	a.Flush(ctx)                                                         // 10 s in: too early for a digest
	if len(sink.got) != 2 {
		t.Fatalf("%d alerts before the interval, want 2 (one per partner)", len(sink.got))
	}
	now = now.Add(time.Minute)
	a.Flush(ctx)
	if len(sink.got) != 3 || sink.got[2].Suppressed != 99 || sink.got[2].Partner != "ACME" {
		t.Fatalf("digest: %+v", sink.got)
	}
	a.Flush(ctx) // nothing more to say
	if len(sink.got) != 3 {
		t.Fatalf("extra digest: %d", len(sink.got))
	}
}

// Test 5, end to end: 100 poison messages from one partner give at most
// one alert per interval plus a digest, on the NATS sink and the
// Alertmanager webhook alike.
func TestHundredPoisonMessagesOneAlertAndDigest(t *testing.T) {
	var mu sync.Mutex
	var posted [][]amAlert
	am := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v2/alerts" || r.Method != http.MethodPost {
			http.Error(w, "wrong endpoint", http.StatusNotFound)
			return
		}
		var batch []amAlert
		if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		posted = append(posted, batch)
		mu.Unlock()
	}))
	defer am.Close()

	cfg := fastConfig()
	cfg.Attempts.Threshold = 1
	cfg.Alerts.Interval = 2 * time.Second
	cfg.Alerts.Sinks = []string{"log", "nats", "webhook"}
	cfg.Alerts.WebhookURL = am.URL
	boom := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error { panic("hostile") }}
	env := startHub(t, runServer(t), "", cfg, []Stage{boom}, nil)
	alerts := make(chan *nats.Msg, 200)
	sub, err := env.nc.ChanSubscribe("edi.alerts.>", alerts)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	start := time.Now()
	for i := 0; i < 100; i++ {
		publish(t, env.js, "ACME", "poison", nil)
	}
	eventually(t, 30*time.Second, func() bool { return countMsgs(t, env.js, "POISON") == 100 })
	burst := time.Since(start)
	var got []Alert
	covered := 0
	timeout := time.After(3 * cfg.Alerts.Interval)
collect:
	for covered < 100 {
		select {
		case m := <-alerts:
			var a Alert
			if err := json.Unmarshal(m.Data, &a); err != nil {
				t.Fatal(err)
			}
			got = append(got, a)
			covered += max(a.Suppressed, 1)
		case <-timeout:
			break collect
		}
	}
	// every one of the 100 is accounted for, in at most one plain alert per
	// interval the burst spanned (plus its digest)
	windows := int(burst/cfg.Alerts.Interval) + 1
	if covered != 100 || countPlain(got) > windows || len(got) > 2*windows {
		t.Fatalf("got %d alerts (%d plain) covering %d of 100 over a %v burst (%d windows)", len(got), countPlain(got), covered, burst, windows)
	}
	eventually(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(posted) >= len(got) })
	mu.Lock()
	defer mu.Unlock()
	if l := posted[0][0].Labels; l["alertname"] != "PoisonMessageDetected" || l["partner"] != "ACME" || l["stage"] != "parse" {
		t.Fatalf("webhook labels: %v", l)
	}
}

func countPlain(as []Alert) int {
	n := 0
	for _, a := range as {
		if a.Suppressed == 0 {
			n++
		}
	}
	return n
}
