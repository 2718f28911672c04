package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// GrantTTL is how long a forced replay's grant is honoured.
const GrantTTL = time.Hour

// grantKey is the bucket key of a grant: ref (the replayed message, DLQ:12)
// and the payload's hash, both hashed so any bytes make a valid key.
func grantKey(ref, payloadSHA256 string) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(len(ref)) + ":" + ref + payloadSHA256))
	return "grant." + hex.EncodeToString(sum[:])
}

// Grant records that an operator forced the replay of ref (with a reason
// the audit trail holds): the copy of that payload replayed from ref is
// processed even if the ledger has seen its interchange. A header alone
// never does that, since any producer can set one; the grant lives in the
// bucket, which only the hub's and the operators' NATS users may write.
func (s *KVStore) Grant(ref, payloadSHA256 string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	m := nats.NewMsg(s.pre + grantKey(ref, payloadSHA256))
	m.Header.Set(jetstream.MsgTTLHeader, strconv.FormatInt(ttlSeconds(GrantTTL), 10))
	m.Data = []byte(s.opts.Now().UTC().Format(time.RFC3339Nano))
	if _, err := s.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("ledger grant for %s: %w", ref, err)
	}
	return nil
}

// Granted reports whether a forced replay of ref with this payload was
// granted within GrantTTL.
func (s *KVStore) Granted(ref, payloadSHA256 string) (bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	e, err := s.kv.Get(ctx, grantKey(ref, payloadSHA256))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ledger grant lookup %s: %w", ref, err)
	}
	at, err := time.Parse(time.RFC3339Nano, string(e.Value()))
	return err == nil && s.opts.Now().Sub(at) < GrantTTL, nil
}
