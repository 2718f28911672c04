package edifact

// keeper copies segments out of a ReuseSegment Reader into slabs, so that a
// parsed document costs a few large allocations instead of three small ones
// per segment. The strings need no copy: the Reader's string arena is never
// overwritten (see arena.go).
type keeper struct {
	strs  []string
	elems [][]string
}

// slabLen is the largest slab of kept strings; slabs start at slabFirst and
// double, so a small interchange does not pay for 64 KiB of string headers.
const (
	slabLen   = 4096
	slabFirst = 64
)

func (k *keeper) keep(s *Segment) Segment {
	out := *s
	n := 0
	for _, e := range s.Elements {
		n += len(e)
	}
	if cap(k.strs)-len(k.strs) < n {
		k.strs = make([]string, 0, max(min(slabLen, max(slabFirst, 2*cap(k.strs))), n))
	}
	if cap(k.elems)-len(k.elems) < len(s.Elements) {
		k.elems = make([][]string, 0, max(min(slabLen/4, max(slabFirst/4, 2*cap(k.elems))), len(s.Elements)))
	}
	elems := k.elems[len(k.elems) : len(k.elems)+len(s.Elements) : len(k.elems)+len(s.Elements)]
	k.elems = k.elems[:len(k.elems)+len(s.Elements)]
	for i, e := range s.Elements {
		start := len(k.strs)
		k.strs = append(k.strs, e...)
		elems[i] = k.strs[start:len(k.strs):len(k.strs)]
	}
	out.Elements = elems
	if s.Repeats != nil {
		out.Repeats = s.Clone().Repeats
	}
	return out
}

// reset lets the slabs be reused once the kept segments are dropped (Walk).
func (k *keeper) reset() {
	clear(k.strs)
	clear(k.elems)
	k.strs, k.elems = k.strs[:0], k.elems[:0]
}
