package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/hub"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// The bench's NATS: one embedded server, or three in one cluster with
// every stream and bucket R3 (--replicas 3), and the hub configuration
// and attempt store that go with it.

// bench is one embedded server, or a cluster of three, with the hub's
// streams.
type bench struct {
	dir        string
	partitions int
	replicas   int    // of every stream and bucket: 1, or 3 on three nodes
	partners   int    // stage parse: the fill's partners
	pipeline   int    // stage parse: --pipeline (0: not given)
	groups     string // stage parse: --group-settle ("": the default)
	nodes      []*server.Server
	url        string // every node's client URL, comma separated
	nc         *nats.Conn
	js         js.JetStream
	round      int
	log        zerolog.Logger // warnings of the hubs under test
	stores     []io.Closer    // the attempt stores of the hubs run
	// stallDir (--stall-dump) receives goroutine and consumer dumps of
	// runs that stop making progress; stalls counts them.
	stallDir string
	stalls   atomic.Int64
	stallSeq atomic.Int64
	// pullErrors counts errors the plain consumers' Next returned (a
	// missed heartbeat, a status) and went on after.
	pullErrors atomic.Int64
}

// newBench starts the bench's NATS in a temp folder: one embedded server
// (replicas 1) or three in one cluster, every stream and bucket then R3.
func newBench(ctx context.Context, partitions, replicas int) (*bench, error) {
	dir, err := os.MkdirTemp("", "edihub-bench")
	if err != nil {
		return nil, err
	}
	b := &bench{dir: dir, partitions: partitions, replicas: max(replicas, 1)}
	if b.replicas == 1 {
		srv, err := ejs.StartServer(&ejs.ServerOptions{DataDir: dir, Listen: "127.0.0.1:-1"})
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		b.nodes, b.url = []*server.Server{srv}, srv.ClientURL()
	} else {
		dirs := make([]string, b.replicas)
		for i := range dirs {
			dirs[i] = filepath.Join(dir, fmt.Sprintf("node-%d", i+1))
		}
		if b.nodes, b.url, err = ejs.StartLocalCluster("bench", dirs); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if b.nc, b.js, err = ejs.Connect(b.url, "edihub-bench"); err != nil {
		ejs.ShutdownAll(b.nodes)
		os.RemoveAll(dir)
		return nil, err
	}
	if b.replicas > 1 {
		// As serve waits: a cluster just started answers "temporarily
		// unavailable", then places no replicated stream until its peers
		// are known.
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		err := ejs.WaitReady(wctx, b.js)
		if err == nil {
			err = ejs.CheckReplicas(b.nc, b.replicas)
		}
		if err == nil {
			err = ejs.WaitStream(wctx, b.js, readyzStreamConfig(b.replicas))
		}
		if err != nil {
			b.close()
			return nil, fmt.Errorf("the three-node cluster: %w", err)
		}
	}
	return b, nil
}

func (b *bench) close() {
	for _, s := range b.stores {
		s.Close()
	}
	b.nc.Close()
	ejs.ShutdownAll(b.nodes)
	os.RemoveAll(b.dir)
}

// where says what NATS the bench runs on, for its progress lines.
func (b *bench) where() string {
	if b.replicas == 1 {
		return "embedded NATS in " + b.dir
	}
	return fmt.Sprintf("%d embedded NATS nodes in one cluster, every stream and bucket R%d, in %s", len(b.nodes), b.replicas, b.dir)
}

// config is the hub config of a bench run; defaults but for partitions.
func (b *bench) config() hub.Config {
	c := hub.Config{Partitions: b.partitions}
	c.Alerts.Sinks = []string{}
	if b.replicas > 1 { // as serve on a cluster: partitions owned through pinned clients
		pinned := true
		c.Cluster.Replicas, c.Cluster.Pinned = b.replicas, &pinned
	}
	return c
}

// attemptStore is a fresh bbolt attempt store on one server; on a cluster
// the replicated KV one serve uses there (counter.store kv).
func (b *bench) attemptStore(cfg hub.Config) (attemptStore, error) {
	if b.replicas > 1 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return counter.OpenKV(ctx, b.js, &counter.KVOptions{Replicas: b.replicas, Attempt: ejs.OutputAttempt})
	}
	return counter.Open(filepath.Join(b.dir, fmt.Sprintf("counter-%d.db", b.round)), &counter.Options{Writers: cfg.Partitions + 1})
}

