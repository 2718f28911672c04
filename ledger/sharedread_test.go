package ledger

import (
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// Lookups that find the bucket unanswered (a stream leader being elected)
// share the one read in progress and fail together after one Timeout, as
// the environment's failure, instead of waiting a Timeout each in turn:
// queued like that, lookups ran past the stage's deadline and healthy
// interchanges were quarantined as timeouts in the cluster cut bench.
func TestLookupsShareAFailedRead(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	nc, js := jetstreamtest.Connect(t, srv.URL)
	const timeout = 1500 * time.Millisecond
	s := openKV(t, js, &KVOptions{Timeout: timeout})
	if err := srv.DisableJetStream(); err != nil {
		t.Fatal(err)
	}
	// The only responder left on the JetStream API, which never answers:
	// every read waits its whole Timeout.
	sub, err := nc.Subscribe("$JS.API.>", func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	const lookups = 6
	errs := make([]error, lookups)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range lookups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Seen(Key{Partner: "acme", Sender: "S", Recipient: "R", ControlRef: "REF" + string(rune('0'+i))})
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("lookup %d answered without the bucket", i)
		}
	}
	// One shared read takes one Timeout; in turn they would take six.
	if took > 3*timeout {
		t.Fatalf("%d lookups took %v to fail, want about one Timeout (%v): they waited in turn", lookups, took, timeout)
	}
	t.Logf("%d lookups failed together after %v (Timeout %v)", lookups, took.Round(time.Millisecond), timeout)
}
