package edifact

import "sync"

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
}

// maxScratchSegments bounds what goes back to the pool: a rare huge
// message must not keep its buffer alive for every later small one.
const maxScratchSegments = 4096

var scratchPool = sync.Pool{New: func() any { return new(walkScratch) }}

// borrowScratch gives a Walk checker its reusable buffers.
func (c *checker) borrowScratch() {
	s := scratchPool.Get().(*walkScratch)
	c.segBuf, c.keep = s.segs, s.keep
	c.scratch = s
}

// returnScratch gives the buffers back once the Walk is over, cleared so
// that no string of this input stays reachable through them.
func (c *checker) returnScratch() {
	s := c.scratch
	if s == nil {
		return
	}
	c.scratch = nil
	segs := c.segBuf
	if c.msg != nil && cap(c.msg.Segments) > cap(segs) { // the Walk stopped inside a message
		segs = c.msg.Segments
	}
	clear(segs[:cap(segs)])
	c.keep.reset()
	clear(c.keep.strs[:cap(c.keep.strs)])
	clear(c.keep.elems[:cap(c.keep.elems)])
	if cap(segs) > maxScratchSegments {
		segs = nil
	}
	s.segs, s.keep = segs[:0], c.keep
	c.segBuf, c.keep = nil, keeper{}
	scratchPool.Put(s)
}
