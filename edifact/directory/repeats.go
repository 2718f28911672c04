package directory

// repeat is one repeat factor: the most occurrences of the data element ID
// (named so that a test can check it sits at that position of the shipped
// segment) that syntax 4's repetition separator may give.
type repeat struct {
	ID string
	N  int
}

// repeatFactors are the repeat factors the shipped reference data lacks:
// its XML transcription has no repeat column, so without this table every
// repetition is refused. Keyed by directory, segment tag and element
// position (1 = the first data element after the tag). Only factors read
// in a directory's own segment text (EDSD) or in a transcription of it are
// listed, each with where it was read; a position not listed allows one
// occurrence, and the refusal says that no factor is known (repeatFactor's
// second result).
//
// "underware" below is github.com/jskrobak/underware.Edifact at commit
// 40b42a5c54531496bce78fa438047328ce2ad7e3: per directory, one C# class
// per EDSD segment, src/underware.Edifact.<dir>/Segments/<TAG>.cs, whose
// ElementInfo attributes carry each data element's position (0-based),
// name, status and repeat, e.g. D03B COM.cs:
// `[ElementInfo(0, "COMMUNICATION CONTACT", "M", "3", "", "")]`. Its
// counts agree with the UN text where both were read (D.01B COM 3, quoted
// by funky-thunks below) and with the directories before syntax 4 having
// none (D96A ATT.cs: C956 "C", "1").
//
// The UN's own segment pages agree where they were found for directories
// on either side of D.03B: service.unece.org/trade/untdid/d99b/trsd/
// trsdadr.htm and .../d00a/trsd/trsdadr.htm ("060 C819 COUNTRY SUB-ENTITY
// DETAILS C 5", "070 C517 LOCATION IDENTIFICATION C 5"),
// .../d01c/trsd/trsdard.htm and .../d13a/trsd/trsdard.htm ("020 C008
// MONETARY AMOUNT FUNCTION DETAIL C 8"); GEFEG's D.01A and D.07A segment
// pages (www.gefeg.com/edifact/d01a/d01a.s3/gen/se/seb.htm,
// .../d07a/s3/se/seb.htm) give ATT "030 C956 Attribute detail C 5".
//
// Every segment of the three shipped syntax-4-era directories was read in
// underware (D03B 155, D01B 158, D99B 152 segments); the positions below
// are every one whose repeat is above 1, all others are 1 (so CUX, the
// corpus's CUX+3*1, stays refused: C504 is positions 010 and 020, each
// "C", "1"). One exception is left out on purpose: ARR C770 (D01B and D99B
// "C", "9999"; D03B "C", "1"), which the directory notes restrict to
// syntax version 3 ("The composite C770 - array cell details - occurs
// 9,999 times in the segment. The use of the ARR segment is restricted to
// be used only with Version 3 of ISO-9735", GEFEG's D.01A page
// www.gefeg.com/edifact/d01a/d01a.s3/gen/se/se9.htm): a count of
// consecutive data elements, not a syntax 4 repeat factor.
var repeatFactors = map[string]map[string]map[int]repeat{
	// underware, D03B Segments/ADR.cs (index 5 C819 "C", "5"; index 6
	// C517 "C", "5"), ARD.cs (index 1 C008 "C", "8"), ATT.cs (index 2
	// C956 "C", "5"), COM.cs (index 0 C076 "M", "3"), EVE.cs (index 3
	// C063 "C", "5"), IDE.cs (index 5 C778 "C", "99"), IFD.cs (index 3
	// C011 "C", "5").
	"D03B": syntax4Repeats,
	// D.01B EDSD, segment COM: "010    C076 COMMUNICATION CONTACT
	// M    3", the UN/EDIFACT directory text as quoted ("Derived from this
	// specification") in github.com/funky-thunks/edi-parser, file
	// specification/src/Text/Edifact/D01B/Segments/COM.hs, line 26
	// (commit a9d77a20008efe82862cc1adbfa7a6d4f09f8ff7); underware D01B
	// COM.cs agrees. The others: underware D01B ADR.cs, ARD.cs, ATT.cs,
	// EVE.cs, IDE.cs, IFD.cs, the same indexes and counts as D03B.
	"D01B": syntax4Repeats,
	// underware, D99B ADR.cs, ARD.cs, ATT.cs, COM.cs, IDE.cs: as D03B;
	// D99B EVE.cs and IFD.cs give 1 (C063, C011 "C", "1").
	"D99B": {
		"ADR": {6: {"C819", 5}, 7: {"C517", 5}},
		"ARD": {2: {"C008", 8}},
		"ATT": {3: {"C956", 5}},
		"COM": {1: {"C076", 3}},
		"IDE": {6: {"C778", 99}},
	},
}

// syntax4Repeats are the factors D03B and D01B give alike (D99B lacks
// EVE's and IFD's); read only.
var syntax4Repeats = map[string]map[int]repeat{
	"ADR": {6: {"C819", 5}, 7: {"C517", 5}},
	"ARD": {2: {"C008", 8}},
	"ATT": {3: {"C956", 5}},
	"COM": {1: {"C076", 3}},
	"EVE": {4: {"C063", 5}},
	"IDE": {6: {"C778", 99}},
	"IFD": {4: {"C011", 5}},
}

// repeatFactor is the repeat factor of element e of the segment tag in
// directory dir, and whether repeatFactors names it (if not, 1: one
// occurrence, since the shipped data gives no factor).
func repeatFactor(dir, tag string, e int) (n int, known bool) {
	if r, ok := repeatFactors[dir][tag][e]; ok && r.N >= 1 {
		return r.N, true
	}
	return 1, false
}
