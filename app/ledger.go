package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/ledger"
)

// registerLedgerMetrics shows how the ledger's group commit groups (the
// interchanges recorded and the batch entries they went into) and what
// its index holds.
func registerLedgerMetrics(reg prometheus.Registerer, ls *ledger.KVStore) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edihub_ledger_recorded_interchanges_total",
			Help: "Interchanges recorded in the ledger by this process."},
			func() float64 { n, _ := ls.CommitStats(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edihub_ledger_batch_entries_total",
			Help: "Batch entries the ledger wrote (one per group of interchanges committed together)."},
			func() float64 { _, g := ls.CommitStats(); return float64(g) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edihub_ledger_index_interchanges",
			Help: "Interchanges the ledger's index holds, in its file in the data folder and in memory (expired ones until its next write)."},
			func() float64 { return float64(ls.Indexed()) }),
	)
	for _, reason := range ledger.RebuildReasons {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edihub_ledger_index_rebuilds_total",
			Help:        "Times the ledger's index file (data/ledger-index.db) was found unusable and replaced by one rebuilt from the bucket, by reason: stale (another bucket or stream, a newer format), open, check, lookup, write (damaged: kept as ledger-index.db.damaged-<time>; damaged again within 10 min of a rebuild, the index stays in memory until a restart).",
			ConstLabels: prometheus.Labels{"reason": reason}},
			func() float64 { return float64(ls.IndexRebuilds(reason)) }))
	}
}

// openLedger opens the interchange ledger on its KV bucket (entries expire
// by their own TTL: nothing to purge) and, once, moves the entries of a
// ledger.db from before into it. Nil when disabled.
func openLedger(ctx context.Context, j js.JetStream, cfg *Config, log zerolog.Logger) (*ledger.KVStore, error) {
	if cfg.Ledger.Disabled {
		return nil, nil
	}
	log = log.With().Str("component", "ledger").Logger()
	ls, err := ledger.OpenKV(ctx, j, &ledger.KVOptions{Bucket: cfg.Ledger.Bucket, TTL: cfg.Ledger.TTL, Replicas: cfg.Ledger.Replicas,
		IndexFile: filepath.Join(cfg.DataDir, ledgerIndexFile), CommitTimeout: cfg.Hub.Cluster.OutputAttempt(), Log: log})
	if err != nil {
		return nil, err
	}
	// the whole-index checkpoint of the version before; the index file
	// replaces it (a missing one is fine)
	_ = os.Remove(filepath.Join(cfg.DataDir, "ledger.index"))
	old := filepath.Join(cfg.DataDir, "ledger.db")
	n, err := ledger.MigrateBolt(old, ls)
	if err != nil {
		return nil, fmt.Errorf("move %s into the ledger bucket (nothing was lost; the file stays and the move runs again at the next start): %w", old, err)
	}
	if n > 0 {
		log.Info().Int("interchanges", n).Str("from", old).Str("bucket", ls.Bucket()).Msg("ledger moved into its KV bucket; the file was renamed to ledger.db.migrated")
	}
	return ls, nil
}

// ledgerIndexFile, in the data folder, is the ledger's index on disk (a
// bbolt file): a restart opens it and reads only what the bucket stored
// after its last checkpoint.
const ledgerIndexFile = "ledger-index.db"

// ledgerCheckpointEvery bounds what a restart after kill -9 reads of the
// bucket: the interchanges of the last minute, not the ledger's history.
// A checkpoint reads back the bucket since the last one and writes what
// the index holds in memory (one bbolt transaction).
const ledgerCheckpointEvery = time.Minute

// checkpointLedger checkpoints the ledger's index file every
// ledgerCheckpointEvery and once more when ctx ends (a clean stop: the
// next start reads nothing of the bucket it knew).
func checkpointLedger(ctx context.Context, ls *ledger.KVStore, log zerolog.Logger) {
	log = log.With().Str("component", "ledger").Logger()
	save := func(ctx context.Context) {
		start := time.Now()
		if err := ls.Checkpoint(ctx); err != nil {
			log.Warn().Err(err).Msg("ledger checkpoint not written; the index keeps it in memory and a restart reads more of the bucket")
			return
		}
		log.Debug().Dur("took", time.Since(start)).Msg("ledger checkpoint written")
	}
	t := time.NewTicker(ledgerCheckpointEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			save(context.WithoutCancel(ctx))
			return
		case <-t.C:
			save(ctx)
		}
	}
}
