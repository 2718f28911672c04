package directory

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// corpusDir is the shared corpus: $EDIHUB_CORPUS or ../../../shared/corpus
// (the worktree's sibling "shared", as for package edifact).
func corpusDir() string {
	if d := os.Getenv("EDIHUB_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "corpus")
}

// corpusResult is what directory validation says about one corpus file.
type corpusResult struct {
	msgs      int    // EDIFACT messages handed over by edifact.Walk (lenient)
	validated int    // of which a shipped directory defines the type/version
	failLen   int    // messages with an error in lenient mode (the default)
	failStr   int    // messages with an error in strict mode
	first     string // first error in lenient mode, "code N segment P TAG", "" if none
	firstStr  string // first error in strict mode
}

// corpusDirResults runs every corpus file through edifact.Walk (lenient, so
// that envelope-sloppy files still hand over their messages) and the
// validator in lenient and strict mode.
func corpusDirResults(t *testing.T) (map[string]corpusResult, []string) {
	t.Helper()
	dir := corpusDir()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		t.Skipf("no corpus at %s (set EDIHUB_CORPUS)", dir)
	}
	set := builtin(t)
	lenient, _ := NewValidator(set, nil)
	strict, _ := NewValidator(set, &Options{Strictness: Strict})
	out := map[string]corpusResult{}
	var names []string
	for _, f := range files {
		name := filepath.Base(f)
		if name == "README.md" || name == "SOURCES.tsv" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r corpusResult
		_, _ = edifact.Walk(data, &edifact.Options{Lenient: true}, func(m *edifact.Message) error {
			if m.Interchange == nil || m.Interchange.Standard != "EDIFACT" {
				return nil
			}
			r.msgs++
			lr := lenient.Validate(m)
			if lr.Validated {
				r.validated++
			}
			if err := lr.Err(); err != nil {
				r.failLen++
				if r.first == "" {
					f := err.(*Error).First()
					r.first = fmt.Sprintf("code %d segment %d %s", f.Code, f.Segment, f.Tag)
				}
			}
			if err := strict.Validate(m).Err(); err != nil {
				r.failStr++
				if r.firstStr == "" {
					f := err.(*Error).First()
					r.firstStr = fmt.Sprintf("code %d segment %d %s", f.Code, f.Segment, f.Tag)
				}
			}
			return nil
		})
		out[name] = r
		names = append(names, name)
	}
	slices.Sort(names)
	return out, names
}

