package edifact

// arenaSize is the largest string arena block: a segment's strings are
// carved from a shared block instead of one allocation per segment, which
// halves the allocations of the Reader and the GC work on a 10 MB
// interchange. Blocks start at arenaFirst and double, so a 1 KB interchange
// (the common case in the hub) does not pay for 32 KiB.
const (
	arenaSize  = 32 << 10
	arenaFirst = 1 << 10
)

// arenaFor returns an empty slice at the free end of the arena with room for
// n bytes, starting a new arena block when the current one is too full.
//
// Why unsafe is sound here: bytes written into the arena become strings in
// tokenize (unsafe.String) and are never written again, because later segments only
// append after them and a full block is abandoned, never reset. A block stays
// alive as long as any string points into it (the garbage collector follows
// interior pointers), so nothing dangles.
func (r *Reader) arenaFor(n int) []byte {
	if cap(r.arena)-len(r.arena) < n {
		next := min(arenaSize, max(arenaFirst, 2*cap(r.arena)))
		if cap(r.arena) == 0 && r.arenaHint > 0 {
			// The first block holds the whole input when it is small:
			// the strings are never longer than the input.
			next = min(arenaSize, max(arenaFirst, r.arenaHint))
		}
		r.arena = make([]byte, 0, max(next, n))
	}
	free := r.arena[len(r.arena):]
	return free[:0:n]
}
