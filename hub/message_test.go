package hub

import (
	"testing"

	"github.com/nats-io/nats.go"
)

// EmitAll takes the caller's outputs without copying them; an Emit after
// it appends to a copy, never into the caller's array.
func TestEmitAllTakesTheOutputs(t *testing.T) {
	outs := make([]*nats.Msg, 1, 4)
	outs[0] = &nats.Msg{Subject: "a"}
	var m Message
	m.EmitAll(outs)
	if len(m.Outputs()) != 1 || m.Outputs()[0] != outs[0] {
		t.Fatalf("outputs %v", m.Outputs())
	}
	m.Emit("b", nil, nil)
	if got := outs[:2][1]; got != nil {
		t.Fatalf("Emit wrote into the caller's array: %v", got.Subject)
	}
	m.EmitAll([]*nats.Msg{{Subject: "c"}})
	if s := m.Outputs(); len(s) != 3 || s[1].Subject != "b" || s[2].Subject != "c" {
		t.Fatalf("outputs %d", len(s))
	}
	m.DropOutputs()
	m.EmitAll(nil)
	if len(m.Outputs()) != 0 {
		t.Fatal("EmitAll(nil) queued an output")
	}
}
