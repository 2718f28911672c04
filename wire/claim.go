package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// DefaultPayloadBucket is the object store bucket of payloads stored
// aside (hub.claim_check.bucket).
const DefaultPayloadBucket = "edihub-payloads"

// PayloadRef names a payload stored aside: an object in a bucket.
type PayloadRef struct {
	Bucket, Object string
}

func (r PayloadRef) String() string { return r.Bucket + "/" + r.Object }

var bucketName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// ParsePayloadRef reads an x-payload-ref value (<bucket>/<object>; a
// bucket name has no '/', an object name may).
func ParsePayloadRef(s string) (PayloadRef, error) {
	b, o, ok := strings.Cut(s, "/")
	if !ok || !bucketName.MatchString(b) || o == "" {
		return PayloadRef{}, fmt.Errorf("payload reference %q: want <bucket>/<object>", s)
	}
	return PayloadRef{Bucket: b, Object: o}, nil
}

// ClaimStub is the body of a message whose payload is stored aside: what
// a reader that ignores headers sees.
type ClaimStub struct {
	ClaimCheck struct {
		Ref    string `json:"ref"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
		Fetch  string `json:"fetch"`
	} `json:"claim_check"`
}

// NewClaimStub is the stub body for a payload stored at ref.
func NewClaimStub(ref PayloadRef, size int64, sha string) []byte {
	var s ClaimStub
	s.ClaimCheck.Ref, s.ClaimCheck.Size, s.ClaimCheck.SHA256 = ref.String(), size, sha
	s.ClaimCheck.Fetch = "nats obj get " + ref.Bucket + " " + ref.Object
	b, _ := json.Marshal(s) // strings and an integer: cannot fail
	return b
}

// Claim is what the claim-check headers of a message say.
type Claim struct {
	Ref    PayloadRef
	Size   int64
	SHA256 string
}

// ErrNoClaim: the message carries its payload inline.
var ErrNoClaim = errors.New("no payload reference")

// ClaimOf reads the claim-check headers (get is a header getter, e.g.
// nats.Header.Get): ErrNoClaim without x-payload-ref.
func ClaimOf(get func(string) string) (Claim, error) {
	v := get(HdrPayloadRef)
	if v == "" {
		return Claim{}, ErrNoClaim
	}
	ref, err := ParsePayloadRef(v)
	if err != nil {
		return Claim{}, err
	}
	size, err := strconv.ParseInt(get(HdrPayloadSize), 10, 64)
	if err != nil || size < 0 {
		return Claim{}, fmt.Errorf("payload reference %s: %s %q is not a size", ref, HdrPayloadSize, get(HdrPayloadSize))
	}
	sha := get(HdrPayloadSHA256)
	if len(sha) != 64 || strings.Trim(sha, "0123456789abcdef") != "" {
		return Claim{}, fmt.Errorf("payload reference %s: %s %q is not a hex SHA-256", ref, HdrPayloadSHA256, sha)
	}
	return Claim{Ref: ref, Size: size, SHA256: sha}, nil
}
