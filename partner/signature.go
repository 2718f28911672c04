package partner

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// maxKeyIDLen caps the key id a producer may name.
const maxKeyIDLen = 64

// verify checks the detached signature of data against the partner's
// keys. Only the exact header names count, each exactly once; the key id
// goes into the refusal (escaped), never a key.
func (p *Profile) verify(h nats.Header, data []byte) *Rejection {
	sigs, kids := h.Values(wire.HdrSignature), h.Values(wire.HdrSignatureKey)
	kid := ""
	if len(kids) > 0 {
		kid = kids[0]
	}
	rej := func(reason, format string, a ...any) *Rejection {
		return &Rejection{DLQCause: wire.CauseSignatureInvalid, Reason: reason, KeyID: kid, Code: codeSecurity,
			Msg: fmt.Sprintf(format, a...)}
	}
	if len(sigs) == 0 || len(kids) == 0 {
		return rej(wire.ReasonSignatureMissing, "partner %s requires a signature: headers %s and %s must both be set", p.ID, wire.HdrSignature, wire.HdrSignatureKey)
	}
	if len(sigs) > 1 || len(kids) > 1 {
		return rej(wire.ReasonSignatureBad, "%s and %s must each be set once (got %d and %d)", wire.HdrSignature, wire.HdrSignatureKey, len(sigs), len(kids))
	}
	if kid == "" || len(kid) > maxKeyIDLen || !wire.ValidHeaderValue(kid) {
		return rej(wire.ReasonSignatureBad, "%s: not a key id (1 to %d printable characters)", wire.HdrSignatureKey, maxKeyIDLen)
	}
	b64, ok := strings.CutPrefix(sigs[0], wire.SignatureScheme)
	if !ok {
		return rej(wire.ReasonSignatureBad, "%s: want %s<base64>", wire.HdrSignature, wire.SignatureScheme)
	}
	if len(b64) != base64.StdEncoding.EncodedLen(ed25519.SignatureSize) { // decode nothing a producer made huge
		return rej(wire.ReasonSignatureBad, "%s: want the standard base64 of a %d-byte Ed25519 signature", wire.HdrSignature, ed25519.SignatureSize)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return rej(wire.ReasonSignatureBad, "%s: want the standard base64 of a %d-byte Ed25519 signature", wire.HdrSignature, ed25519.SignatureSize)
	}
	key, ok := p.keys[kid]
	if !ok {
		return rej(wire.ReasonSignatureKey, "key id %s is not a key of partner %s", escape.Header(kid), p.ID)
	}
	times := h.Values(wire.HdrSignatureTime)
	if len(times) != 1 {
		return rej(wire.ReasonSignatureBad, "%s must be set once (Unix seconds of the signature)", wire.HdrSignatureTime)
	}
	ts, err := strconv.ParseInt(times[0], 10, 64)
	if err != nil || ts <= 0 {
		return rej(wire.ReasonSignatureBad, "%s: want Unix seconds", wire.HdrSignatureTime)
	}
	if !ed25519.Verify(key, signedContent(p.ID, ts, data), sig) {
		return rej(wire.ReasonSignatureMismatch, "the signature made with key %s does not match the payload, partner %s and time", escape.Header(kid), p.ID)
	}
	window := p.Signature.window()
	if d := time.Since(time.Unix(ts, 0)); d > window || d < -window {
		return rej(wire.ReasonSignatureBad, "the signature is from %s, outside the window of %s", time.Unix(ts, 0).UTC().Format(time.RFC3339), window)
	}
	return nil
}

// signedContent is what a signature covers: a version, the partner ID,
// the signing time and the payload's SHA-256, so that a signature is valid
// for one partner and one window only.
func signedContent(partner string, ts int64, data []byte) []byte {
	sum := sha256.Sum256(data)
	b := make([]byte, 0, 64+len(partner)+len(sum))
	b = append(b, "edihub-signature-v2\x00"...)
	b = append(b, partner...)
	b = append(b, 0)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, 0)
	return append(b, sum[:]...)
}

// SigningKey is a private key with the id the partner's profile knows it
// by.
type SigningKey struct {
	ID  string
	Key ed25519.PrivateKey
}

// Sign sets x-signature, x-signature-key and x-signature-time of h for
// data sent as partner, signed now.
func (k SigningKey) Sign(h nats.Header, partner string, data []byte) {
	k.SignAt(h, partner, data, time.Now())
}

// SignAt is Sign at time t.
func (k SigningKey) SignAt(h nats.Header, partner string, data []byte, t time.Time) {
	ts := t.Unix()
	h.Set(wire.HdrSignature, wire.SignatureScheme+base64.StdEncoding.EncodeToString(ed25519.Sign(k.Key, signedContent(partner, ts, data))))
	h.Set(wire.HdrSignatureKey, k.ID)
	h.Set(wire.HdrSignatureTime, strconv.FormatInt(ts, 10))
}

// PublicKey is the base64 public key to put into the partner's profile.
func (k SigningKey) PublicKey() string {
	return base64.StdEncoding.EncodeToString(k.Key.Public().(ed25519.PublicKey))
}

// String is "<id> ed25519:<base64 seed>", the signing key file's one line.
func (k SigningKey) String() string {
	return k.ID + " " + wire.SignatureScheme + base64.StdEncoding.EncodeToString(k.Key.Seed())
}

// NewSigningKey makes a new key pair under id.
func NewSigningKey(id string) (SigningKey, error) {
	if err := validKeyID(id); err != nil {
		return SigningKey{}, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return SigningKey{}, err
	}
	return SigningKey{ID: id, Key: priv}, nil
}

// ReadSigningKey reads a signing key file: one line
// "<key id> ed25519:<standard base64 of the 32-byte seed>". The file must
// not be readable by others.
func ReadSigningKey(path string) (SigningKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return SigningKey{}, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return SigningKey{}, fmt.Errorf("%s: mode %v lets others read the key; run chmod 600 on it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return SigningKey{}, err
	}
	return ParseSigningKey(string(b))
}

// ParseSigningKey reads the one line of a signing key file.
func ParseSigningKey(s string) (SigningKey, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return SigningKey{}, errors.New("signing key: want one line \"<key id> ed25519:<base64 seed>\"")
	}
	b64, ok := strings.CutPrefix(f[1], wire.SignatureScheme)
	seed, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(seed) != ed25519.SeedSize {
		return SigningKey{}, errors.New("signing key: want ed25519:<standard base64 of a 32-byte seed>")
	}
	if err := validKeyID(f[0]); err != nil {
		return SigningKey{}, fmt.Errorf("signing key: %w", err)
	}
	return SigningKey{ID: f[0], Key: ed25519.NewKeyFromSeed(seed)}, nil
}

// validKeyID: 1 to 64 printable ASCII characters without spaces.
func validKeyID(id string) error {
	if id == "" || len(id) > maxKeyIDLen {
		return fmt.Errorf("key id %q: want 1 to %d printable characters without spaces", id, maxKeyIDLen)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return fmt.Errorf("key id %q: want 1 to %d printable characters without spaces", id, maxKeyIDLen)
		}
	}
	return nil
}
