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

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// webhookAlert is the part of Alertmanager's postableAlert the test reads.
type webhookAlert struct {
	Labels map[string]string `json:"labels"`
}

// Test 5, end to end: 100 poison messages from one partner give at most
// one alert per interval plus a digest, on the NATS sink and the
// Alertmanager webhook alike.
func TestHundredPoisonMessagesOneAlertAndDigest(t *testing.T) {
	var mu sync.Mutex
	var posted [][]webhookAlert
	am := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v2/alerts" || r.Method != http.MethodPost {
			http.Error(w, "wrong endpoint", http.StatusNotFound)
			return
		}
		var batch []webhookAlert
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
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{boom}, nil)
	alerts := make(chan *nats.Msg, 200)
	sub, err := env.nc.ChanSubscribe("edi.alerts.>", alerts)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	start := time.Now()
	for i := 0; i < 100; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", "poison", nil)
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "POISON") == 100 })
	burst := time.Since(start)
	var got []alert.Alert
	covered := 0
	timeout := time.After(3 * cfg.Alerts.Interval)
collect:
	for covered < 100 {
		select {
		case m := <-alerts:
			var a alert.Alert
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
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(posted) >= len(got) })
	mu.Lock()
	defer mu.Unlock()
	if l := posted[0][0].Labels; l["alertname"] != "PoisonMessageDetected" || l["partner"] != "ACME" || l["stage"] != "parse" {
		t.Fatalf("webhook labels: %v", l)
	}
}

func countPlain(as []alert.Alert) int {
	n := 0
	for _, a := range as {
		if a.Suppressed == 0 {
			n++
		}
	}
	return n
}
