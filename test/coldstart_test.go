package test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/alert"
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
			for i, err := range errs {
				if err != nil {
					t.Errorf("hub %d: %v (after %s)", i, err, took[i].Round(time.Millisecond))
				}
			}
			t.Logf("round %d: provisioned in %v", round+1, took)
		})
	}
}
