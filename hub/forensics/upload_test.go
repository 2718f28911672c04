package forensics

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/drill"
	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/hubtest"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// A quarantined upload (its copy is the announcement) is analysed by the
// real child on the upload's bytes: taken by the hub (from the payload
// bucket) or not yet (from the partner's chunks, left in place); the
// report's payload is those bytes and says where they came from. Over
// the partner's max_size, or gone (no object, no chunk: expired), no
// child runs and the report says why, its payload the announcement. A
// drill's x-hub-mac, made over the announcement, still verifies.
//
// Only the hub's own copy (x-hub-mac v2) is read: a copy someone else
// published on the poison subject naming partner BETA's upload (no MAC,
// or a MAC the hub made over another copy's headers) reads nothing of
// BETA's, and neither does a copy of an older hub (v1, which does not
// cover the partner or the upload headers): payload-unavailable, the
// report, its fields and its audit event say why.
func TestQuarantinedUploadAnalysedOnItsBytes(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	edi := parse.Config{Partners: map[string]edifact.PartnerConfig{"SMALL": {MaxSize: 64}}}
	env := startForensics(t, url, fastForensicsConfig(), func(o *Options) { o.EDIFACT = edi })
	provisionPoison(t, env.js)
	ctx := context.Background()
	payloads, err := claimcheck.Open(ctx, env.js, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	uploads, err := claimcheck.OpenUploads(ctx, env.js, payloads, claimcheck.UploadsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	upload := func(partner string, data []byte) (nats.Header, string) {
		t.Helper()
		sum := audit.PayloadHash(data)
		for i, part := range [][]byte{data[:len(data)/2], data[len(data)/2:]} {
			m := &nats.Msg{Subject: wire.UploadSubject(partner, sum), Data: part, Header: nats.Header{wire.HdrUploadChunk: {strconv.Itoa(i)}, wire.HdrUploadSHA256: {sum}}}
			if _, err := env.js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		return nats.Header{wire.HdrUploadSHA256: {sum}, wire.HdrUploadSize: {strconv.Itoa(len(data))}}, sum
	}
	stub := func(h nats.Header) string {
		n, _ := strconv.ParseInt(h.Get(wire.HdrUploadSize), 10, 64)
		return string(wire.UploadStub(wire.Upload{SHA256: h.Get(wire.HdrUploadSHA256), Size: n}))
	}

	// taken by the hub: a broken envelope, reproduced on the real bytes
	broken := []byte(strings.Replace(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "UPBRK1"), "UNT+3+1", "UNT+7+1", 1))
	takenHdr, takenSum := upload("ACME", broken)
	if _, err := uploads.Resolve(ctx, "ACME", takenHdr, 1<<20); err != nil {
		t.Fatal(err)
	}
	// not taken yet (the hub died reading it): read from the chunks; a
	// signed drill on the announcement is reproduced
	fine := []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "UPFINE1"))
	chunkHdr, _ := upload("ACME", fine)
	drilled := nats.Header{}
	for k, v := range chunkHdr {
		drilled[k] = v
	}
	drilled.Set(wire.HdrDrill, drill.Panic)
	drilled.Set(wire.HdrDrillMode, "on")
	drilled.Set(wire.HdrHubMAC, signAsHub)
	// over SMALL's max_size (64 bytes)
	smallHdr, _ := upload("SMALL", fine)
	// gone: announced, its chunks expired (none on the subject, no object)
	goneSum := audit.PayloadHash([]byte("expired before the hub took it"))
	goneHdr := nats.Header{wire.HdrUploadSHA256: {goneSum}, wire.HdrUploadSize: {"30"}}
	// BETA's uploads, one taken by the hub and one still in chunks, that
	// forged copies name
	secret := []byte(strings.Replace(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "BETA01"), "UNT+3+1", "UNT+8+1", 1))
	betaTaken, _ := upload("BETA", secret)
	if _, err := uploads.Resolve(ctx, "BETA", betaTaken, 1<<20); err != nil {
		t.Fatal(err)
	}
	betaChunks, _ := upload("BETA", []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "BETA02")))
	// a MAC the hub made over another copy (ACME's, another sequence)
	other := nats.Header{wire.HdrOriginalStream: {"INGEST"}, wire.HdrOriginalSeq: {"1"}, wire.HdrPartnerID: {"ACME"}}
	for k, v := range betaTaken {
		other[k] = v
	}
	audit.SignCopy(testCopyKeys, other, []byte(stub(betaTaken)))
	mac := func(h nats.Header, v string) nats.Header {
		out := nats.Header{wire.HdrHubMAC: {v}}
		for k, vs := range h {
			out[k] = vs
		}
		return out
	}
	notRead := func(why string) func(t *testing.T, r *Report) {
		return func(t *testing.T, r *Report) {
			t.Helper()
			if r.Upload == nil || !r.Upload.Untrusted || r.Upload.From != "" || !strings.Contains(r.Upload.Error, why) ||
				!strings.Contains(r.Sandbox.Summary, why) || !strings.Contains(r.Verdict, "the upload was not read") {
				t.Errorf("upload %+v, summary %q, verdict %q", r.Upload, r.Sandbox.Summary, r.Verdict)
			}
		}
	}

	cases := []struct {
		name, partner string
		hdr           nats.Header
		want          sandbox.Outcome
		payload       []byte // stored as the report's payload
		check         func(t *testing.T, r *Report)
	}{
		{"taken upload", "ACME", mac(takenHdr, signAsHub), sandbox.OutcomeReproducedError, broken, func(t *testing.T, r *Report) {
			if r.Upload == nil || r.Upload.From != wire.DefaultPayloadBucket+"/"+wire.UploadObject("ACME", takenSum) || r.Upload.Error != "" {
				t.Errorf("upload %+v", r.Upload)
			}
			if !strings.Contains(r.Sandbox.Error, "UNT") || r.Sandbox.Progress.Segment != 4 || r.Sandbox.PayloadBytes != len(broken) {
				t.Errorf("analysed %d bytes: error %q at %+v, want the upload's UNT", r.Sandbox.PayloadBytes, r.Sandbox.Error, r.Sandbox.Progress)
			}
			if r.HubMAC != "v2" || !hasField(r, "copy: the hub's (x-hub-mac v2 verified") {
				t.Errorf("hub_mac %q (%s), fields %v", r.HubMAC, r.HubMACError, r.Fields())
			}
		}},
		{"upload still in chunks, drill", "ACME", drilled, sandbox.OutcomePanic, fine, func(t *testing.T, r *Report) {
			if r.Upload == nil || r.Upload.From != wire.DefaultUploadStream+" "+wire.UploadStoredSubject("ACME") {
				t.Errorf("upload %+v", r.Upload)
			}
			if r.Sandbox.PanicValue != "drill: panic on purpose" {
				t.Errorf("the hub's signed drill on the announcement was not reproduced: panic %q, notes %q", r.Sandbox.PanicValue, r.Sandbox.Notes)
			}
		}},
		{"upload over max_size", "SMALL", mac(smallHdr, signAsHub), OutcomePayloadUnavailable, []byte(stub(smallHdr)), func(t *testing.T, r *Report) {
			if r.Upload == nil || !strings.Contains(r.Upload.Error, "over parse.max_size (64 bytes)") || r.Upload.Gone {
				t.Errorf("upload %+v", r.Upload)
			}
		}},
		{"upload gone", "ACME", mac(goneHdr, signAsHub), OutcomePayloadUnavailable, []byte(stub(goneHdr)), func(t *testing.T, r *Report) {
			if r.Upload == nil || !r.Upload.Gone || !strings.Contains(r.Sandbox.Summary, "expired after hub.claim_check.upload_ttl") ||
				!strings.Contains(r.Verdict, "bytes are gone") {
				t.Errorf("upload %+v, summary %q, verdict %q", r.Upload, r.Sandbox.Summary, r.Verdict)
			}
			var fields []string
			for _, f := range r.Fields() {
				fields = append(fields, f.Name+": "+f.Value)
			}
			if all := strings.Join(fields, "\n"); !strings.Contains(all, "upload: the copy announces upload "+goneSum) || strings.Contains(all, "resources:") {
				t.Errorf("fields:\n%s", all)
			}
		}},
		{"forged copy naming BETA's taken upload, no MAC", "BETA", betaTaken, OutcomePayloadUnavailable, []byte(stub(betaTaken)),
			func(t *testing.T, r *Report) {
				notRead("not read: the copy is not the hub's (the copy carries no x-hub-mac)")(t, r)
				if r.HubMAC != "" || !hasField(r, "copy: not shown to be the hub's (the copy carries no x-hub-mac)") {
					t.Errorf("hub_mac %q, fields %v", r.HubMAC, r.Fields())
				}
			}},
		{"forged copy naming BETA's chunks, another copy's MAC", "BETA", mac(betaChunks, other.Get(wire.HdrHubMAC)), OutcomePayloadUnavailable,
			[]byte(stub(betaChunks)), notRead("not read: the copy is not the hub's (x-hub-mac: MAC does not match")},
		{"older hub's copy (v1)", "ACME", mac(chunkHdr, signAsOldHub), OutcomePayloadUnavailable, []byte(stub(chunkHdr)), func(t *testing.T, r *Report) {
			notRead("not read: the copy's x-hub-mac is the older v1 format, which does not cover its partner or upload headers")(t, r)
			if r.HubMAC != "v1" || !hasField(r, "copy: the hub's, older format (x-hub-mac v1 verified") {
				t.Errorf("hub_mac %q (%s), fields %v", r.HubMAC, r.HubMACError, r.Fields())
			}
		}},
	}
	seqs := make([]uint64, len(cases))
	for i, c := range cases {
		seqs[i] = publishPoison(t, env.js, "parse", c.partner, stub(c.hdr), c.hdr)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := waitReport(t, env.store, seqs[i], 60*time.Second)
			if r.Sandbox.Outcome != c.want {
				t.Fatalf("outcome %q, want %q: %s\nstderr: %.3000s", r.Sandbox.Outcome, c.want, r.Sandbox.Summary, r.Sandbox.Stderr)
			}
			c.check(t, r)
			payload, err := env.store.Payload(ctx, r)
			if err != nil || !bytes.Equal(payload, c.payload) || r.PayloadSHA256 != audit.PayloadHash(c.payload) || r.PayloadBytes != len(c.payload) {
				t.Fatalf("stored payload %q (%v), report says %d bytes %s; want %q", payload, err, r.PayloadBytes, r.PayloadSHA256, c.payload)
			}
		})
	}
	if n := jetstreamtest.CountMsgs(t, env.js, wire.DefaultUploadStream); n != 6 {
		t.Errorf("the upload stream holds %d chunks, want the 6 not taken: the worker takes nothing", n)
	}
	// the audit event of a report on a forged copy says the copy is not the hub's
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		for _, m := range jetstreamtest.StreamMsgs(t, env.js, "AUDIT") {
			var ev audit.Event
			if json.Unmarshal(m.Data, &ev) == nil && ev.Action == "forensic-report" && slices.Contains(ev.IDs, wire.PoisonID(seqs[4])) {
				if ev.Details["hub_mac"] != "none: the copy carries no x-hub-mac" || ev.Reason != string(OutcomePayloadUnavailable) {
					t.Fatalf("audit event %+v", ev)
				}
				return true
			}
		}
		return false
	})
	// a re-analysis of a forged copy still reads nothing
	r, err := env.f.Reanalyse(ctx, wire.PoisonID(seqs[5]))
	if err != nil || r.Sandbox.Outcome != OutcomePayloadUnavailable || !r.Upload.Untrusted || r.Upload.From != "" {
		t.Fatalf("reanalyse the forged copy: %+v %v", r, err)
	}
	// a re-analysis of the gone one looks again and says the same
	r, err = env.f.Reanalyse(ctx, wire.PoisonID(seqs[3]))
	if err != nil || r.Sandbox.Outcome != OutcomePayloadUnavailable || r.Analyses != 2 || !r.Upload.Gone {
		t.Fatalf("reanalyse the gone upload: %+v %v", r, err)
	}
	// a re-analysis of the taken one runs on the stored bytes again
	if r, err = env.f.Reanalyse(ctx, wire.PoisonID(seqs[0])); err != nil || r.Sandbox.Outcome != sandbox.OutcomeReproducedError || r.PayloadSHA256 != takenSum {
		t.Fatalf("reanalyse the taken upload: %+v %v", r, err)
	}
}

