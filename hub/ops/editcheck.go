package ops

import (
	"context"
	"errors"
	"strings"

	"github.com/edihub/edihub/wire"
)

// ErrEmptyEdit refuses an edit that leaves nothing (an editor saved an
// empty file): there is nothing a replay could send.
var ErrEmptyEdit = errors.New("the edited payload is empty (only white space); nothing stored")

// CheckEdit is the dry run of an edit before it is stored: the decision
// `dlq replay --dry-run` makes (parse.Decide, via dryRun) of the edited
// payload, sent where a replay of the message would send it, with the
// headers that replay would send. It changes nothing; a caller stores the
// edit only when the check passes or the operator insists.
func (o *Ops) CheckEdit(ctx context.Context, id string, payload []byte) (*DryRun, error) {
	if strings.TrimSpace(string(payload)) == "" {
		return nil, ErrEmptyEdit
	}
	ref, raw, err := o.readID(ctx, id)
	if err != nil {
		return nil, err
	}
	e := o.storedEntry(ref, raw)
	if wire.ValidPartnerID(e.Partner) != nil {
		return nil, ErrNoDestination
	}
	subject := wire.IngestSubject(e.Partner)
	return o.dryRun(payload, o.replayHeader(raw.Header, payload, ref, false), e, subject, false), nil
}
