package hub

import (
	"context"
	"errors"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// groupOf takes the ready messages behind a head up to the first that may
// not settle with it: one naming a record named before it (the copy of an
// interchange right behind its original), one whose recheck fails, one
// with an output outside PARSED, one with commits and no names.
func TestGroupOfStopsAtTheFirstThatMayNotJoin(t *testing.T) {
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", pipelineConfig(), []Stage{echoStage("parse", nil)}, nil)
	commit := func() func(context.Context) error { return func(context.Context) error { return nil } }
	msg := func(subject string, names ...string) *Message {
		m := &Message{}
		m.Emit(subject, nil, []byte("x"))
		if names != nil {
			m.CommitOnSuccess(commit)
			m.NameRecords(func() []string { return names })
		}
		return m
	}
	parsed := wire.ParsedSubject("ACME", "TEST")
	member := func(m *Message) *groupMember {
		return &groupMember{d: &delivery{origStream: "INGEST"}, m: m}
	}
	failing := msg(parsed, "k4")
	failing.RecheckAtSettle(func() error { return errors.New("a duplicate of what settled before") })
	unnamed := msg(parsed)
	unnamed.CommitOnSuccess(commit)
	for _, c := range []struct {
		name   string
		behind []*Message
		want   int
	}{
		{"all join", []*Message{msg(parsed, "k2"), msg(parsed, "k3")}, 2},
		{"a copy of the head", []*Message{msg(parsed, "k2"), msg(parsed, "k1"), msg(parsed, "k3")}, 1},
		{"a copy of one behind", []*Message{msg(parsed, "k2"), msg(parsed, "k2")}, 1},
		{"a recheck fails", []*Message{msg(parsed, "k2"), failing}, 1},
		{"an output outside PARSED", []*Message{msg("edi.other.ACME", "k2"), msg(parsed, "k3")}, 0},
		{"commits without names", []*Message{unnamed}, 0},
		{"no outputs", []*Message{{}}, 0},
	} {
		var ready []*groupMember
		for _, m := range c.behind {
			ready = append(ready, member(m))
		}
		if got := len(env.hub.groupOf(msg(parsed, "k1"), ready)); got != c.want {
			t.Errorf("%s: %d join, want %d", c.name, got, c.want)
		}
	}
	if got := env.hub.groupOf(msg("edi.other.ACME", "k1"), []*groupMember{member(msg(parsed, "k2"))}); got != nil {
		t.Errorf("a head with an output outside PARSED leads a group of %d", len(got))
	}
}

func TestGroupBatchFor(t *testing.T) {
	r1file := js.StreamConfig{Storage: js.FileStorage, Replicas: 1, AllowAtomicPublish: true, AllowBatchPublish: true}
	r1atomic := js.StreamConfig{Storage: js.FileStorage, Replicas: 1, AllowAtomicPublish: true}
	r3file := js.StreamConfig{Storage: js.FileStorage, Replicas: 3, AllowAtomicPublish: true, AllowBatchPublish: true}
	r3fast := js.StreamConfig{Storage: js.FileStorage, Replicas: 3, AllowBatchPublish: true}
	mem := js.StreamConfig{Storage: js.MemoryStorage, Replicas: 1, AllowAtomicPublish: true}
	closed := js.StreamConfig{Storage: js.FileStorage, Replicas: 3}
	full := r1file
	full.Discard, full.MaxBytes = js.DiscardNew, 1<<20 // a smaller message may fit after one refused
	fullMsgs := r1file
	fullMsgs.Discard, fullMsgs.MaxMsgs = js.DiscardNew, 10
	const now, v212, v211 = "2.15.2", "v2.12.1", "2.11.9"
	for _, c := range []struct {
		setting string
		stream  js.StreamConfig
		version string
		want    groupBatch
	}{
		{GroupSettleAuto, r1file, now, batchFast},
		{GroupSettleAlways, r1file, now, batchFast},
		{GroupSettleAuto, r1file, v212, batchNone}, // no fast batches before 2.14; atomic ones sync a file
		{GroupSettleAlways, r1file, v212, batchAtomic},
		{GroupSettleAuto, r1atomic, now, batchNone},
		{GroupSettleAlways, r1atomic, now, batchAtomic},
		{GroupSettleAuto, r3file, now, batchAtomic},
		{GroupSettleAuto, r3file, v211, batchNone},
		{GroupSettleAuto, r3fast, now, batchFast},
		{GroupSettleAuto, mem, now, batchAtomic},
		{GroupSettleAuto, closed, now, batchNone},
		{GroupSettleAlways, closed, now, batchNone},
		{GroupSettleOff, r3file, now, batchNone},
		{GroupSettleOff, r1file, now, batchNone},
		{GroupSettleAuto, full, now, batchNone},
		{GroupSettleAlways, full, now, batchAtomic},
		{GroupSettleAuto, fullMsgs, now, batchNone},
	} {
		if got, why := groupBatchFor(c.setting, c.stream, c.version); got != c.want || (got == batchNone) != (why != "") {
			t.Errorf("%s on %+v, server %s: %v (%q), want %v", c.setting, c.stream, c.version, got, why, c.want)
		}
	}
}