func hasField(r *Report, prefix string) bool {
	for _, f := range r.Fields() {
		if strings.HasPrefix(f.Name+": "+f.Value, prefix) {
			return true
		}
	}
	return false
}

// A worker without the audit key (embedded use; `edihub sandbox` without
// the hub's --data warns) cannot tell the hub's copies from forged ones:
// it reads no upload at all, also for the hub's own signed copy, and says
// why; the same copy is read by a worker that has the key.
func TestUploadNotReadWithoutAuditKey(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	nc, j, err := ejs.Connect(url, "forensics-nokey-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	data := []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "NOKEY1"))
	sum := audit.PayloadHash(data)
	if _, err := claimcheck.OpenUploads(ctx, j, nil, claimcheck.UploadsConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.PublishMsg(ctx, &nats.Msg{Subject: wire.UploadSubject("ACME", sum), Data: data,
		Header: nats.Header{wire.HdrUploadChunk: {"0"}, wire.HdrUploadSHA256: {sum}}}); err != nil {
		t.Fatal(err)
	}
	up := wire.Upload{SHA256: sum, Size: int64(len(data))}
	h := nats.Header{wire.HdrOriginalStream: {"INGEST"}, wire.HdrOriginalSeq: {"3"}, wire.HdrPartnerID: {"ACME"}, wire.HdrStage: {"parse"},
		wire.HdrUploadSHA256: {sum}, wire.HdrUploadSize: {strconv.Itoa(len(data))}}
	stub := wire.UploadStub(up)
	audit.SignCopy(testCopyKeys, h, stub)
	for _, c := range []struct {
		name string
		keys *audit.Keyring
		read bool
	}{{"no key", nil, false}, {"the hub's key", testCopyKeys, true}} {
		t.Run(c.name, func(t *testing.T) {
			f, err := New(Options{Conn: nc, Keyring: c.keys, Spec: testForensicSpec(t)})
			if err != nil {
				t.Fatal(err)
			}
			r := reportFromPoison("POISON", 1, wire.PoisonSubject("parse"), h, stub)
			f.checkCopy(r, stub)
			payload, unreadable, err := f.realPayload(ctx, r, stub)
			if err != nil {
				t.Fatal(err)
			}
			if c.read {
				if unreadable || !bytes.Equal(payload, data) || r.HubMAC != "v2" {
					t.Fatalf("the keyed worker did not read the hub's copy: %q, upload %+v", payload, r.Upload)
				}
				return
			}
			if !unreadable || !bytes.Equal(payload, stub) || !r.Upload.Untrusted || r.Upload.From != "" ||
				!strings.Contains(r.Upload.Error, "not read: this worker has no audit key") || r.HubMACError != "no audit key to check x-hub-mac with" {
				t.Fatalf("without a key: unreadable %v, payload %q, upload %+v, hub_mac_error %q", unreadable, payload, r.Upload, r.HubMACError)
			}
			f.unavailable(r, payload)
			if r.Sandbox.Outcome != OutcomePayloadUnavailable || !strings.Contains(r.Sandbox.Summary, "no audit key") {
				t.Fatalf("verdict %+v", r.Sandbox)
			}
		})
	}
}

// End to end: a real hub (with the audit key) quarantines an upload's
// announcement whose stage panics on it; its poison copy carries x-hub-mac
// v2 over the partner it took from the stored subject and the upload
// headers, and the worker analyses the upload's real bytes (a broken
// envelope, reproduced by the child's parse stage) under that partner.
func TestHubsQuarantinedUploadCopyIsAnalysed(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	announced := hub.Stage{Name: "parse", Handle: func(ctx context.Context, m *hub.Message) error {
		if m.Header.Get(wire.HdrUploadSHA256) != "" {
			panic("the hub's parse dies on this upload (simulated; the child parses the real bytes)")
		}
		return nil
	}}
	cfg := hubtest.FastConfig()
	env := hubtest.Run(t, &hubtest.Options{URL: url, Config: &cfg, Stages: []hub.Stage{announced}, Keyring: testCopyKeys})
	fe := startForensics(t, url, fastForensicsConfig(), nil)
	ctx := context.Background()
	if _, err := claimcheck.OpenUploads(ctx, env.JS, nil, claimcheck.UploadsConfig{}); err != nil {
		t.Fatal(err)
	}
	data := []byte(strings.Replace(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "HUBUP1"), "UNT+3+1", "UNT+6+1", 1))
	up := wire.Upload{SHA256: audit.PayloadHash(data), Size: int64(len(data))}
	if _, err := env.JS.PublishMsg(ctx, &nats.Msg{Subject: wire.UploadSubject("ACME", up.SHA256), Data: data,
		Header: nats.Header{wire.HdrUploadChunk: {"0"}, wire.HdrUploadSHA256: {up.SHA256}}}); err != nil {
		t.Fatal(err)
	}
	// the producer's own x-partner-id is moved aside by the hub
	jetstreamtest.PublishIngest(t, env.JS, "ACME", string(wire.UploadStub(up)), nats.Header{wire.HdrUploadSHA256: {up.SHA256},
		wire.HdrUploadSize: {strconv.Itoa(len(data))}, wire.HdrPartnerID: {"BETA"}})
	var seq uint64
	jetstreamtest.Eventually(t, 60*time.Second, func() bool {
		if msgs := jetstreamtest.StreamMsgs(t, env.JS, "POISON"); len(msgs) == 1 {
			seq = msgs[0].Sequence
		}
		return seq > 0
	})
	r := waitReport(t, fe.store, seq, 60*time.Second)
	if r.HubMAC != "v2" || r.Partner != "ACME" || r.Sandbox.Outcome != sandbox.OutcomeReproducedError || !strings.Contains(r.Sandbox.Error, "UNT count 6") ||
		r.Upload == nil || r.Upload.From != wire.DefaultUploadStream+" "+wire.UploadStoredSubject("ACME") || r.PayloadSHA256 != up.SHA256 {
		t.Fatalf("report: hub_mac %q (%s), partner %q, outcome %q: %s, upload %+v", r.HubMAC, r.HubMACError, r.Partner, r.Sandbox.Outcome, r.Sandbox.Summary, r.Upload)
	}
}
