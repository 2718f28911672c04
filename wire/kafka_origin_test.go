package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
)

// hmacKeys is a one-key ring, as audit.Keyring signs (wire cannot import audit).
type hmacKeys []byte

func (k hmacKeys) Sign(domain string, msg []byte) (string, string) {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(domain + "\x00"))
	m.Write(msg)
	return "k1", hex.EncodeToString(m.Sum(nil))
}

func (k hmacKeys) Check(domain, kid, tag string, msg []byte) error {
	if _, want := k.Sign(domain, msg); kid != "k1" || !hmac.Equal([]byte(tag), []byte(want)) {
		return errors.New("bad mac")
	}
	return nil
}

func TestOwnKafkaHeaders(t *testing.T) {
	keys := hmacKeys("test key")
	signed := func() map[string][]string {
		h := map[string][]string{HdrKafkaKey: {"ACME"}, HdrKafkaTopic: {"in"}, HdrKafkaOffset: {"5"}}
		SignKafkaOrigin(keys, "ACME", h)
		h["X-Kafka-Topic"] = []string{"case variant"}
		h["x-kafka-extra"] = []string{"unsigned name"}
		h["x-other"] = []string{"untouched"}
		return h
	}
	for _, c := range []struct {
		name    string
		keys    MACKeys
		partner string
		edit    func(map[string][]string)
		kept    bool
	}{
		{"signed for the partner", keys, "ACME", nil, true},
		{"signed for another partner", keys, "GLOBEX", nil, false},
		{"no keys", nil, "ACME", nil, false},
		{"a value changed", keys, "ACME", func(h map[string][]string) { h[HdrKafkaTopic] = []string{"victim"} }, false},
		{"a second value appended", keys, "ACME", func(h map[string][]string) { h[HdrKafkaKey] = append(h[HdrKafkaKey], "GLOBEX") }, false},
		{"a signed name added", keys, "ACME", func(h map[string][]string) { h[HdrKafkaPartition] = []string{"3"} }, false},
		{"the MAC removed", keys, "ACME", func(h map[string][]string) { delete(h, HdrKafkaMAC) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := signed()
			if c.edit != nil {
				c.edit(h)
			}
			if got := OwnKafkaHeaders(c.keys, c.partner, h); got != c.kept {
				t.Fatalf("signed %v, want %v", got, c.kept)
			}
			if (len(h[HdrKafkaKey]) > 0) != c.kept || (len(h["x-producer-x-kafka-key"]) > 0) == c.kept {
				t.Fatalf("x-kafka-key kept %v, want %v: %v", len(h[HdrKafkaKey]) > 0, c.kept, h)
			}
			// Never kept as they are: a case variant, a name the MAC does not cover.
			if h["X-Kafka-Topic"] != nil || h["x-kafka-extra"] != nil || h["x-producer-x-kafka-extra"] == nil || h["x-other"] == nil {
				t.Fatalf("headers %v", h)
			}
		})
	}
}
