package edifact

import (
	"bytes"
	"io"
	"sync"
)

// walkScratch is what a Walk's checker may reuse from an earlier Walk: the
// segment slice of the open message and the keeper's slabs. Walk hands
// segments to its callback only for the length of the call, so nothing a
// caller may keep points into them; reusing them spares a stream of small
// interchanges (the hub's usual load) two growing allocations each, which
// showed as a fifth of the parse stage's CPU (allocation, write barriers).
// Parse keeps its segments and never uses the pool.
type walkScratch struct {
	segs []Segment
	keep keeper
	// The Reader with its read buffer and tokenizer slices, its input, and
	// the message references map: per Walk they were a dozen allocations,
	// most of the allocations of a 1 KB interchange.
	rd   *Reader
	src  bytes.Reader
	refs map[string]int
	// segsHi is how much of segs may still hold segments of an earlier
	// small input (returnScratch leaves them uncleared).
	segsHi int
}

// smallWalk is the input size up to which returnScratch leaves the pooled
// slabs uncleared.
const smallWalk = 64 << 10

// maxScratchSegments bounds what goes back to the pool: a rare huge
// message must not keep its buffer alive for every later small one.
const maxScratchSegments = 4096

var scratchPool = sync.Pool{New: func() any { return new(walkScratch) }}

// borrowScratch gives a Walk checker its reusable buffers.
func (c *checker) borrowScratch() {
	s := scratchPool.Get().(*walkScratch)
	c.segBuf, c.keep, c.segsHi = s.segs, s.keep, s.segsHi
	c.scratch = s
}

// returnScratch gives the buffers back once the Walk is over, cleared so
// that no string of this input stays reachable through them (unless the
// input was small, see smallWalk).
func (c *checker) returnScratch() {
	s := c.scratch
	if s == nil {
		return
	}
	c.scratch = nil
	segs, hi := c.segBuf, c.segsHi
	if c.msg != nil { // the Walk stopped inside a message
		if cap(c.msg.Segments) > cap(segs) {
			segs = c.msg.Segments // grown: the old array is dropped
		}
		hi = max(hi, len(c.msg.Segments))
	}
	s.segsHi = 0
	if c.inputLen > smallWalk {
		clear(segs[:min(hi, cap(segs))])
		c.keep.release()
	} else {
		s.segsHi = min(hi, cap(segs)) // for the Walk that clears them
		// A small input: what the slabs still point to (its strings, at
		// most its size) may stay reachable until the next Walk overwrites
		// it or the pool drops it. Clearing pointer memory costs write
		// barriers while the GC runs, and was a tenth of the hub's parse
		// stage on 1 KB interchanges.
		c.keep.reset()
	}
	if cap(segs) > maxScratchSegments {
		segs, s.segsHi = nil, 0
	}
	s.src.Reset(nil)
	if rd := s.rd; rd != nil {
		// Nothing of this input may stay reachable: the strings the Reader
		// made point into its arena, which the returned Document still uses.
		rd.Reset(nil)
		rd.arena, rd.out, rd.seg, rd.raw1 = nil, nil, Segment{}, RawSegment{}
		rd.text, rd.cur, rd.keep, rd.arenaHint = nil, nil, nil, 0
		clear(rd.comps[:cap(rd.comps)])
		clear(rd.elems[:cap(rd.elems)])
		if cap(rd.comps) > 4*maxScratchSegments || cap(rd.raw) > readerBufSize {
			s.rd = nil // a huge segment: let its buffers go
		}
	}
	clear(s.refs)
	s.segs, s.keep = segs[:0], c.keep
	c.segBuf, c.keep = nil, keeper{}
	scratchPool.Put(s)
}

// reader returns the pooled Reader reading src (n bytes), or a new one when
// the pooled one's buffer is smaller than n needs.
func (s *walkScratch) reader(src io.Reader, n int, o *Options) *Reader {
	rd := s.rd
	if rd == nil || rd.br.Size() < min(n+1, readerBufSize) {
		rd = newReaderOptions(src, n, o)
		s.rd = rd
		return rd
	}
	rd.Reset(src)
	rd.MaxSegmentLen, rd.MaxElementLen = o.MaxSegmentLen, o.MaxElementLen
	rd.ReuseSegment, rd.BaseOffset = false, 0
	return rd
}

// newRefs returns an empty map for the message references of an
// interchange: the pooled one for the first interchange of a Walk.
func (c *checker) newRefs() map[string]int {
	if s := c.scratch; s != nil && !c.refsTaken {
		c.refsTaken = true
		if s.refs == nil {
			s.refs = map[string]int{}
		}
		return s.refs
	}
	return map[string]int{}
}
