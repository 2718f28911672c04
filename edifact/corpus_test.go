package edifact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outcome is the expected result of Parse on one corpus file.
type outcome struct {
	ok                       bool
	interchanges, msgs, segs int // when ok

	guard   bool   // refused by Guard (else by the reader or envelope checks)
	code    int    // code list 0085
	offset  int64  // byte offset of the error
	segment int    // segment number (ParseError only; 0 for a trailer missing at the end)
	tag     string // segment tag (ParseError only)
}

func ok(ic, msgs, segs int) outcome {
	return outcome{ok: true, interchanges: ic, msgs: msgs, segs: segs}
}
func guardErr(code int, off int64) outcome {
	return outcome{guard: true, code: code, offset: off}
}
func parseErr(code int, off int64, seg int, tag string) outcome {
	return outcome{code: code, offset: off, segment: seg, tag: tag}
}

// corpusWant gives, for every corpus file, the outcome in strict mode and in
// lenient mode. Decided by reading each file (SOURCES.tsv's auto_check is
// only a heuristic); the comments say why where it is not obvious.
var corpusWant = []struct {
	file            string
	strict, lenient outcome
}{
	// UNZ reference 2805570 vs UNB 2803570.
	{"apimeister__d00b_iftsta.edi", parseErr(CodeReferenceMismatch, 953, 33, "UNZ"), parseErr(CodeReferenceMismatch, 953, 33, "UNZ")},
	// Valid envelope; the 8-digit date under syntax 2 is a content issue we do not judge.
	{"apimeister__d04b_baplie.edi", ok(1, 1, 21), ok(1, 1, 21)},
	// Message body without UNB: refused with "UNH but no UNB".
	{"apimeister__d95b_coprar.edi", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	{"bots-plugins__146.edi", ok(1, 2, 923), ok(1, 2, 923)},
	// Mailbag of X12 interchanges; the sixth puts a space after each "~":
	// only CR/LF may separate segments, so " GS" is not a tag.
	{"bots-plugins__mailbag01.x12", parseErr(CodeInvalidValue, 7637, 286, " GS"), parseErr(CodeInvalidValue, 7637, 286, " GS")},
	// Mixed CRLF and LF line ends between segments are fine.
	{"bots-plugins__orders01.edi", ok(1, 2, 40), ok(1, 2, 40)},
	{"bots-plugins__orders02.edi", ok(24, 24, 460), ok(24, 24, 460)},
	// UNOB with UNA ":+.? '": level-B text with level-A style separators.
	{"bots-plugins__slsrpt01.edi", ok(2, 2, 1406), ok(2, 2, 1406)},
	// UNT count 313, message has 30.
	{"cuscar-tools__simple.edi", parseErr(CodeCountMismatch, 830, 31, "UNT"), parseErr(CodeCountMismatch, 830, 31, "UNT")},
	// BOM, then UNB+UNOB without the mandatory syntax version.
	{"edifabric__CONTRL_head.txt", guardErr(CodeMissing, 11), guardErr(CodeMissing, 11)},
	// The edifabric INVOICs carry Latin-1 0xDF (or UTF-8) under 7-bit UNOB:
	// refused in strict mode, a warning in lenient mode.
	{"edifabric__Edifact_INVOIC_D00A.txt", guardErr(CodeInvalidCharacter, 811), ok(1, 1, 43)},
	{"edifabric__Edifact_INVOIC_D00A_BOM.txt", guardErr(CodeInvalidCharacter, 814), ok(1, 1, 43)},
	// BGL instead of BGM is a well-formed tag: directories are not our job.
	{"edifabric__Edifact_INVOIC_D00A_BadSegment.txt", guardErr(CodeInvalidCharacter, 811), ok(1, 1, 43)},
	{"edifabric__Edifact_INVOIC_D00A_CR.txt", guardErr(CodeInvalidCharacter, 780), ok(1, 1, 43)},
	// "?*" under syntax 1: '*' is no separator there; releasing it is tolerated.
	{"edifabric__Edifact_INVOIC_D00A_EscapedRepetition.txt", guardErr(CodeInvalidCharacter, 845), ok(1, 1, 44)},
	{"edifabric__Edifact_INVOIC_D00A_EscapedSegmentTerminator.txt", guardErr(CodeInvalidCharacter, 819), ok(1, 1, 43)},
	{"edifabric__Edifact_INVOIC_D00A_Group.txt", guardErr(CodeInvalidCharacter, 839), ok(1, 1, 45)},
	{"edifabric__Edifact_INVOIC_D00A_InvalidHeader.txt", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	// "1r" after UNZ is not an interchange header.
	{"edifabric__Edifact_INVOIC_D00A_InvalidTrailers.txt", guardErr(CodeInvalidCharacter, 811), parseErr(CodeMissing, 998, 44, "")},
	{"edifabric__Edifact_INVOIC_D00A_MissingGroupTrailer.txt", guardErr(CodeInvalidCharacter, 839), parseErr(CodeMissing, 1014, 44, "UNZ")},
	{"edifabric__Edifact_INVOIC_D00A_MissingInterchangeTrailer.txt", guardErr(CodeInvalidCharacter, 811), parseErr(CodeMissing, 986, 43, "UNA")},
	// Second interchange with its own UNA ("|" separators).
	{"edifabric__Edifact_INVOIC_D00A_MultipleInterchange.txt", guardErr(CodeInvalidCharacter, 811), ok(2, 2, 86)},
	// The first of many faults: a CR inside the 7.9 KB CTA segment.
	{"edifabric__Edifact_INVOIC_D00A_MultipleInvalidMessages.txt", guardErr(CodeInvalidCharacter, 8678), parseErr(CodeInvalidCharacter, 1095, 9, "CTA")},
	// '*' under syntax 1 is data, not repetition.
	{"edifabric__Edifact_INVOIC_D00A_RepeatingDataElement.txt", guardErr(CodeInvalidCharacter, 847), ok(1, 1, 44)},
	// Second UNH reuses the reference of the first (before the UNZ count error).
	{"edifabric__Edifact_INVOIC_D00A_ValidAndInvalidMessage.txt", guardErr(CodeInvalidCharacter, 811), parseErr(CodeDuplicate, 986, 43, "UNH")},
	{"edifabric__X12_810_00204_InvalidHeader.txt", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	{"edifabric__X12_810_00204_SegmentSeparatorLF.txt", ok(1, 1, 49), ok(1, 1, 49)},
	// ISO 8859-5 bytes under UNOE are in the repertoire.
	{"edireader__ORDERS-D01B-UNOE.edi", ok(1, 1, 272), ok(1, 1, 272)},
	{"edireader__tiny-UNOE.edi", ok(1, 1, 6), ok(1, 1, 6)},
	{"edireader__tiny-syntaxVariants-UNOA.edi", guardErr(CodeInvalidCharacter, 75), ok(1, 1, 6)},
	{"go-edilib__invrpt1.txt", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	{"gofact__eancom_ord.edi", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	{"gofact__message_err.edi", guardErr(CodeMissing, 11), guardErr(CodeMissing, 11)},
	{"gofact__message_err3.edi", parseErr(CodeMissing, 250, 0, "UNZ"), parseErr(CodeMissing, 250, 0, "UNZ")},
	{"gofact__message_err4.edi", parseErr(CodeMissing, 242, 10, "UNZ"), parseErr(CodeMissing, 242, 10, "UNZ")},
	{"gofact__message_err5.edi", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	{"php-edifact__D95BCOARRI.edi", ok(1, 2, 272), ok(1, 2, 272)},
	{"php-edifact__D96ADESADV.edi", ok(1, 1, 23), ok(1, 1, 23)},
	// A raw LF inside FTX.
	{"php-edifact__example_multiline.edi", parseErr(CodeInvalidCharacter, 323, 7, "FTX"), parseErr(CodeInvalidCharacter, 323, 7, "FTX")},
	// Mis-transcoded U+FFFD bytes are valid ISO 8859-1; the unreleased ':' is
	// a component separator. Its errors are semantic, not syntactic.
	{"php-edifact__example_order_error.edi", ok(1, 1, 601), ok(1, 1, 601)},
	// The release runs parse; the UNT count (14 for 23) does not.
	{"php-edifact__example_release_character.edi", parseErr(CodeCountMismatch, 590, 24, "UNT"), parseErr(CodeCountMismatch, 590, 24, "UNT")},
	// UTF-8 "Ë" = C3 8B: 0x8B is a C1 control, not ISO 8859-1 text.
	{"php-edifact__example_utf8.edi", guardErr(CodeInvalidCharacter, 273), ok(1, 1, 23)},
	{"php-edifact__example_wrapped.edi", ok(1, 1, 15), ok(1, 1, 15)},
	{"pydifact__aperak_rejected_v4.edi", guardErr(CodeInvalidCharacter, 166), parseErr(CodeCountMismatch, 203, 8, "UNT")},
	{"pydifact__order.edi", parseErr(CodeMissing, 367, 0, "UNZ"), parseErr(CodeMissing, 367, 0, "UNZ")},
	// ANSI:1 is no syntax identifier; lenient goes on and finds date and time
	// sent as two data elements, so S004's time is missing.
	{"pydifact__patient1.edi", guardErr(CodeSyntaxNotSupported, 4), parseErr(CodeMissing, 0, 1, "UNB")},
	// 362 bytes of proprietary header before UNA.
	{"pydifact__sage_coala.ped", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	{"smooks__bad-paxlst.txt", parseErr(CodeCountMismatch, 469, 19, "UNT"), parseErr(CodeCountMismatch, 469, 19, "UNT")},
	{"smooks__invoic_body_no_envelope.edi", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	{"smooks__invoic_d03b_v4.txt", ok(1, 1, 38), ok(1, 1, 38)},
	{"smooks__paxlst.txt", ok(1, 1, 20), ok(1, 1, 20)},
	{"smooks__recadv.txt", guardErr(CodeInvalidCharacter, 247), ok(1, 1, 26)},
	{"staedi__baplie-test.edi", ok(1, 1, 21), ok(1, 1, 21)},
	// GS04 is BAD_DATE (the X12.5 field check finds it first; GE02 is not
	// GS06 either).
	{"staedi__invalid997_min.edi", parseErr(CodeInvalidValue, 107, 2, "GS"), parseErr(CodeInvalidValue, 107, 2, "GS")},
	{"staedi__invoic_d93a_una.edi", guardErr(CodeInvalidCharacter, 180), ok(1, 1, 30)},
	{"staedi__invoic_d97b.edi", guardErr(CodeInvalidCharacter, 229), ok(1, 1, 26)},
	// '$' is outside UNOA; the bad codes and quantities are content.
	{"staedi__invoic_d97b_bad.edi", guardErr(CodeInvalidCharacter, 351), ok(1, 1, 27)},
	{"staedi__invoic_d97b_una.edi", ok(1, 1, 26), ok(1, 1, 26)},
	{"staedi__invoice810_po850_dual.edi", ok(1, 3, 77), ok(1, 3, 77)},
	// IATA:1 with a repetition character in UNA that syntax 1 ignores.
	{"staedi__null-pointer-example.edi", ok(1, 1, 11), ok(1, 1, 11)},
	{"staedi__order.edi", guardErr(CodeMissing, 0), guardErr(CodeMissing, 0)},
	{"staedi__orders-with-group.edi", parseErr(CodeCountMismatch, 545, 20, "UNT"), parseErr(CodeCountMismatch, 545, 20, "UNT")},
	// IEA and END inside an EDIFACT message are plain segments.
	{"staedi__other_dialect_term_segments.edi", ok(1, 1, 6), ok(1, 1, 6)},
	{"staedi__pnrgov.edi", ok(1, 1, 87), ok(1, 1, 87)},
	{"staedi__simple997.edi", ok(1, 1, 12), ok(1, 1, 12)},
	// BIN segments carry length-prefixed data with line feeds.
	{"staedi__simple_with_binary_segment.edi", ok(1, 1, 9), ok(1, 1, 9)},
	// A line break inside the fixed-width ISA.
	{"staedi__ts210_80char.edi", guardErr(CodeInvalidServiceChar, 81), guardErr(CodeInvalidServiceChar, 81)},
	// "…" as terminator: its first byte 0xE2 cannot be a separator.
	{"staedi__ts214_ellipses_segterm.edi", guardErr(CodeInvalidServiceChar, 105), guardErr(CodeInvalidServiceChar, 105)},
	{"staedi__wrapped_invoic_d97b.edi", guardErr(CodeInvalidCharacter, 227), parseErr(CodeInvalidCharacter, 50, 1, "UNB")},
}

func TestCorpus(t *testing.T) {
	dir := corpusDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*__*"))
	if len(files) == 0 {
		t.Skipf("corpus not found in %s: set EDIHUB_CORPUS to the shared corpus directory", dir)
	}
	listed := map[string]bool{}
	for _, c := range corpusWant {
		listed[c.file] = true
	}
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("corpus file %s has no expected outcome in corpusWant", filepath.Base(f))
		}
	}
	for _, c := range corpusWant {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		for _, mode := range []struct {
			name string
			opts *Options
			want outcome
		}{{"strict", nil, c.strict}, {"lenient", &Options{Lenient: true}, c.lenient}} {
			t.Run(c.file+"/"+mode.name, func(t *testing.T) {
				doc, err := Parse(data, mode.opts)
				checkOutcome(t, doc, err, mode.want, len(data))
			})
		}
	}
}

func checkOutcome(t *testing.T, doc *Document, err error, want outcome, size int) {
	t.Helper()
	if want.ok {
		if err != nil {
			t.Fatalf("want success, got %v", err)
		}
		if got := len(doc.Interchanges); got != want.interchanges {
			t.Errorf("interchanges = %d, want %d", got, want.interchanges)
		}
		if got := len(doc.Messages()); got != want.msgs {
			t.Errorf("messages = %d, want %d", got, want.msgs)
		}
		if doc.Segments != want.segs {
			t.Errorf("segments = %d, want %d", doc.Segments, want.segs)
		}
		return
	}
	if err == nil {
		t.Fatalf("want error code %d at offset %d, got success", want.code, want.offset)
	}
	checkErrorContract(t, err, size)
	var ge *GuardError
	var pe *ParseError
	switch {
	case want.guard:
		if !errors.As(err, &ge) {
			t.Fatalf("want *GuardError, got %T: %v", err, err)
		}
		if ge.Code != want.code || ge.Offset != want.offset {
			t.Errorf("got code %d at offset %d, want code %d at %d: %v", ge.Code, ge.Offset, want.code, want.offset, err)
		}
	default:
		if !errors.As(err, &pe) {
			t.Fatalf("want *ParseError, got %T: %v", err, err)
		}
		if pe.Code != want.code || pe.Offset != want.offset || pe.Segment != want.segment || pe.Tag != want.tag {
			t.Errorf("got code %d at offset %d segment %d %q, want code %d at %d segment %d %q: %v",
				pe.Code, pe.Offset, pe.Segment, pe.Tag, want.code, want.offset, want.segment, want.tag, err)
		}
	}
}

// checkErrorContract checks what the hub relies on: Cause() == "schema", a
// printable one-line message, and an offset inside the input.
func checkErrorContract(t *testing.T, err error, size int) {
	t.Helper()
	c, ok := err.(interface{ Cause() string })
	if !ok || c.Cause() != CauseSchema {
		t.Fatalf("error %T has no Cause() == schema: %v", err, err)
	}
	msg := err.Error()
	for i := 0; i < len(msg); i++ {
		if msg[i] < 0x20 || msg[i] > 0x7e {
			t.Fatalf("error message has byte 0x%02X: %q", msg[i], msg)
		}
	}
	if !strings.Contains(msg, "offset") {
		t.Errorf("error message has no position: %s", msg)
	}
	var off int64 = -1
	var ge *GuardError
	var pe *ParseError
	if errors.As(err, &ge) {
		off = ge.Offset
	} else if errors.As(err, &pe) {
		off = pe.Offset
		if pe.Line < 1 || pe.Column < 1 {
			t.Errorf("line %d column %d: %v", pe.Line, pe.Column, err)
		}
	}
	if off < 0 || off > int64(size) {
		// Only the size refusal may point past the input (at the limit).
		if ge == nil || ge.Code != CodeUnspecified {
			t.Errorf("offset %d outside input of %d bytes: %v", off, size, err)
		}
	}
}
