package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"
)

// A checkpoint is the index saved to a local file with the stream sequence
// it has read to, so that a restart reads only what the bucket stored
// since instead of the whole bucket: restart time follows the traffic
// since the last checkpoint, not the ledger's history. The file names the
// bucket's stream by its creation time: a bucket deleted and made again
// (sequences restart) does not match, and the whole bucket is read.
//
// Layout (little endian): magic, stream created (unix ns), applied
// sequence, legacy-until (unix ns), count; then per interchange its digest,
// time (unix ns), origin length (uint16) and origin; then a CRC-32 of all
// before it. Written to a temporary file, synced and renamed over the
// old one, so a crash mid-write leaves the previous checkpoint.
var checkpointMagic = [8]byte{'E', 'D', 'L', 'X', 'C', 'K', 'P', '1'}

const checkpointHeader = 8 + 8 + 8 + 8 + 8

// Checkpoint brings the index up to the bucket's end and saves it to
// KVOptions.Checkpoint. Nothing to do without one, or before the index
// was first read. The serve command calls it every few minutes and at a
// clean stop.
func (s *KVStore) Checkpoint(ctx context.Context) error {
	if s.opts.Checkpoint == "" || !s.ix.loaded.Load() {
		return nil
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	st, err := s.js.Stream(ctx, s.stream)
	if err != nil {
		return fmt.Errorf("ledger checkpoint: %w", err)
	}
	if err := s.ix.catchUp(ctx, s.js, s.stream, s.pre); err != nil {
		return fmt.Errorf("ledger checkpoint: %w", err)
	}
	return s.ix.save(s.opts.Checkpoint, st.CachedInfo().Created)
}

// save writes the index; the encoding holds the read lock (lookups go on,
// commits wait for it), the file write does not.
func (ix *index) save(path string, created time.Time) error {
	ix.mu.RLock()
	cut := ix.now().Add(-ix.ttl).UnixNano()
	var buf bytes.Buffer
	buf.Grow(checkpointHeader + len(ix.marks)*(32+8+2+16) + 4)
	buf.Write(checkpointMagic[:])
	var w [8]byte
	put64 := func(v uint64) { binary.LittleEndian.PutUint64(w[:], v); buf.Write(w[:]) }
	put64(uint64(created.UnixNano()))
	put64(ix.applied)
	var legacy int64 // 0: none
	if !ix.legacy.IsZero() {
		legacy = ix.legacy.UnixNano()
	}
	put64(uint64(legacy))
	countAt := buf.Len()
	put64(0)
	var n uint64
	for d, m := range ix.marks {
		if m.at <= cut || len(m.origin) > 0xffff {
			continue
		}
		buf.Write(d[:])
		put64(uint64(m.at))
		binary.LittleEndian.PutUint16(w[:2], uint16(len(m.origin)))
		buf.Write(w[:2])
		buf.WriteString(m.origin)
		n++
	}
	ix.mu.RUnlock()
	b := buf.Bytes()
	binary.LittleEndian.PutUint64(b[countAt:], n)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return writeFileAtomic(path, b)
}

func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("ledger checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failed write
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("ledger checkpoint %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("ledger checkpoint %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("ledger checkpoint %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("ledger checkpoint %s: %w", path, err)
	}
	return nil
}

// errNoCheckpoint: the file is missing, unreadable or for another bucket;
// the index is read from the start.
var errNoCheckpoint = errors.New("no usable ledger checkpoint")

// load fills an empty index from the checkpoint at path if it was written
// for this stream (created) and does not claim more than the stream holds
// (lastSeq). Expired interchanges are left out.
func (ix *index) load(path string, created time.Time, lastSeq uint64) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return errNoCheckpoint
	}
	if len(b) < checkpointHeader+4 || !bytes.Equal(b[:8], checkpointMagic[:]) ||
		crc32.ChecksumIEEE(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return fmt.Errorf("%w: %s is damaged", errNoCheckpoint, path)
	}
	get64 := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	if int64(get64(8)) != created.UnixNano() {
		return fmt.Errorf("%w: %s was written for another bucket", errNoCheckpoint, path)
	}
	applied, legacy, n := get64(16), int64(get64(24)), get64(32)
	if applied > lastSeq {
		return fmt.Errorf("%w: %s has read past the bucket's end", errNoCheckpoint, path)
	}
	body := b[checkpointHeader : len(b)-4]
	if n > uint64(len(body))/(32+8+2) {
		return fmt.Errorf("%w: %s is short", errNoCheckpoint, path)
	}
	cut := ix.now().Add(-ix.ttl).UnixNano()
	marks := make(map[digest]mark, n)
	for range n {
		if len(body) < 32+8+2 {
			return fmt.Errorf("%w: %s is short", errNoCheckpoint, path)
		}
		var d digest
		copy(d[:], body)
		at := int64(binary.LittleEndian.Uint64(body[32:]))
		ol := int(binary.LittleEndian.Uint16(body[40:]))
		body = body[42:]
		if len(body) < ol {
			return fmt.Errorf("%w: %s is short", errNoCheckpoint, path)
		}
		if at > cut {
			marks[d] = mark{at: at, origin: string(body[:ol])}
		}
		body = body[ol:]
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.marks) == 0 {
		ix.marks, marks = marks, ix.marks
	}
	for d, m := range marks { // a commit may have come first: keep the later
		if cur, ok := ix.marks[d]; !ok || cur.at < m.at {
			ix.marks[d] = m
		}
	}
	ix.applied = max(ix.applied, applied)
	if legacy != 0 && time.Unix(0, legacy).After(ix.legacy) {
		ix.legacy = time.Unix(0, legacy)
	}
	return nil
}
