package directory

// repeatFactors are the repeat factors (the most occurrences of one data
// element position, syntax 4's repetition separator) the shipped reference
// data lacks: its XML transcription has no repeat column, so without this
// table every repetition is refused. Keyed by directory, segment tag and
// element position (1 = the first data element after the tag). Only
// factors read in a directory's own segment text (EDSD) are listed, each
// with where it was read; a position not listed allows one occurrence.
var repeatFactors = map[string]map[string]map[int]int{
	// D.01B EDSD, segment COM: "010    C076 COMMUNICATION CONTACT
	// M    3", the UN/EDIFACT directory text as quoted ("Derived from this
	// specification") in github.com/funky-thunks/edi-parser, file
	// specification/src/Text/Edifact/D01B/Segments/COM.hs, line 26
	// (commit a9d77a20008efe82862cc1adbfa7a6d4f09f8ff7).
	"D01B": {"COM": {1: 3}},
}

// repeatFactor is the repeat factor of element e of the segment tag in
// directory dir: 1 unless repeatFactors names one.
func repeatFactor(dir, tag string, e int) int {
	if n := repeatFactors[dir][tag][e]; n > 1 {
		return n
	}
	return 1
}
