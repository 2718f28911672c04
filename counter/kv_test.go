package counter

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func openKV(t *testing.T, js jetstream.JetStream, o *KVOptions) *KVStore {
	t.Helper()
	s, err := OpenKV(context.Background(), js, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestKVStoreConformance(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	runStoreConformance(t, func(t *testing.T) store {
		return openKV(t, js, &KVOptions{Bucket: testName(t)})
	})
}

// Two hubs (two stores, two connections) update one key at once: revisions
// make every update count.
func TestKVTwoHubsNeverLoseAnUpdate(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	k := Key{"INGEST", "ingest-p0", 1}
	const each = 30
	var wg sync.WaitGroup
	stores := make([]*KVStore, 2)
	for i := range stores {
		_, js := jetstreamtest.Connect(t, srv.URL)
		stores[i] = openKV(t, js, nil)
	}
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := s.RecordFailure(k, Failure{Fingerprint: "x"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, s := range stores {
		if r, err := s.Get(k); err != nil || r.Count != 2*each {
			t.Fatalf("count %d (err %v), want %d", r.Count, err, 2*each)
		}
	}
}

// Records survive a restart of the server (file storage).
func TestKVSurvivesServerRestart(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	k := Key{"S", "C", 77}
	if _, err := openKV(t, js, nil).RecordFailure(k, Failure{Fingerprint: "x"}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	srv = jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: srv.DataDir})
	_, js = jetstreamtest.Connect(t, srv.URL)
	if r, err := openKV(t, js, nil).Get(k); err != nil || r.Count != 1 {
		t.Fatalf("after restart: %+v %v", r, err)
	}
}

// Delete of a message with no record writes nothing to the bucket.
func TestKVDeleteOfNothingWritesNothing(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	for seq := range uint64(10) {
		if err := s.Delete(Key{"S", "C", seq}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.kv.Status(context.Background())
	if err != nil || st.Values() != 0 {
		t.Fatalf("%d messages in the bucket (err %v), want 0", st.Values(), err)
	}
}

func TestKVOptionsValidate(t *testing.T) {
	for _, o := range []KVOptions{{TTL: time.Second}, {Replicas: 9}, {Timeout: -time.Second}} {
		o.setDefaults()
		if err := o.Validate(); err == nil {
			t.Fatalf("%+v accepted", o)
		}
	}
}