// The parse bench on a cluster (--replicas 3) keeps the hub's partition
// consumers from one side to the next, created once before the first
// round, where one server deletes them for every side. A consumer just
// created on a cluster answers no consumer list until its leader is
// elected, and the server holds a list with a missing consumer up to 4 s;
// every partition lists INGEST's consumers (its parked partners) before it
// pulls, so a hub that created its partitions' consumers afresh started
// most of them 3-4 s after the first: start-up, charged to the drain.
// Every side refills INGEST after a purge, so a kept consumer has nothing
// of the last side left to read.

// warmConsumers runs a hub on the empty INGEST until its consumers exist
// and all answer a consumer list, then stops it.
func (b *bench) warmConsumers(ctx context.Context) error {
	h, _, err := b.newHub(b.config(), nil)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- h.Run(rctx) }()
	for !h.Ready() {
		select {
		case err := <-errc:
			return fmt.Errorf("warm-up hub stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	err = b.awaitConsumers(ctx)
	cancel()
	<-errc
	return err
}

// awaitConsumers waits until every consumer of INGEST answers a consumer
// list, up to a minute.
func (b *bench) awaitConsumers(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := b.consumersAnswer(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the consumers of INGEST did not all answer in a minute: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// consumersAnswer asks the server for INGEST's consumer list, as the
// hub's partitions do, and says which did not answer. nats.go's lister
// drops the server's list of missing consumers; this reads it.
func (b *bench) consumersAnswer(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := b.nc.RequestWithContext(rctx, "$JS.API.CONSUMER.LIST."+wire.DefaultIngestStream, []byte(`{"offset":0}`))
	if err != nil {
		return fmt.Errorf("consumer list: %w", err)
	}
	var resp struct {
		Total     int               `json:"total"`
		Consumers []json.RawMessage `json:"consumers"`
		Missing   []string          `json:"missing"`
		Error     *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return fmt.Errorf("consumer list: %w", err)
	}
	switch {
	case resp.Error != nil:
		return errors.New("consumer list: " + resp.Error.Description)
	case len(resp.Missing) > 0:
		return fmt.Errorf("consumer list: %v missing", resp.Missing)
	case resp.Total == 0:
		return errors.New("consumer list: no consumers yet")
	}
	return nil
}

// resetParseConsumers readies INGEST for the next hub side: on one server
// resetIngestConsumers; on a cluster the parks only, and the partitions'
// pins released (the last hub that held them is gone; a pin outlives its
// client by hub.cluster.pinned_ttl, and the next hub's pulls would be
// refused until then), then it waits until every consumer answers a list,
// so that nothing the last side left behind holds the next hub's first
// lists. (A park a partition creates while another starts still can: then
// that partition starts up to 4 s late, as a hub on a cluster does.)
func (b *bench) resetParseConsumers(ctx context.Context) error {
	if b.replicas == 1 {
		b.resetIngestConsumers(ctx)
		return nil
	}
	b.deleteParks(ctx)
	st, err := b.js.Stream(ctx, wire.DefaultIngestStream)
	if err != nil {
		return err
	}
	for p := 0; p < b.partitions; p++ {
		name := fmt.Sprintf("ingest-p%d", p)
		c, err := st.Consumer(ctx, name)
		if err != nil {
			return fmt.Errorf("consumer %s: %w", name, err)
		}
		for _, g := range c.CachedInfo().PriorityGroups {
			if g.Group == wire.PartitionGroup && g.PinnedClientID != "" {
				if err := st.UnpinConsumer(ctx, name, wire.PartitionGroup); err != nil {
					return fmt.Errorf("unpin %s: %w", name, err)
				}
			}
		}
	}
	return b.awaitConsumers(ctx)
}
