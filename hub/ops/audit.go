package ops

import (
	"context"
	"time"

	"github.com/edihub/edihub/hub/audit"
)

// AuditList is audit.Read on the hub's AUDIT stream.
func (o *Ops) AuditList(ctx context.Context, since time.Duration, limit int) ([]audit.Record, error) {
	var t time.Time
	if since > 0 {
		t = o.o.Now().Add(-since)
	}
	return audit.Read(ctx, o.o.JS, o.o.Streams.Audit, t, limit)
}

// AuditVerify is audit.VerifyWith on the hub's AUDIT stream, with the
// Auditor's keyring (none: the hash chain only, and the result says so).
func (o *Ops) AuditVerify(ctx context.Context, anchor string) (audit.Verification, error) {
	return audit.VerifyWith(ctx, o.o.JS, o.o.Streams.Audit, anchor, o.o.Auditor.Keyring())
}