// corpusDirWant is the expected directory-validation outcome per corpus
// file that holds EDIFACT messages (files not listed hand over none: X12,
// or refused by the envelope checks before the first UNT). Each failing
// entry was checked by reading the file; the comment says what is wrong.
var corpusDirWant = map[string]corpusResult{
	// Directories not shipped (D00A, D00B, D04B, D93A, IATA PAORES/PNRGOV, a
	// "CUSTOM" type, DESADV with version "0"): not validated; a warning (code
	// 14) in lenient mode, an error in strict mode.
	"apimeister__d00b_iftsta.edi": {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"apimeister__d04b_baplie.edi": {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	// EANCOM files: valid structure; codes from EAN lists (PIA 7143 "GU",
	// BGM 1001 "73E", PRI 5125 "NTP", TAX 5153 "ACT") fail strict only.
	"bots-plugins__146.edi":                                        {2, 2, 0, 2, "", "code 12 segment 10 PIA"},
	"bots-plugins__orders01.edi":                                   {2, 2, 0, 2, "", "code 12 segment 2 BGM"},
	"bots-plugins__orders02.edi":                                   {24, 24, 0, 4, "", "code 12 segment 8 TAX"},
	"bots-plugins__slsrpt01.edi":                                   {2, 2, 0, 2, "", "code 12 segment 2 BGM"},
	"edifabric__Edifact_INVOIC_D00A.txt":                           {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_BOM.txt":                       {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_BadSegment.txt":                {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_CR.txt":                        {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_EscapedRepetition.txt":         {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_EscapedSegmentTerminator.txt":  {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_Group.txt":                     {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_InvalidTrailers.txt":           {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_MissingGroupTrailer.txt":       {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_MissingInterchangeTrailer.txt": {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_MultipleInterchange.txt":       {2, 0, 0, 2, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_RepeatingDataElement.txt":      {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"edifabric__Edifact_INVOIC_D00A_ValidAndInvalidMessage.txt":    {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	// UNS+Z: 0081 knows D and S only (strict).
	"edireader__ORDERS-D01B-UNOE.edi": {1, 1, 0, 1, "", "code 12 segment 261 UNS"},
	// UNH BGM NAD UNT: INVOIC D97B needs DTM after BGM, UNS and the
	// summary MOA group: the first missing one is named at NAD.
	"edireader__tiny-UNOE.edi":                {1, 1, 1, 1, "code 13 segment 3 NAD", "code 13 segment 3 NAD"},
	"edireader__tiny-syntaxVariants-UNOA.edi": {1, 1, 1, 1, "code 13 segment 3 NAD", "code 13 segment 3 NAD"},
	"gofact__message_err3.edi":                {1, 1, 0, 0, "", ""},
	// MEA 6313 "EGW" (an SMDG code) fails strict only.
	"php-edifact__D95BCOARRI.edi": {2, 2, 0, 2, "", "code 12 segment 14 MEA"},
	"php-edifact__D96ADESADV.edi": {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	// QTY 6411 "GBND" is 4 characters, an..3 (the file is an error example).
	"php-edifact__example_order_error.edi": {1, 1, 1, 1, "code 39 segment 16 QTY", "code 39 segment 16 QTY"},
	"php-edifact__example_utf8.edi":        {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"php-edifact__example_wrapped.edi":     {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"pydifact__order.edi":                  {1, 1, 0, 0, "", ""},
	// Syntax 4 repetition. CUX+3*1 repeats CUX position 010 (C504), whose
	// D03B repeat factor is 1 (a second C504 is position 020): 35 in both
	// modes. ATT+2++M*M*M*M*M is C956 five times, D03B's factor for ATT
	// element 3 (repeatFactors names its source): valid.
	"smooks__invoic_d03b_v4.txt": {1, 1, 1, 1, "code 35 segment 11 CUX", "code 35 segment 11 CUX"},
	"smooks__paxlst.txt":         {1, 1, 0, 0, "", ""},
	// NAD 3036 of 38 characters (an..35); RFF 1153 "YC1" fails strict too.
	"smooks__recadv.txt":          {1, 1, 1, 1, "code 39 segment 12 NAD", "code 12 segment 8 RFF"},
	"staedi__baplie-test.edi":     {1, 1, 0, 0, "", ""},
	"staedi__invoic_d93a_una.edi": {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	// CUX+1:USD passes only thanks to overrides.xml (D97B C504 lacks 6345
	// in the reference data; see TestReferenceData).
	"staedi__invoic_d97b.edi": {1, 1, 0, 0, "", ""},
	// NAD+BYZZ: 3035 is an..3; also QTY 6060 "1020A" (37).
	"staedi__invoic_d97b_bad.edi":             {1, 1, 1, 1, "code 39 segment 5 NAD", "code 39 segment 5 NAD"},
	"staedi__invoic_d97b_una.edi":             {1, 1, 0, 0, "", ""},
	"staedi__null-pointer-example.edi":        {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"staedi__other_dialect_term_segments.edi": {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
	"staedi__pnrgov.edi":                      {1, 0, 0, 1, "", "code 14 segment 1 UNH"},
}

func TestCorpusDirectoryValidation(t *testing.T) {
	got, names := corpusDirResults(t)
	var files, withMsgs, validatedFiles, failLenFiles, failStrFiles, msgs, validated, failLen, failStr int
	var report strings.Builder
	for _, n := range names {
		r := got[n]
		files++
		msgs += r.msgs
		validated += r.validated
		failLen += r.failLen
		failStr += r.failStr
		if r.msgs > 0 {
			withMsgs++
		}
		if r.validated > 0 {
			validatedFiles++
		}
		if r.failLen > 0 {
			failLenFiles++
		}
		if r.failStr > 0 {
			failStrFiles++
		}
		if r.msgs > 0 {
			fmt.Fprintf(&report, "%s|%d|%d|%d|%d|%s|%s\n", n, r.msgs, r.validated, r.failLen, r.failStr, r.first, r.firstStr)
		}
	}
	t.Logf("per file:\n%s", report.String())
	t.Logf("corpus: %d files, %d hand over EDIFACT messages (%d messages); %d files (%d messages) have a shipped directory; "+
		"failing in lenient (default): %d files, %d messages; in strict: %d files, %d messages",
		files, withMsgs, msgs, validatedFiles, validated, failLenFiles, failLen, failStrFiles, failStr)
	for _, n := range names {
		w, listed := corpusDirWant[n]
		if g := got[n]; listed && g != w || !listed && g.msgs > 0 {
			t.Errorf("%s: got %+v, want %+v (listed %v)", n, g, w, listed)
		}
	}
}
