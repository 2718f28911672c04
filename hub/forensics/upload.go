package forensics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// A quarantined upload's copy is its announcement (x-upload-sha256,
// x-upload-size and a stub body): the bytes the hub parsed are elsewhere.
// The worker analyses those bytes, read as the hub reads them (the object
// the hub took into the payload bucket, else the partner's chunks in the
// upload stream; at most the partner's parse.max_size; their SHA-256
// checked), stores them as the report's payload, and says where they came
// from. It reads them only for a copy whose x-hub-mac v2 verifies, under
// the partner that MAC covers: anyone who may publish on the poison
// subjects could otherwise name another partner's upload and have its
// bytes stored in a report operators read. When they are not read (not
// the hub's copy, an older hub's v1 MAC, no audit key) or cannot be (the
// chunks expired, another hash, too large) no child runs: the report's
// outcome is payload-unavailable with the reason, and its payload is the
// announcement.

// UploadPayload is what a report says about the upload its copy announced.
type UploadPayload struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// From is where the analysed bytes were read (<bucket>/<object>, or
	// the upload stream and subject of the chunks).
	From string `json:"from,omitempty"`
	// Error says why they could not be read; nothing was analysed then.
	Error string `json:"error,omitempty"`
	// Gone: neither the bucket nor the stream held them any more.
	Gone bool `json:"gone,omitempty"`
	// Untrusted: the copy's x-hub-mac does not vouch for its partner and
	// upload headers, so nothing was looked up (Error says why).
	Untrusted bool `json:"untrusted,omitempty"`
	// Announcement is the copy's body (up to maxAnnouncementKept bytes),
	// over which the hub's x-hub-mac was made: a re-analysis checks a
	// drill's mark against it.
	Announcement []byte `json:"announcement,omitempty"`
}

// OutcomePayloadUnavailable: the copy announced an upload whose bytes
// could not be read, or were not (the copy's x-hub-mac does not vouch for
// its partner and upload headers); no child ran.
const OutcomePayloadUnavailable sandbox.Outcome = "payload-unavailable"

// maxAnnouncementKept bounds the announcement kept in a report.
const maxAnnouncementKept = 16 << 10

// realPayload is what r's analysis runs on: the copy's body data, or the
// bytes of the upload its headers announce (r.Upload says which, and
// r.PayloadSHA256 and r.PayloadBytes become theirs). When those cannot be
// read, r.Upload.Error says why and data is returned: no child may run
// on it (unreadable). An error is the environment's (the store did not
// answer): the copy is analysed later.
func (f *Worker) realPayload(ctx context.Context, r *Report, data []byte) (payload []byte, unreadable bool, err error) {
	up, err := wire.UploadOf(nats.Header(r.Headers).Get)
	if errors.Is(err, wire.ErrNoUpload) {
		r.Upload = nil
		return data, false, nil
	}
	r.Upload = &UploadPayload{SHA256: up.SHA256, Size: up.Size}
	if len(data) <= maxAnnouncementKept {
		r.Upload.Announcement = data
	}
	if err != nil {
		r.Upload.Error = "the copy's upload headers: " + err.Error()
		return data, true, nil
	}
	if why := f.uploadRefusal(r); why != "" {
		r.Upload.Error, r.Upload.Untrusted = why, true
		f.log.Warn().Str("id", r.ID).Str("upload", up.SHA256).Str("partner", escape.Line(r.Partner)).Str("reason", why).
			Msg("a poison copy announces an upload its x-hub-mac does not vouch for; nothing read")
		return data, true, nil
	}
	partner := nats.Header(r.Headers).Get(wire.HdrPartnerID) // what the v2 MAC covers, never another header
	edi := f.edi
	edi.SetDefaults() // a bound also when the worker was given no parse settings
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, where, err := claimcheck.Find(fctx, f.js, f.cfg.PayloadBucket, f.cfg.UploadStream, partner, up, edi.Options(partner).MaxSize)
	var refused *claimcheck.RefusedError
	switch {
	case errors.As(err, &refused):
		r.Upload.Error, r.Upload.Gone = err.Error(), errors.Is(err, claimcheck.ErrUploadGone)
		return data, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("read the upload %s announced by %s: %w", up.SHA256, r.ID, err)
	}
	r.Upload.From = where.String()
	r.PayloadSHA256, r.PayloadBytes = audit.PayloadHash(b), len(b)
	return b, false, nil
}

// uploadRefusal says why the upload r's copy announces is not to be read
// ("" when it is): only a copy whose x-hub-mac v2 verified (checkCopy)
// names its partner and upload with the hub's word.
func (f *Worker) uploadRefusal(r *Report) string {
	switch {
	case r.HubMAC == audit.CopyMACv2.String():
		return ""
	case f.keys == nil:
		return "not read: this worker has no audit key to tell the hub's copies from forged ones (give it the hub's --data or $" + audit.KeyEnv + ")"
	case r.HubMAC != "":
		return "not read: the copy's x-hub-mac is the older " + r.HubMAC + " format, which does not cover its partner or upload headers (copies quarantined since carry v2)"
	}
	return "not read: the copy is not the hub's (" + r.HubMACError + "), so its partner and upload headers may be anyone's"
}

// unavailable fills r's verdict for an upload whose bytes could not be
// read, without a child.
func (f *Worker) unavailable(r *Report, announcement []byte) {
	rep := &sandbox.Report{Outcome: OutcomePayloadUnavailable, StartedAt: time.Now().UTC(), PayloadBytes: len(announcement),
		Summary: "not analysed: " + r.Upload.Error,
		Notes:   []string{"the poison copy is the announcement of an upload; the stored payload is that announcement, not the interchange"}}
	f.met.runs.WithLabelValues(string(rep.Outcome)).Inc()
	r.Sandbox, r.Verdict = rep, forensicVerdict(rep)
	switch {
	case r.Upload.Gone:
		r.Verdict = "not analysed: the upload's bytes are gone (its chunks expired after hub.claim_check.upload_ttl before the hub took them, or were never sent); the partner must send the interchange again"
	case r.Upload.Untrusted:
		r.Verdict = "not analysed: the upload was not read, since the hub's x-hub-mac does not vouch for this copy's partner and upload headers (the summary says why); a copy someone else published on the poison subject could name another partner's upload"
	}
	r.AnalysedAt, r.AnalysedBy = time.Now().UTC(), f.actor
}

// macData is the body the hub's x-hub-mac of r's copy was made over: the
// announcement for an upload (payload is the upload's bytes), else payload.
func macData(r *Report, payload []byte) []byte {
	if r.Upload != nil && r.Upload.Error == "" && r.Upload.Announcement != nil {
		return r.Upload.Announcement
	}
	return payload
}
