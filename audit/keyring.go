package audit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Where the hub keeps its audit keys. The key never travels through NATS:
// whoever can publish on the audit subject cannot compute a MAC.
const (
	// KeyEnv holds the keys instead of the files: comma-separated hex or
	// base64, the first one current, the others older keys still accepted.
	KeyEnv = "EDIHUB_AUDIT_KEY"
	// KeyFile is the current key in the data folder (hex, mode 0600).
	KeyFile = "audit.key"
	// OldKeysDir holds older keys in the data folder, one file each (any
	// name, same format, mode 0600): events signed with them still verify.
	OldKeysDir = "audit.keys.d"
)

// ErrNoKey: neither EDIHUB_AUDIT_KEY nor <data>/audit.key exists.
var ErrNoKey = errors.New("no audit key")

// Keyring holds the key that signs new events and older keys that still
// verify events signed before a rotation. A key's ID (kid) is derived from
// the key itself, so rotating needs no naming.
type Keyring struct {
	current string
	keys    map[string][]byte
}

// KeyID is the ID of a key: the first 16 hex digits of a SHA-256 over it.
func KeyID(key []byte) string {
	s := sha256.Sum256(append([]byte("edihub-audit-kid\n"), key...))
	return hex.EncodeToString(s[:8])
}

// NewKeyring returns a keyring that signs with current and also accepts
// older. Keys must have at least 16 bytes.
func NewKeyring(current []byte, older ...[]byte) (*Keyring, error) {
	k := &Keyring{keys: map[string][]byte{}}
	for i, key := range append([][]byte{current}, older...) {
		if len(key) < 16 {
			return nil, fmt.Errorf("audit key %d is %d bytes; at least 16 are needed (32 random bytes recommended)", i+1, len(key))
		}
		id := KeyID(key)
		k.keys[id] = append([]byte(nil), key...)
		if i == 0 {
			k.current = id
		}
	}
	return k, nil
}

// CurrentID is the ID of the key new events are signed with.
func (k *Keyring) CurrentID() string { return k.current }

// IDs lists every key ID of the keyring, sorted.
func (k *Keyring) IDs() []string {
	out := make([]string, 0, len(k.keys))
	for id := range k.keys {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func mac(key []byte, domain string, msg []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(domain))
	m.Write([]byte{'\n'})
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// Sign returns the current key's ID and its HMAC-SHA256 (hex) of msg in
// the given domain (what the MAC is for: "audit-event", "hub-copy").
func (k *Keyring) Sign(domain string, msg []byte) (kid, tag string) {
	return k.current, mac(k.keys[k.current], domain, msg)
}

// Check verifies a MAC made by Sign with any key of the keyring.
func (k *Keyring) Check(domain, kid, tag string, msg []byte) error {
	key, ok := k.keys[kid]
	if !ok {
		return fmt.Errorf("key id %q is not in the keyring (forged, or signed with a key that was removed)", kid)
	}
	if !hmac.Equal([]byte(mac(key, domain, msg)), []byte(tag)) {
		return errors.New("MAC does not match (forged or altered)")
	}
	return nil
}

// ParseKey decodes a key as written in the key file or the environment:
// hex or base64 (standard or URL, padded or not), surrounding space ignored.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not hex nor base64")
}

// LoadKeyring reads the keys: from EDIHUB_AUDIT_KEY (getenv) when set,
// else from <dataDir>/audit.key and <dataDir>/audit.keys.d/*. Every key
// file must have mode 0600 or stricter. ErrNoKey when there is none.
func LoadKeyring(dataDir string, getenv func(string) string) (*Keyring, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if env := getenv(KeyEnv); strings.TrimSpace(env) != "" {
		var keys [][]byte
		for i, part := range strings.Split(env, ",") {
			b, err := ParseKey(part)
			if err != nil {
				return nil, fmt.Errorf("%s: key %d: %v", KeyEnv, i+1, err)
			}
			keys = append(keys, b)
		}
		k, err := NewKeyring(keys[0], keys[1:]...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyEnv, err)
		}
		return k, nil
	}
	path := filepath.Join(dataDir, KeyFile)
	current, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: neither %s nor %s is set (serve creates the file at its first start)", ErrNoKey, path, KeyEnv)
	}
	if err != nil {
		return nil, err
	}
	var older [][]byte
	dir := filepath.Join(dataDir, OldKeysDir)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read old audit keys: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := readKeyFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		older = append(older, b)
	}
	k, err := NewKeyring(current, older...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// readKeyFile reads one key file and refuses it when others may read it.
func readKeyFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("audit key file %s has mode %04o: it must be readable by its owner only; run: chmod 600 %s", path, perm, path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read audit key: %w", err)
	}
	b, err := ParseKey(string(raw))
	if err != nil {
		return nil, fmt.Errorf("audit key file %s: %v", path, err)
	}
	return b, nil
}

// EnsureKeyFile creates <dataDir>/audit.key with 32 random bytes (hex,
// mode 0600) when EDIHUB_AUDIT_KEY is unset and the file is absent; serve
// calls it at start. It reports whether it created the file.
func EnsureKeyFile(dataDir string, getenv func(string) string) (bool, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.TrimSpace(getenv(KeyEnv)) != "" {
		return false, nil
	}
	path := filepath.Join(dataDir, KeyFile)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create audit key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return false, fmt.Errorf("write audit key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return false, fmt.Errorf("write audit key: %w", err)
	}
	return true, f.Close()
}
