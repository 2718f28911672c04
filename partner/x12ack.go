package partner

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/edihub/edihub/edifact"
)

// x12Writer writes an X12 interchange with * ~ : separators. X12 has no
// release character: values echoed from the original go through clean,
// which turns separator bytes into spaces.
type x12Writer struct {
	b  bytes.Buffer
	st int // segments of the open transaction set, ST included
}

func (w *x12Writer) seg(tag string, elems ...string) {
	for len(elems) > 0 && elems[len(elems)-1] == "" {
		elems = elems[:len(elems)-1]
	}
	w.b.WriteString(tag)
	for _, e := range elems {
		w.b.WriteByte('*')
		w.b.WriteString(e)
	}
	w.b.WriteByte('~')
	w.st++
}

func pad(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s + strings.Repeat(" ", n-len(s))
}

// isa opens our interchange answering ich (sender and recipient swapped).
func (w *x12Writer) isa(ich *edifact.Interchange, version, ref string, now time.Time) {
	rep := "U"
	if version >= "00402" {
		rep = "^"
	}
	test := "P"
	if ich.TestIndicator == "T" {
		test = "T"
	}
	fmtQual := func(q string) string {
		if q == "" {
			q = "ZZ"
		}
		return pad(q, 2)
	}
	w.b.WriteString("ISA*00*" + pad("", 10) + "*00*" + pad("", 10) + "*" + fmtQual(ich.Recipient.Qualifier) + "*" +
		pad(clean(ich.Recipient.ID), 15) + "*" + fmtQual(ich.Sender.Qualifier) + "*" + pad(clean(ich.Sender.ID), 15) + "*" +
		now.Format("060102") + "*" + now.Format("1504") + "*" + rep + "*" + version + "*" + ref + "*0*" + test + "*:~")
}

func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '*' || r == '~' || r == ':' || r == '^' || r < ' ' || r > '~' {
			return ' '
		}
		return r
	}, s)
}

// ta1 is an interchange acknowledgement: TA104 A (accepted), E or R, and
// the TA105 note code.
func ta1(ich *edifact.Interchange, ref string, now time.Time, status string, note int) []byte {
	var w x12Writer
	w.isa(ich, x12Version(ich), ref, now)
	n := strconv.Itoa(note)
	w.seg("TA1", clean(ich.ControlRef), clean(ich.Date), clean(ich.Time), status, strings.Repeat("0", 3-len(n))+n)
	w.seg("IEA", "0", ref)
	return w.b.Bytes()
}

// x12Version is the ISA12 of our answer: the original's when it reads as
// one (00401, 00501), else 00501.
func x12Version(ich *edifact.Interchange) string {
	if len(ich.SyntaxVersion) == 5 {
		if _, err := strconv.Atoi(ich.SyntaxVersion); err == nil {
			return ich.SyntaxVersion
		}
	}
	return "00501"
}

// isaNotes are the TA105 note codes (X12.5 Interchange Control Structures,
// TA1 segment, data element I18) of a fault in ISA01..ISA16.
var isaNotes = [17]int{0,
	10, 11, 12, 13, // ISA01..04: invalid authorization / security qualifier or value
	5, 6, 7, 8, // ISA05..08: invalid sender id qualifier, sender id, receiver id qualifier, receiver id
	14, 15, 16, 17, 18, // ISA09..13: invalid date, time, standards identifier, version id, control number
	19, 20, 27, // ISA14..16: invalid acknowledgment requested, test indicator, component element separator
}

// ta1Note maps the fault to a TA105 note code: a fault in an ISA field by
// the field, else by its 0085 code.
func ta1Note(t target) int {
	if t.code == edifact.CodeDuplicate && t.svcTag == "ISA" {
		return 25 // duplicate interchange control number
	}
	if t.svcTag == "ISA" && t.elem >= 2 && t.elem-1 < len(isaNotes) && t.code != codeUnknownSender && t.code != codeNotActualRecipient &&
		t.code != codeTestNotSupported {
		return isaNotes[t.elem-1] // t.elem counts the tag as 1
	}
	switch t.code {
	case codeUnknownSender:
		return 6 // invalid interchange sender id (TA105 006; 007 is the receiver's qualifier)
	case codeNotActualRecipient:
		return 9 // invalid interchange receiver id
	case codeTestNotSupported:
		return 20 // invalid test indicator value
	case edifact.CodeReferenceMismatch:
		return 1 // control numbers do not match
	case edifact.CodeCountMismatch:
		return 21 // invalid number of included groups
	case edifact.CodeMissing:
		return 23 // improper (premature) end-of-file
	}
	return 24 // invalid interchange content
}

