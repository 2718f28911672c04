package directory

// repeatFactors are the repeat factors (the most occurrences of one data
// element position, syntax 4's repetition separator) the shipped reference
// data lacks: its XML transcription has no repeat column, so without this
// table every repetition is refused. Keyed by directory, segment tag and
// element position (1 = the first data element after the tag). Only
// factors read in a directory's own segment text (EDSD) or in a
// transcription of it are listed, each with where it was read; a position
// not listed allows one occurrence, and the refusal says that no factor is
// known (repeatFactor's second result).
//
// underware below is github.com/jskrobak/underware.Edifact at commit
// 40b42a5c54531496bce78fa438047328ce2ad7e3: per directory, one C# class per
// EDSD segment whose ElementInfo attributes carry the position (0-based),
// name, status and repeat of each data element, e.g. for D.03B COM
// `[ElementInfo(0, "COMMUNICATION CONTACT", "M", "3", "", "")]`. Its
// counts agree with the UN text where both were read (D.01B COM 3, quoted
// by funky-thunks below) and with the pre-syntax-4 directories having
// none (D.96A ATT C956 "C", "1").
var repeatFactors = map[string]map[string]map[int]int{
	// D.99B: underware src/underware.Edifact.D99B/Segments/COM.cs (C076
	// "M", "3") and Segments/ATT.cs (index 2, C956 "ATTRIBUTE DETAIL",
	// "C", "5").
	"D99B": {"COM": {1: 3}, "ATT": {3: 5}},
	// D.01B EDSD, segment COM: "010    C076 COMMUNICATION CONTACT
	// M    3", the UN/EDIFACT directory text as quoted ("Derived from this
	// specification") in github.com/funky-thunks/edi-parser, file
	// specification/src/Text/Edifact/D01B/Segments/COM.hs, line 26
	// (commit a9d77a20008efe82862cc1adbfa7a6d4f09f8ff7); underware
	// src/underware.Edifact.D01B/Segments/COM.cs agrees. ATT: underware
	// src/underware.Edifact.D01B/Segments/ATT.cs (index 2, C956 "C", "5").
	"D01B": {"COM": {1: 3}, "ATT": {3: 5}},
	// D.03B: underware src/underware.Edifact.D03B/Segments/COM.cs (index
	// 0, C076 "COMMUNICATION CONTACT", "M", "3") and Segments/ATT.cs
	// (index 2, C956 "ATTRIBUTE DETAIL", "C", "5"). CUX (the corpus's
	// CUX+3*1) has none: Segments/CUX.cs gives C504 twice, as positions
	// 010 and 020, each "C", "1", so a repeated 010 stays refused.
	"D03B": {"COM": {1: 3}, "ATT": {3: 5}},
}

// repeatFactor is the repeat factor of element e of the segment tag in
// directory dir, and whether repeatFactors names it (if not, 1: one
// occurrence, since the shipped data gives no factor).
func repeatFactor(dir, tag string, e int) (n int, known bool) {
	if n, ok := repeatFactors[dir][tag][e]; ok && n >= 1 {
		return n, true
	}
	return 1, false
}
