package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/edihub/edihub/wire"
)

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
