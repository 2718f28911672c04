package lease

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Membership keeps this process's member key alive in the lease bucket
// and knows the live members, so that work split in parts (partitions) can
// be shared: each part has one preferred owner among the live members,
// by rendezvous hashing with bounded load (each part goes to the member
// with the highest hash for it that has fewer than ⌈parts/members⌉ parts
// yet): every member computes the same assignment from the same view, the
// shares differ by at most one, and a member joining or leaving moves
// little beyond its own share. (Plain rendezvous left one of three members
// without a partition of eight.) A member that dies drops out when its key
// expires (the TTL).
// Preference is advice: who actually works a part is decided elsewhere
// (the server's pinned client), so two members that briefly disagree
// cost a hand-over, never a duplicate.
type Membership struct {
	m     *Manager
	id    string
	parts int

	mu    sync.RWMutex
	live  []string
	owner []string // part → preferred member, for live
}

// Join announces this process and reads the members; Run keeps it up.
// parts is how many parts the members share.
func (m *Manager) Join(ctx context.Context, parts int) (*Membership, error) {
	if parts < 1 {
		return nil, fmt.Errorf("membership: %d parts to share, want at least 1", parts)
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	id := sanitize(m.opts.Holder) + "-" + hex.EncodeToString(suffix[:])
	ms := &Membership{m: m, id: id, parts: parts, live: []string{id}, owner: assign([]string{id}, parts)}
	if err := ms.refresh(ctx); err != nil {
		return nil, err
	}
	return ms, nil
}

// ID is this member's name.
func (ms *Membership) ID() string { return ms.id }

// Run renews the member key and re-reads the members every TTL/3 until
// ctx is done, then removes the key so the others take over at once.
func (ms *Membership) Run(ctx context.Context) error {
	t := time.NewTicker(ms.m.opts.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = ms.m.kv.Delete(dctx, memberPrefix+ms.id)
			cancel()
			return nil
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, ms.m.opts.TTL/3)
		if err := ms.refresh(rctx); err != nil && ctx.Err() == nil {
			ms.m.log.Warn().Err(err).Msg("membership not renewed; keeping the last view")
		}
		cancel()
	}
}

const memberPrefix = "member."

func (ms *Membership) refresh(ctx context.Context) error {
	if _, err := ms.m.kv.Put(ctx, memberPrefix+ms.id, []byte(ms.m.opts.Holder)); err != nil {
		return fmt.Errorf("renew member %s: %w", ms.id, err)
	}
	kl, err := ms.m.kv.ListKeysFiltered(ctx, memberPrefix+"*")
	if err != nil {
		return fmt.Errorf("list members: %w", err)
	}
	live := []string{ms.id}
	for k := range kl.Keys() {
		if id := strings.TrimPrefix(k, memberPrefix); id != ms.id {
			live = append(live, id)
		}
	}
	_ = kl.Stop()
	slices.Sort(live)
	ms.mu.Lock()
	if !slices.Equal(live, ms.live) {
		ms.m.log.Info().Strs("members", live).Msg("members changed: partitions are shared again")
	}
	ms.live = live
	ms.owner = assign(live, ms.parts)
	ms.mu.Unlock()
	return nil
}

// Members are the live members as last read, sorted.
func (ms *Membership) Members() []string {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return slices.Clone(ms.live)
}

// Prefers reports whether this member is the preferred owner of part.
func (ms *Membership) Prefers(part int) bool {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return part >= 0 && part < len(ms.owner) && ms.owner[part] == ms.id
}

// assign gives each of parts parts to a member: the one with the highest
// hash for it among those below the bound ⌈parts/members⌉.
func assign(members []string, parts int) []string {
	bound := (parts + len(members) - 1) / len(members)
	load := make(map[string]int, len(members))
	out := make([]string, parts)
	for p := range parts {
		var best string
		var bestH uint64
		for _, m := range members {
			if load[m] >= bound {
				continue
			}
			if v := rendezvous(m, p); best == "" || v > bestH {
				best, bestH = m, v
			}
		}
		out[p] = best
		load[best]++
	}
	return out
}

// rendezvous is member's weight for part. A cryptographic hash: FNV's
// high bits hardly depend on the last bytes (the part), so one member won
// every part.
func rendezvous(member string, part int) uint64 {
	sum := sha256.Sum256([]byte(member + "/" + strconv.Itoa(part)))
	return binary.BigEndian.Uint64(sum[:8])
}

// sanitize keeps what a KV key allows.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
