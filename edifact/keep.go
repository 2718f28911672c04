package edifact

// keeper holds the slices of the segments a checker keeps, in slabs, so
// that a parsed document costs a few large allocations instead of three
// small ones per segment: the Reader of a checker (Reader.keep) builds each
// segment's slices here directly, so the checker keeps a segment by copying
// the Segment struct. The strings need no copy: the Reader's string arena is
// never overwritten (see arena.go).
type keeper struct {
	strs  []string
	elems [][]string
	// hi and ehi are the most of strs and elems used since the slab was
	// made or cleared: reset only rewinds (the next message overwrites;
	// a small input's Walk), clearReset clears what was used (Check, large
	// inputs: memory bounded by the largest message), release clears up to
	// the high-water mark. Clearing whole slabs after every message
	// and Walk was a tenth of the parse stage's time (pointer memory is
	// cleared with write barriers while the GC runs).
	hi, ehi int
}

// slabLen is the largest slab of kept strings; slabs start at slabFirst and
// double, so a small interchange does not pay for 64 KiB of string headers.
const (
	slabLen   = 4096
	slabFirst = 64
)

// strings returns an empty slice with room for n strings, from the slab.
func (k *keeper) strings(n int) []string {
	if cap(k.strs)-len(k.strs) < n {
		k.strs = make([]string, 0, max(min(slabLen, max(slabFirst, 2*cap(k.strs))), n))
		k.hi = 0
	}
	start := len(k.strs)
	k.strs = k.strs[:start+n]
	return k.strs[start : start : start+n]
}

// elements returns an empty slice with room for n elements, from the slab.
func (k *keeper) elements(n int) [][]string {
	if cap(k.elems)-len(k.elems) < n {
		k.elems = make([][]string, 0, max(min(slabLen/4, max(slabFirst/4, 2*cap(k.elems))), n))
		k.ehi = 0
	}
	start := len(k.elems)
	k.elems = k.elems[:start+n]
	return k.elems[start : start : start+n]
}

// reset lets the slabs be reused once the kept segments are dropped (Walk).
// What they hold stays until overwritten or release.
func (k *keeper) reset() {
	k.hi, k.ehi = max(k.hi, len(k.strs)), max(k.ehi, len(k.elems))
	k.strs, k.elems = k.strs[:0], k.elems[:0]
}

// clearReset is reset with the used part of the slabs cleared first.
func (k *keeper) clearReset() {
	clear(k.strs)
	clear(k.elems)
	k.strs, k.elems = k.strs[:0], k.elems[:0]
}

// release clears what the slabs were used for, so that they can go back to
// the pool without keeping any string reachable.
func (k *keeper) release() {
	k.reset()
	clear(k.strs[:k.hi])
	clear(k.elems[:k.ehi])
	k.hi, k.ehi = 0, 0
}
