package test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/forensics"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/lease"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/wire"
)

// provisionLikeServe opens every stream and bucket serve opens on a
// cluster, in serve's order, on a connection of its own.
func provisionLikeServe(ctx context.Context, url string, id int) error {
	nc, err := nats.Connect(url, nats.Name(fmt.Sprintf("coldstart-%d", id)))
	if err != nil {
		return err
	}
	defer nc.Close()
	j, err := js.New(nc)
	if err != nil {
		return err
	}
	if err := ejs.WaitReady(ctx, j); err != nil {
		return err
	}
	if err := ejs.WaitStream(ctx, j, js.StreamConfig{Name: wire.ReadyzStream, Subjects: []string{wire.ReadyzSubject},
		Storage: js.FileStorage, Replicas: 3, MaxMsgs: 1}); err != nil {
		return err
	}
	if _, err := ledger.OpenKV(ctx, j, &ledger.KVOptions{Replicas: 3}); err != nil {
		return err
	}
	if _, err := counter.OpenKV(ctx, j, &counter.KVOptions{Replicas: 3}); err != nil {
		return err
	}
	if _, err := lease.Open(ctx, j, &lease.Options{Replicas: 3, Holder: fmt.Sprintf("hub-%d", id)}); err != nil {
		return err
	}
	if _, err := alert.OpenKVLimiter(ctx, j, alert.KVLimiterOptions{Bucket: "edihub-alert-limits", Interval: time.Minute, Replicas: 3}); err != nil {
		return err
	}
	if _, err := forensics.OpenStore(ctx, j, forensics.Config{Replicas: 3}, true); err != nil {
		return err
	}
	st, err := counter.OpenKV(ctx, j, &counter.KVOptions{Replicas: 3})
	if err != nil {
		return err
	}
	h, err := hub.New(hub.Options{Config: hub.Config{Cluster: hub.ClusterConfig{Replicas: 3}}, Conn: nc, Store: st,
		Stages: []hub.Stage{{Name: "parse", Handle: func(context.Context, *hub.Message) error { return nil }}}, Logger: zerolog.Nop()})
	if err != nil {
		return err
	}
	return h.Provision(ctx)
}

// Three hubs started at once on a fresh three-node cluster of real
// nats-server processes all provision every stream and bucket, ten times
// over (issue 25: with CreateOrUpdate two of them hung until serve's
// minute ran out). The provisioning starts as soon as the nodes take
// connections, while the cluster may still be electing its meta leader.
func TestThreeHubsProvisionAtOnceOnAColdCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ten three-node clusters")
	}
	for round := range 10 {
		t.Run(fmt.Sprintf("round-%d", round+1), func(t *testing.T) {
			// a cluster whose JetStream never came up (no meta leader in
			// 45 s on a loaded machine: every hub's one error is the
			// server's 503) says nothing of the hubs: a fresh cluster is
			// started once more; a second such cluster fails the round
			for try := 1; ; try++ {
				errs, took := provisionThreeAtOnce(t)
				if try == 1 && allUnavailable(errs) {
					t.Logf("round %d: the cluster's JetStream never became available (%v); a fresh cluster once more", round+1, errs[0])
					continue
				}
				for i, err := range errs {
					if err != nil {
						t.Errorf("hub %d: %v (after %s)", i, err, took[i].Round(time.Millisecond))
					}
				}
				t.Logf("round %d: provisioned in %v", round+1, took)
				return
			}
		})
	}
}

// provisionThreeAtOnce starts a fresh three-node cluster and three hubs'
// provisioning on it at once, within 45 s.
func provisionThreeAtOnce(t *testing.T) ([]error, []time.Duration) {
	nodes := startNATSProcesses(t, 3)
	url := clusterURL(nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	took := make([]time.Duration, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = provisionLikeServe(ctx, url, i)
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	return errs, took
}

// allUnavailable says every hub failed with JetStream still unavailable
// (the server's 503, err_code 10008).
func allUnavailable(errs []error) bool {
	for _, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "err_code=10008") {
			return false
		}
	}
	return true
}

// The reduced case of issue 25, side by side in one run: on a fresh
// three-node cluster three clients open one new R3 bucket with
// CreateOrUpdateKeyValue while three others open another with
// create-then-bind (EnsureKeyValue), each call bounded to 10 s. The
// create-then-bind calls must all succeed; the CreateOrUpdate outcomes are
// logged (BENCHMARKS.md, issue 25).
func TestCreateThenBindVersusCreateOrUpdateOnAColdCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three three-node clusters")
	}
	var couFailed, ctbFailed, calls int
	for round := range 3 {
		nodes := startNATSProcesses(t, 3)
		url := clusterURL(nodes)
		var wg sync.WaitGroup
		var mu sync.Mutex
		open := func(ensure bool, bucket string) {
			defer wg.Done()
			nc, err := nats.Connect(url)
			if err != nil {
				t.Error(err)
				return
			}
			defer nc.Close()
			j, _ := js.New(nc)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := ejs.WaitReady(ctx, j); err != nil {
				t.Error(err)
				return
			}
			cfg := js.KeyValueConfig{Bucket: bucket, Replicas: 3, Storage: js.FileStorage}
			start := time.Now()
			if ensure {
				_, err = ejs.EnsureKeyValue(ctx, j, cfg)
			} else {
				_, err = j.CreateOrUpdateKeyValue(ctx, cfg)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if ensure {
					ctbFailed++
				} else {
					couFailed++
				}
			}
			t.Logf("round %d %s: %v after %v", round+1, map[bool]string{true: "create-then-bind", false: "CreateOrUpdate"}[ensure], err, time.Since(start).Round(time.Millisecond))
		}
		for range 3 {
			wg.Add(2)
			go open(false, "cou")
			go open(true, "ctb")
		}
		wg.Wait()
		calls += 3
		for _, n := range nodes {
			n.stop()
		}
	}
	t.Logf("CreateOrUpdateKeyValue: %d of %d calls failed; create-then-bind: %d of %d", couFailed, calls, ctbFailed, calls)
	if ctbFailed > 0 {
		t.Fatalf("create-then-bind failed %d of %d calls", ctbFailed, calls)
	}
}
