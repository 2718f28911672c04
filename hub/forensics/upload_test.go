package forensics

import (
	"bytes"
	"context"
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

	cases := []struct {
		name, partner string
		hdr           nats.Header
		want          sandbox.Outcome
		payload       []byte // stored as the report's payload
		check         func(t *testing.T, r *Report)
	}{
		{"taken upload", "ACME", takenHdr, sandbox.OutcomeReproducedError, broken, func(t *testing.T, r *Report) {
			if r.Upload == nil || r.Upload.From != wire.DefaultPayloadBucket+"/"+wire.UploadObject("ACME", takenSum) || r.Upload.Error != "" {
				t.Errorf("upload %+v", r.Upload)
			}
			if !strings.Contains(r.Sandbox.Error, "UNT") || r.Sandbox.Progress.Segment != 4 || r.Sandbox.PayloadBytes != len(broken) {
				t.Errorf("analysed %d bytes: error %q at %+v, want the upload's UNT", r.Sandbox.PayloadBytes, r.Sandbox.Error, r.Sandbox.Progress)
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
		{"upload over max_size", "SMALL", smallHdr, OutcomePayloadUnavailable, []byte(stub(smallHdr)), func(t *testing.T, r *Report) {
			if r.Upload == nil || !strings.Contains(r.Upload.Error, "over parse.max_size (64 bytes)") || r.Upload.Gone {
				t.Errorf("upload %+v", r.Upload)
			}
		}},
		{"upload gone", "ACME", goneHdr, OutcomePayloadUnavailable, []byte(stub(goneHdr)), func(t *testing.T, r *Report) {
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
	if n := jetstreamtest.CountMsgs(t, env.js, wire.DefaultUploadStream); n != 4 {
		t.Errorf("the upload stream holds %d chunks, want the 4 not taken: the worker takes nothing", n)
	}
	// a re-analysis of the gone one looks again and says the same
	r, err := env.f.Reanalyse(ctx, wire.PoisonID(seqs[3]))
	if err != nil || r.Sandbox.Outcome != OutcomePayloadUnavailable || r.Analyses != 2 || !r.Upload.Gone {
		t.Fatalf("reanalyse the gone upload: %+v %v", r, err)
	}
	// a re-analysis of the taken one runs on the stored bytes again
	if r, err = env.f.Reanalyse(ctx, wire.PoisonID(seqs[0])); err != nil || r.Sandbox.Outcome != sandbox.OutcomeReproducedError || r.PayloadSHA256 != takenSum {
		t.Fatalf("reanalyse the taken upload: %+v %v", r, err)
	}
}
