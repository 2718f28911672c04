package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"
)

// Key names an interchange: the partner it came from (the hub's partner
// id), sender and recipient identification (UNB 2 and 3) and the
// interchange control reference (UNB 5). The partner is part of the key so
// that one partner cannot pre-empt another's control reference.
type Key struct {
	Partner    string
	Sender     string
	Recipient  string
	ControlRef string
}

func (k Key) String() string {
	return fmt.Sprintf("%s: %s -> %s #%s", k.Partner, k.Sender, k.Recipient, k.ControlRef)
}

// bytes encodes k with a length before each field, so that no choice of
// characters in one field can make two keys collide.
func (k Key) bytes() []byte {
	return appendFields(nil, k.Partner, k.Sender, k.Recipient, k.ControlRef)
}

// legacyBytes is the partner-less encoding of ledgers written before keys
// had a partner. Length-prefixed fields parse one way only, so a 3-field
// encoding never equals a 4-field one.
func (k Key) legacyBytes() []byte {
	return appendFields(nil, k.Sender, k.Recipient, k.ControlRef)
}

// digest is the index's name for k (sha256 of bytes), encoded on the
// stack: the stage's duplicate check and the commit of every interchange
// compute it, and the heap copy of the encoding was garbage at once.
func (k Key) digest() digest {
	var buf [192]byte
	return sha256.Sum256(appendFields(buf[:0], k.Partner, k.Sender, k.Recipient, k.ControlRef))
}

// legacyDigest is digest for the partner-less encoding (legacyBytes).
func (k Key) legacyDigest() digest {
	var buf [192]byte
	return sha256.Sum256(appendFields(buf[:0], k.Sender, k.Recipient, k.ControlRef))
}

func appendFields(b []byte, fields ...string) []byte {
	for _, s := range fields {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// countFields returns how many length-prefixed fields b holds, or -1 if
// b is not such an encoding.
func countFields(b []byte) int {
	n := 0
	for len(b) > 0 {
		l, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < l {
			return -1
		}
		b = b[w+int(l):]
		n++
	}
	return n
}

// KV key prefixes: entries keyed with a partner, and the partner-less
// entries migrated from an old bbolt ledger.
const (
	kvPrefix       = "ix."
	kvLegacyPrefix = "legacy."
	kvLegacyFlag   = "meta.legacy-until"
)

// kvKey maps an encoded key to a KV key. KV keys allow [-/_=.a-zA-Z0-9]
// only, and the fields are bytes a partner chose: a SHA-256 of the
// length-prefixed encoding has a fixed length whatever they hold and
// collides with nothing. 3-field (legacy) encodings get their own prefix.
func kvKey(encoded []byte) string {
	sum := sha256.Sum256(encoded)
	switch countFields(encoded) {
	case 3:
		return kvLegacyPrefix + hex.EncodeToString(sum[:])
	case 4:
		// Grouped by partner (ix.<partner token>.<hash>) so that one
		// partner's entries stay apart from other partners'.
		l, w := binary.Uvarint(encoded)
		return partnerPrefix(string(encoded[w:w+int(l)])) + hex.EncodeToString(sum[:])
	}
	return kvPrefix + hex.EncodeToString(sum[:])
}

// partnerPrefix is the key prefix of one partner's entries: a hash of the
// partner, since a partner id may hold bytes a KV key may not.
func partnerPrefix(partner string) string {
	sum := sha256.Sum256([]byte(partner))
	return kvPrefix + hex.EncodeToString(sum[:8]) + "."
}

// Ledger is what the store does; the hub's parse stage needs Seen and
// Record, the application the rest.
type Ledger interface {
	// Seen reports whether k was recorded within the TTL.
	Seen(k Key) (bool, error)
	// Recorded returns when k was recorded (zero if never or expired).
	Recorded(k Key) (time.Time, error)
	// Record remembers k as processed now, durably when it returns.
	Record(k Key) error
	// Purge removes expired entries and returns how many.
	Purge() (int, error)
	// Len returns about how many entries the store holds.
	Len() (int, error)
	// TTL returns how long entries are kept.
	TTL() time.Duration
	Close() error
}

var _ Ledger = (*KVStore)(nil)