// functionalAck is a 999 (005010X231A1) or 997 (005010X230) for one
// functional group sg: accepted (an AK2/IK5 A for each set), or refused,
// naming the transaction set in error (AK2 with AK203 when ST03 was sent),
// the segment (IK3/AK3 with its position in the set, ST = 1), the element
// (IK4/AK4) and the set's code (IK5/AK5), and the group's AK9: AK902 the
// sets the GE says it included, AK903 the sets received, AK904 those
// accepted (none: edihub refuses the whole interchange), AK905 the group's
// own fault. A group refused for a fault elsewhere in the interchange
// lists no set and says so in AK9 alone. accepted with faults (accept:
// message) reports the sets faults names (by ST02) as rejected, the others
// accepted, and AK901 P when some of the group's sets were accepted (999
// and 997 implementation guides, AK901: P partially accepted, at least one
// transaction set was rejected), R when none, and AK904 the sets accepted.
func functionalAck(typ string, t target, sg *x12Group, ref string, now time.Time, accepted bool, faults map[string]target) []byte {
	var w x12Writer
	version := x12Version(t.ich)
	impl := ""
	if typ == Type999 {
		version, impl = "00501", "005010X231A1"
	}
	w.isa(t.ich, version, ref, now)
	g := sg.g
	// GS08 is the version of the acknowledgement itself (X12.6: the
	// version of the transaction sets in this group), never the original's
	gsVersion := impl
	if gsVersion == "" {
		gsVersion = version + "0"
	}
	gsRef := strings.TrimLeft(ref, "0")
	if gsRef == "" {
		gsRef = "1"
	}
	w.seg("GS", "FA", clean(g.Recipient.ID), clean(g.Sender.ID), now.Format("20060102"), now.Format("1504"), gsRef, "X", gsVersion)
	w.st = 0
	w.seg("ST", typ, "0001", impl)
	if typ == Type999 {
		w.seg("AK1", clean(g.ID), clean(g.ControlRef), clean(g.Version))
	} else {
		w.seg("AK1", clean(g.ID), clean(g.ControlRef))
	}
	segTag, elemTag, setTag := "IK3", "IK4", "IK5"
	if typ == Type997 {
		segTag, elemTag, setTag = "AK3", "AK4", "AK5"
	}
	ak2 := func(s x12Set) {
		if typ == Type999 {
			w.seg("AK2", clean(s.typ), clean(s.ref), clean(s.impl))
		} else {
			w.seg("AK2", clean(s.typ), clean(s.ref))
		}
	}
	here := !accepted && t.group != nil && t.group.ControlRef == g.ControlRef // the fault is in this group
	setFault := here && t.msg != nil
	wrote := false
	faultSet := func(s x12Set, t target) {
		ak2(s)
		if t.msgSeg > 0 && t.svcTag != "ST" && t.svcTag != "SE" {
			w.seg(segTag, clean(t.segTag), strconv.Itoa(t.msgSeg), "", segmentCode(t))
			if t.elem > 1 {
				pos := strconv.Itoa(t.elem - 1)
				if t.comp > 1 {
					pos += ":" + strconv.Itoa(t.comp)
				}
				w.seg(elemTag, pos, "", elementCode(t))
			}
		}
		w.seg(setTag, "R", setCode(t))
	}
	refused := 0
	for _, s := range sg.sets {
		f, isFault := faults[s.ref]
		switch {
		case accepted && isFault:
			faultSet(s, f)
			refused++
		case accepted:
			ak2(s)
			w.seg(setTag, "A")
		case setFault && !wrote && s.ref == t.msg.Ref:
			faultSet(s, t)
			wrote = true
		}
	}
	received := len(sg.sets)
	if setFault && !wrote { // the scan did not reach it
		faultSet(x12Set{typ: t.msg.Type, ref: t.msg.Ref, impl: t.msg.Release}, t)
		received++
	}
	included := received
	if n, err := strconv.Atoi(sg.ge01); err == nil && n >= 0 {
		included = n
	}
	switch {
	case accepted && refused > 0:
		status := "P"
		if refused == received {
			status = "R"
		}
		w.seg("AK9", status, strconv.Itoa(included), strconv.Itoa(received), strconv.Itoa(received-refused))
	case accepted:
		w.seg("AK9", "A", strconv.Itoa(included), strconv.Itoa(received), strconv.Itoa(received))
	case here && t.msg == nil:
		w.seg("AK9", "R", strconv.Itoa(included), strconv.Itoa(received), "0", groupCode(t))
	default:
		w.seg("AK9", "R", strconv.Itoa(included), strconv.Itoa(received), "0")
	}
	w.seg("SE", strconv.Itoa(w.st+1), "0001")
	w.seg("GE", "1", gsRef)
	w.seg("IEA", "1", ref)
	return w.b.Bytes()
}

func segmentCode(t target) string {
	switch {
	case t.elem > 0:
		return "8" // segment has data element errors
	case t.code == edifact.CodeMissing:
		return "3"
	case t.code == edifact.CodeTooManyRepetitions:
		return "5"
	}
	return "2" // unexpected segment
}

func elementCode(t target) string {
	switch t.code {
	case edifact.CodeMissing:
		return "1"
	case edifact.CodeTooLong:
		return "5"
	case edifact.CodeInvalidCharacter:
		return "6"
	case edifact.CodeTooManyConstituents:
		return "3"
	}
	return "7" // invalid code value
}

func setCode(t target) string {
	switch t.code {
	case codeNoAgreement:
		return "1" // transaction set not supported
	case edifact.CodeMissing:
		if t.svcTag == "SE" {
			return "2" // transaction set trailer missing
		}
	case edifact.CodeReferenceMismatch:
		return "3"
	case edifact.CodeCountMismatch:
		return "4"
	}
	return "5" // one or more segments in error
}

func groupCode(t target) string {
	switch t.code {
	case edifact.CodeReferenceMismatch:
		return "4"
	case edifact.CodeCountMismatch:
		return "5"
	case edifact.CodeMissing:
		return "3"
	}
	return "6"
}
