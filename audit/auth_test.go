package audit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

func testKeyring(t *testing.T, current string, older ...string) *Keyring {
	t.Helper()
	var old [][]byte
	for _, o := range older {
		old = append(old, []byte(strings.Repeat(o, 32)))
	}
	k, err := NewKeyring([]byte(strings.Repeat(current, 32)), old...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func appendWith(t *testing.T, a *Auditor, actions ...string) []Event {
	t.Helper()
	var out []Event
	for _, act := range actions {
		ev, err := a.Append(context.Background(), Event{Actor: "alice", Action: act, IDs: []string{"DLQ:1"}}, "")
		if err != nil {
			t.Fatalf("append %s: %v", act, err)
		}
		out = append(out, ev)
	}
	return out
}

func verifyWith(t *testing.T, j js.JetStream, stream string, k *Keyring) Verification {
	t.Helper()
	v, err := VerifyWith(context.Background(), j, stream, "", k)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// kinds renders the problems as "seq:kind" for comparison.
func kinds(v Verification) string {
	var s []string
	for _, p := range v.Problems {
		s = append(s, strings.Join([]string{itoa(p.Seq), p.Kind}, ":"))
	}
	return strings.Join(s, " ")
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func publishRaw(t *testing.T, j js.JetStream, subject string, data []byte) {
	t.Helper()
	if _, err := j.PublishMsg(context.Background(), &nats.Msg{Subject: subject, Data: data}); err != nil {
		t.Fatal(err)
	}
}

// One junk message on the audit subject used to make every later Append
// fail ("last audit event is not an event"), and a foreign JSON object made
// the next event chain onto "". Now both are skipped and named by verify.
func TestAppendSkipsForeignMessagesAndVerifyNamesThem(t *testing.T) {
	j, _ := scratchAudit(t, "AUDIT", "edi.audit.>")
	k := testKeyring(t, "k")
	appendWith(t, New(j, "AUDIT", WithKeyring(k)), "show", "park")
	publishRaw(t, j, "edi.audit.events", []byte("hello, not json"))
	publishRaw(t, j, "edi.audit.events", []byte(`{"hello":"world"}`))
	// A fresh auditor, as the next CLI run would be.
	appendWith(t, New(j, "AUDIT", WithKeyring(k)), "drop")
	appendWith(t, New(j, "AUDIT"), "show") // no keyring: the hash chain alone must still skip them
	v := verifyWith(t, j, "AUDIT", nil)
	if got := kinds(v); got != "3:unreadable 4:unreadable" {
		t.Fatalf("problems %q, want the two foreign messages only; %+v", got, v)
	}
	if v.Events != 4 || v.LastSeq != 6 || v.Authenticated || v.Note != NoKeyNote {
		t.Fatalf("verification %+v", v)
	}
}

// Anyone who can publish on the subject can compute a chained SHA-256; not
// the MAC. The forged event is named, and the hub's next event chains past it.
func TestVerifyNamesForgedEventsAndAppendersSkipThem(t *testing.T) {
	j, _ := scratchAudit(t, "AUDIT", "edi.audit.>")
	k := testKeyring(t, "k")
	hubAuditor := New(j, "AUDIT", WithKeyring(k))
	appendWith(t, hubAuditor, "show", "park")
	appendWith(t, New(j, "AUDIT"), "drop")                                     // 3: correctly chained, no MAC
	appendWith(t, New(j, "AUDIT", WithKeyring(testKeyring(t, "m"))), "replay") // 4: MAC with a key of its own
	// 5: copies event 2's kid and MAC onto new content, re-hashed.
	recs, err := Read(context.Background(), j, "AUDIT", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := recs[1].Event
	ev.Actor, ev.Prev = "mallory", recs[3].Event.Hash
	ev.Hash = ev.computeHash()
	b, _ := json.Marshal(ev)
	publishRaw(t, j, "edi.audit.events", b)
	appendWith(t, New(j, "AUDIT", WithKeyring(k)), "edit") // 6 chains onto 2

	v := verifyWith(t, j, "AUDIT", k)
	if got := kinds(v); got != "3:unauthenticated 4:forged 5:forged" {
		t.Fatalf("problems %q; %+v", got, v.Problems)
	}
	if v.OK || v.Events != 3 || v.LastSeq != 6 || !v.Authenticated {
		t.Fatalf("verification %+v", v)
	}
	// The same stream without the key: the chain alone accepts 3, 4 and 5
	// (that was the flaw), and says that nothing was authenticated.
	if v := verifyWith(t, j, "AUDIT", nil); v.Authenticated || v.Note != NoKeyNote {
		t.Fatalf("without the key: %+v", v)
	}
}

// Altered (re-hashed) and reordered events, in a rewritten copy of the
// stream (JetStream cannot change a message in place).
func TestVerifyNamesAlteredAndReorderedSignedEvents(t *testing.T) {
	j, _ := scratchAudit(t, "ORIG", "edi.audit.>")
	k := testKeyring(t, "k")
	evs := appendWith(t, New(j, "ORIG", WithKeyring(k)), "a", "b", "c", "d", "e")
	rewrite := func(stream string, order []int, f func(i int, ev *Event)) {
		if _, err := j.CreateStream(context.Background(), js.StreamConfig{Name: stream, Subjects: []string{"copy." + stream}}); err != nil {
			t.Fatal(err)
		}
		for _, i := range order {
			ev := evs[i]
			f(i, &ev)
			b, _ := json.Marshal(ev)
			publishRaw(t, j, "copy."+stream, b)
		}
	}
	all := []int{0, 1, 2, 3, 4}
	if v := verifyWith(t, j, "ORIG", k); !v.OK || v.Events != 5 || v.Legacy != 0 {
		t.Fatalf("intact signed chain: %+v", v)
	}
	// A careful attacker re-hashes event 3 and re-chains the rest: the MAC
	// gives it away (before MACs, only the re-chained hash was checked).
	rewrite("REHASHED", all, func(i int, ev *Event) {
		if i == 2 {
			ev.Reason = "nothing to see here"
			ev.Hash = ev.computeHash()
		}
	})
	if got := kinds(verifyWith(t, j, "REHASHED", k)); got != "3:forged 4:broken-link" {
		t.Fatalf("re-hashed event 3: %q", got)
	}
	rewrite("ALTERED", all, func(i int, ev *Event) {
		if i == 2 {
			ev.Actor = "mallory"
		}
	})
	if got := kinds(verifyWith(t, j, "ALTERED", k)); got != "3:altered" {
		t.Fatalf("altered event 3: %q", got)
	}
	rewrite("REORDERED", []int{0, 1, 3, 2, 4}, func(int, *Event) {})
	v := verifyWith(t, j, "REORDERED", k)
	if got := kinds(v); !strings.HasPrefix(got, "3:broken-link 4:broken-link") {
		t.Fatalf("events 3 and 4 swapped: %q", got)
	}
	if !strings.Contains(v.Problems[1].Detail, "it points to event") {
		t.Fatalf("detail: %s", v.Problems[1].Detail)
	}
}

// Rotation: events signed with the old key verify as long as it is in the
// keyring; without it they are named.
func TestKeyRotationKeepsOlderEventsVerifiable(t *testing.T) {
	j, _ := scratchAudit(t, "AUDIT", "edi.audit.>")
	appendWith(t, New(j, "AUDIT", WithKeyring(testKeyring(t, "a"))), "one", "two")
	rotated := testKeyring(t, "b", "a")
	evs := appendWith(t, New(j, "AUDIT", WithKeyring(rotated)), "three")
	if evs[0].KID != KeyID([]byte(strings.Repeat("b", 32))) {
		t.Fatalf("new events must use the current key, got kid %s", evs[0].KID)
	}
	if v := verifyWith(t, j, "AUDIT", rotated); !v.OK || v.Events != 3 {
		t.Fatalf("rotated keyring: %+v", v)
	}
	if got := kinds(verifyWith(t, j, "AUDIT", testKeyring(t, "b"))); got != "1:forged 2:forged 3:broken-link" {
		t.Fatalf("old key dropped: %q", got)
	}
}

// Events from before keys existed are legacy, not tampering; an unsigned
// event after signed ones is named.
func TestLegacyEventsAreReportedNotBlamed(t *testing.T) {
	j, _ := scratchAudit(t, "AUDIT", "edi.audit.>")
	appendWith(t, New(j, "AUDIT"), "old1", "old2")
	k := testKeyring(t, "k")
	appendWith(t, New(j, "AUDIT", WithKeyring(k)), "new1", "new2")
	v := verifyWith(t, j, "AUDIT", k)
	if !v.OK || v.Legacy != 2 || v.LegacyThrough != 2 || v.Events != 4 {
		t.Fatalf("legacy then signed: %+v", v)
	}
	appendWith(t, New(j, "AUDIT"), "keyless")
	if got := kinds(verifyWith(t, j, "AUDIT", k)); got != "5:unauthenticated" {
		t.Fatalf("unsigned after signed: %q", got)
	}
}

func TestKeyFileCreatedOwnerOnlyAndLooserModeRefused(t *testing.T) {
	dir := t.TempDir()
	noEnv := func(string) string { return "" }
	if _, err := LoadKeyring(dir, noEnv); err == nil || !strings.Contains(err.Error(), "no audit key") {
		t.Fatalf("no key yet: %v", err)
	}
	created, err := EnsureKeyFile(dir, noEnv)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	path := filepath.Join(dir, KeyFile)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", st.Mode(), err)
	}
	k1, err := LoadKeyring(dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := EnsureKeyFile(dir, noEnv); err != nil || created {
		t.Fatalf("second start must keep the key: %v %v", created, err)
	}
	if k2, _ := LoadKeyring(dir, noEnv); k2.CurrentID() != k1.CurrentID() {
		t.Fatal("key changed on the second start")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyring(dir, noEnv); err == nil || !strings.Contains(err.Error(), "mode 0644") || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("looser mode must be refused plainly: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Rotation on disk: the old key moves to audit.keys.d, a new one is made.
	if err := os.Mkdir(filepath.Join(dir, OldKeysDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, filepath.Join(dir, OldKeysDir, "2026-11")); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureKeyFile(dir, noEnv); err != nil {
		t.Fatal(err)
	}
	k3, err := LoadKeyring(dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if k3.CurrentID() == k1.CurrentID() || len(k3.IDs()) != 2 {
		t.Fatalf("rotated keyring: current %s, ids %v", k3.CurrentID(), k3.IDs())
	}
	// The environment wins over the files: current first, older after a comma.
	env := func(string) string { return strings.Repeat("ab", 32) + "," + strings.Repeat("cd", 32) }
	k4, err := LoadKeyring(dir, env)
	if err != nil || len(k4.IDs()) != 2 || k4.CurrentID() != KeyID([]byte(strings.Repeat("\xab", 32))) {
		t.Fatalf("from the environment: %v %v", k4, err)
	}
	if created, _ := EnsureKeyFile(t.TempDir(), env); created {
		t.Fatal("no file is created when the key comes from the environment")
	}
}

// A Signed auditor without a key appends nothing: the CLI never writes an
// unsigned event.
func TestSignedAuditorRefusesWithoutKey(t *testing.T) {
	j, _ := scratchAudit(t, "AUDIT", "edi.audit.>")
	if _, err := New(j, "AUDIT", Signed()).Append(context.Background(), Event{Actor: "a", Action: "drop"}, ""); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("append without a key: %v", err)
	}
	if _, err := New(j, "AUDIT", Signed(), WithKeyring(testKeyring(t, "k"))).Append(context.Background(), Event{Actor: "a", Action: "drop"}, ""); err != nil {
		t.Fatal(err)
	}
}
