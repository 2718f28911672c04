// Package lanes is what one partition of the hub holds in hand: its
// delivered messages in one lane per partner, each lane in stream order.
// It owns the decisions about them: which partner's head runs next (fair
// across partners, one partner's messages strictly in order), the
// pipeline turns within a partner (a run ahead waits for the one before,
// and is discarded and put back when that one stays in the consumer), a
// nak'd head its lane waits for (and when it is late), the barrier that
// holds every lane after a start, a reconnect or a pin move until what the
// consumer had out is back in hand, the counting of what is back
// (awaitBack, also a park drain's DrainHold), what a paused or spilled
// partner's park takes out and hands in, and the progress due to those
// waiting.
//
// It has no NATS in it beyond the jetstream.Msg handles it keeps and
// hands back (it never acks, naks or asks the server anything: package hub
// does, with what these decisions return), and its decisions are
// table-tested. A group member waiting at its turn is opaque here
// (Turn.Ready, Turn.ReadyBehind): the group settle is the hub's.
//
// It may import nothing of the module; package hub imports it, never the
// other way round; test/arch_test.go checks it.
package lanes
