// Package ledger is the interchange ledger: it remembers, for a while, the
// interchanges the hub processed successfully, keyed the way their sender
// names them (sender, recipient, interchange control reference).
//
// Why it exists: a dead letter that an operator replays, or a partner's own
// retransmission, may carry an interchange that already went through. Server
// dedupe (Nats-Msg-Id) only knows message ids within a short window; the
// ledger knows interchanges for weeks, so the parse stage can ack such a
// message as a duplicate instead of booking an invoice twice.
//
// The store is a bbolt file in the data folder. Entries expire after a TTL
// (30 days by default): Seen ignores expired entries at once, Purge removes
// them from the file. The package imports nothing of this module; hub adapts
// it through hub.LedgerFuncs (Key converts to and from hub.LedgerKey, since
// both have the same fields).
package ledger
