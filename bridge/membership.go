package bridge

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// NoInstanceID as group_instance_id turns static membership off.
const NoInstanceID = "none"

// DefaultInstanceID sets group_instance_id, when it is not set, to one
// that names this bridge and no other: the host name and a hash of
// dataDir, a folder only this process holds (serve locks its own). A
// restarted bridge then joins under the same id and gets its partitions
// back at once, without a rebalance. With no folder, or no host name, the
// id stays empty: dynamic membership, as two bridges on one host with one
// configuration would otherwise fence each other.
func (c *Config) DefaultInstanceID(dataDir string) {
	if c.GroupInstanceID != "" || dataDir == "" {
		return
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(dataDir))
	host = strings.Map(func(r rune) rune {
		if r == '.' || r == '*' || r == '>' || r <= ' ' {
			return '_'
		}
		return r
	}, host)
	c.GroupInstanceID = host + "-" + hex.EncodeToString(sum[:4])
}

// instanceID is the static member id of an inbound route, "" for dynamic
// membership.
func (c *Config) instanceID(route string) string {
	if c.GroupInstanceID == "" || c.GroupInstanceID == NoInstanceID {
		return ""
	}
	return c.GroupInstanceID + "-" + route
}
