package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestParseMsgRef(t *testing.T) {
	ref, err := ParseMsgRef(" dlq:42 ", "DLQ", "PARKING")
	if err != nil || ref != (MsgRef{Stream: "DLQ", Seq: 42}) || ref.String() != "DLQ:42" || RefOfKVKey(ref.KVKey()) != "DLQ:42" {
		t.Fatalf("%+v %v", ref, err)
	}
	for _, bad := range []string{"DLQ", "DLQ:0", "DLQ:x", "INGEST:1", "\x1b[2J:1"} {
		if _, err := ParseMsgRef(bad, "DLQ", "PARKING"); !errors.Is(err, ErrBadID) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for in, want := range map[string]uint64{"POISON:7": 7, "poison:8": 8, "9": 9} {
		if got, err := ParsePoisonID(in); err != nil || got != want {
			t.Errorf("%q: %d %v", in, got, err)
		}
	}
	if _, err := ParsePoisonID("DLQ:1"); !errors.Is(err, ErrBadID) {
		t.Errorf("DLQ:1 as a poison ID: %v", err)
	}
}

func TestSubjectsRoundTrip(t *testing.T) {
	if p, partner, ok := ParseIngestSubject("edi.ingest.3.ACME"); !ok || p != 3 || partner != "ACME" {
		t.Fatalf("ingest: %d %q %v", p, partner, ok)
	}
	for _, bad := range []string{"edi.ingest.ACME", "edi.ingest.x.ACME", "edi.ingest.3.A.B", "edi.ingest.3."} {
		if _, _, ok := ParseIngestSubject(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	if stage, cause, ok := ParseDLQSubject(DLQSubject("parse", CauseSchema)); !ok || stage != "parse" || cause != CauseSchema {
		t.Fatalf("dlq: %q %q", stage, cause)
	}
	if stage, ok := ParsePoisonSubject(PoisonSubject("parse")); !ok || stage != "parse" {
		t.Fatalf("poison: %q", stage)
	}
	if stage, ok := ParseParkingSubject(ParkingSubject("parse")); !ok || stage != "parse" {
		t.Fatalf("parking: %q", stage)
	}
	if p, ok := PartnerOfTopic(IngestSubject("ACME")); !ok || p != "ACME" {
		t.Fatalf("topic: %q", p)
	}
	if PartitionOf("ACME", 8) != PartitionOf("ACME", 8) || SubjectToken("IN.V*>") != "IN_V__" {
		t.Fatal("partition or token")
	}
}

func TestValidPartnerID(t *testing.T) {
	for _, ok := range []string{"ACME", "acme-1_2", "A"} {
		if err := ValidPartnerID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	long := make([]byte, MaxPartnerIDLen+1)
	for i := range long {
		long[i] = 'A'
	}
	for _, bad := range []string{"", "AC ME", "AC.ME", "A*", "A>", "\x1b", "é", "$SYS", string(long)} {
		if err := ValidPartnerID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A signed file is another message than the same bytes unsigned; the same
// signature (Ed25519 is deterministic) keeps a re-send a duplicate.
func TestSignedSendMsgID(t *testing.T) {
	data := []byte("UNB+UNOC:3+S+R'")
	plain := SendMsgID("ACME", data)
	signed := SignedSendMsgID("ACME", data, "ed25519:AAAA")
	if signed == plain || !strings.HasPrefix(signed, plain+":sig:") {
		t.Fatalf("signed id %q, plain %q", signed, plain)
	}
	if SignedSendMsgID("ACME", data, "ed25519:AAAA") != signed || SignedSendMsgID("ACME", data, "ed25519:BBBB") == signed {
		t.Fatal("the id must follow the signature, and only it")
	}
}
