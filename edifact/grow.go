package edifact

// appendSegment appends *s to a message's segments, doubling a large
// slice where append grows it by a quarter: a message of 1.7 million tiny
// segments (9.9 MB) allocated five times its final 165 MB of segments by
// append, twice by doubling (BenchmarkStageMemory in hub/parse).
func appendSegment(segs []Segment, s *Segment) []Segment {
	if len(segs) == cap(segs) && cap(segs) >= growDoubleFrom {
		grown := make([]Segment, len(segs), 2*cap(segs))
		copy(grown, segs)
		segs = grown
	}
	return append(segs, *s)
}

// growDoubleFrom is where Go's append stops doubling (256 elements) and a
// few more: below it append already doubles.
const growDoubleFrom = 1024
