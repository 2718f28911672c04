// Package ledger is the interchange ledger: it remembers, for a while, the
// interchanges the hub processed successfully, keyed by the partner they
// came from and the way their sender names them (sender, recipient,
// interchange control reference).
//
// Why it exists: a dead letter that an operator replays, or a partner's own
// retransmission, may carry an interchange that already went through. Server
// dedupe (Nats-Msg-Id) only knows message ids within a short window; the
// ledger knows interchanges for weeks, so the parse stage can ack such a
// message as a duplicate instead of booking an invoice twice. The partner
// is part of the key so that one partner cannot pre-empt another's control
// reference.
//
// Two stores satisfy Ledger:
//
//   - KVStore, a JetStream KV bucket (the default). Interchanges are
//     recorded in groups (Commit): the records of every interchange
//     committed while the server has two groups in hand go out together
//     as the next batch entry, $KV.<bucket>.gc.<id>, whose value holds one line
//     per interchange (the SHA-256 of its length-prefixed key, the time,
//     the message that recorded it). The hub commits when its stage has
//     rendered an interchange and awaits the commit with the PARSED
//     outputs, before it acks the original: no fsync and no stored message
//     of its own per interchange. Batch entries expire by the bucket's
//     MaxAge (the TTL).
//
//     Lookups are answered from an index: a store that is asked
//     reads the whole bucket once, then adds what it commits itself (it
//     does not follow the bucket, which would send each of its batches
//     back to it). That holds while one process writes a partition's
//     records: one hub, or several that own a partition one at a time. A
//     hub calls Forget each time the server pins a partition to it, and
//     its next lookup first reads what was stored since it last read
//     the bucket. Hubs on one cluster that name the same bucket share the
//     ledger. The subject carries no JetStream domain prefix. The index
//     is in memory, or with KVOptions.IndexFile in a local bbolt file
//     (diskindex.go) with in memory only what is not written yet: a
//     restarted store opens the file and reads only the bucket's messages
//     after the sequence it records (checkpoint.go). A damaged file is
//     moved aside and rebuilt from the bucket (damage.go).
//
//     Single entries, $KV.<bucket>.ix.<partner hash>.<sha256> with a
//     per-key TTL (Nats-TTL), are what earlier versions wrote and what a
//     migrated bbolt ledger becomes; the index reads them too.
//
//   - the bbolt file of earlier versions (ledger.db) is only read, by the
//     migration.
//
// Migration: MigrateBolt(path, kv) copies every unexpired entry of an old
// ledger.db into the bucket with its original time and its remaining TTL,
// never over a newer entry, then renames the file to ledger.db.migrated so
// that later starts migrate nothing (a missing file is fine; a failed
// migration leaves the file and can run again). Expired entries are not
// copied: the old store no longer saw them either.
//
// Legacy keys: entries written before keys had a partner carry none. They
// are stored under $KV.<bucket>.legacy.<sha256 of the 3-field key> (a
// 3-field encoding never equals a 4-field one), and the flag key
// meta.legacy-until holds the time the last of them expires. While it is
// in the future, a lookup that misses the partner's key also tries the
// partner-less one, so an interchange recorded before the upgrade is still
// a duplicate for whichever partner sends it again. The index reads the
// flag like any entry, so a migration by another hub is noticed.
//
// Each record names the message that recorded it (Commit, Duplicate):
// the same message delivered again after a partial failure is not its own
// duplicate, so outputs that were not all stored are published again.
//
// The package imports nothing of this module (nats.go's jetstream, and
// bbolt for the index file and the migration; its tests use
// jetstream/jetstreamtest). hub.LedgerKey is ledger.Key, and
// *KVStore is the hub's Ledger; app.New runs MigrateBolt once at start.
package ledger
