package partner

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edihub/edihub/edifact"
)

// ediWriter writes an EDIFACT interchange with the default separators
// (: + . ? ' and, in syntax 4, * for repetitions), escaping every value.
type ediWriter struct {
	b      bytes.Buffer
	v4     bool
	inMsg  int    // segments of the open message, UNH included
	syntax string // our UNB syntax identifier: what value may write
}

// levelA is the repertoire of UNOA (and IATA).
const levelA = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-()/='+:?!\"%&*;<>"

// fit maps a byte echoed from the original (which may be why it was
// refused: lowercase under UNOA, UTF-8 under UNOB) into our repertoire, so
// the acknowledgement itself is always valid: lowercase to uppercase under
// level A, anything else outside it to '.'.
func (w *ediWriter) fit(c byte) byte {
	switch w.syntax {
	case "UNOA", "IATA":
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if strings.IndexByte(levelA, c) < 0 {
			return '.'
		}
	case "UNOC":
		if (c < 0x20 || c >= 0x7f) && c < 0xA0 {
			return '.'
		}
	default:
		if c < 0x20 || c >= 0x7f {
			return '.'
		}
	}
	return c
}

func (w *ediWriter) una() {
	if w.v4 {
		w.b.WriteString("UNA:+.?*'")
	} else {
		w.b.WriteString("UNA:+.? '")
	}
}

// seg writes one segment; each element is its components. Empty trailing
// components and elements are left out.
func (w *ediWriter) seg(tag string, elems ...[]string) {
	for len(elems) > 0 && empty(elems[len(elems)-1]) {
		elems = elems[:len(elems)-1]
	}
	w.b.WriteString(tag)
	for _, e := range elems {
		w.b.WriteByte('+')
		for len(e) > 0 && e[len(e)-1] == "" {
			e = e[:len(e)-1]
		}
		for i, c := range e {
			if i > 0 {
				w.b.WriteByte(':')
			}
			w.value(c)
		}
	}
	w.b.WriteByte('\'')
	if tag != "UNB" && tag != "UNZ" {
		w.inMsg++
	}
}

func (w *ediWriter) value(s string) {
	for i := 0; i < len(s); i++ {
		c := w.fit(s[i])
		if c == '?' || c == ':' || c == '+' || c == '\'' || (w.v4 && c == '*') {
			w.b.WriteByte('?')
		}
		w.b.WriteByte(c)
	}
}

func empty(e []string) bool {
	for _, c := range e {
		if c != "" {
			return false
		}
	}
	return true
}

func el(c ...string) []string { return c }

func num(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// envelope opens our interchange answering ich: sender and recipient
// swapped (the original sender's reverse-routing address as our
// recipient's routing), syntax identifier and version of the original
// (syntax 1 and 2 answered in 3).
func (w *ediWriter) open(ich *edifact.Interchange, syntax, ref string, now time.Time) {
	w.v4 = ich.SyntaxVersion == "4"
	version := "3"
	if w.v4 {
		version = "4"
	}
	if syntax == "" {
		syntax = ich.Syntax
	}
	if !strings.HasPrefix(syntax, "UNO") || len(syntax) != 4 {
		syntax = "UNOA"
	}
	w.syntax = syntax
	date := now.Format("060102")
	if w.v4 {
		date = now.Format("20060102")
	}
	routing := 14 // 0008 an..14 in syntax 3, an..35 in 4 (ISO 9735 UNB S002)
	if w.v4 {
		routing = 35
	}
	w.una()
	w.seg("UNB", el(syntax, version), partyEl(ich.Recipient),
		el(cut(ich.Sender.ID, 35), qualifier(ich.Sender.Qualifier), cut(ich.Sender.Routing, routing)), el(date, now.Format("1504")), el(ref),
		el(), el(), el(), el(), el(), el(testIndicator(ich)))
}

// testIndicator is our UNB 0035: 1 when the original is a test
// interchange (ISO 9735: 0035 = 1 "interchange is a test"), so a
// partner's translator routes the answer as it routed the original;
// empty otherwise. The X12 answers mirror ISA15 the same way.
func testIndicator(ich *edifact.Interchange) string {
	if ich.TestIndicator == "1" {
		return "1"
	}
	return ""
}

// cut shortens a value echoed from the original to the length its data
// element allows (the original may be refused for being too long: a
// 15-character 0020 is echoed as its first 14), so that the
// acknowledgement itself passes strict validation.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// partyEl is an S002/S003 echoed in UCI: 0004 an..35, 0007 an..4.
func partyEl(p edifact.Party) []string { return el(cut(p.ID, 35), qualifier(p.Qualifier)) }

// qualifier echoes a 0007 (an..4, a code): one longer than four
// characters is no code of the list and is left out rather than cut into
// a different one.
func qualifier(q string) string {
	if len(q) > 4 {
		return ""
	}
	return q
}

func (w *ediWriter) startMessage(typ string) {
	w.inMsg = 0
	version, release := "D", "3"
	if w.v4 && typ == TypeCONTRL {
		version, release = "4", "1"
	}
	if typ == TypeAPERAK {
		version, release = "D", "96A"
	}
	w.seg("UNH", el("1"), el(typ, version, release, "UN"))
}

func (w *ediWriter) close(ref string) []byte {
	w.seg("UNT", el(strconv.Itoa(w.inMsg+1)), el("1"))
	w.seg("UNZ", el("1"), el(ref))
	return w.b.Bytes()
}

// contrl is a CONTRL answering t.ich with UCI action (7 acknowledged, 8
// received, 4 rejected). A rejection names what failed: on UCI for the
// interchange envelope, else UCM for the message (its UNH/UNT when those
// failed), UCS for the segment by its position in the message (UNH = 1)
// and UCD for the element, each with its 0085 code.
func contrl(t target, ref string, now time.Time, action int) []byte {
	var w ediWriter
	syntax := ""
	if t.code == codeSyntaxNotSupported {
		// the original's syntax level is what was refused: answer in
		// level A, which every recipient reads (ISO 9735-1, 0001 UNOA)
		syntax = "UNOA"
	}
	w.open(t.ich, syntax, ref, now)
	w.startMessage(TypeCONTRL)
	ich := t.ich
	uci := []([]string){el(cut(ich.ControlRef, 14)), partyEl(ich.Sender), partyEl(ich.Recipient), el(strconv.Itoa(action))}
	if action != 4 || t.msg != nil || t.group != nil {
		w.seg("UCI", uci...)
	} else {
		tag := t.svcTag
		if tag == "" || (tag != "UNB" && tag != "UNZ" && tag != "UNA") {
			tag = ""
		}
		if tag == "" && t.elem > 0 {
			tag = "UNB"
		}
		s011 := el("", "")
		if tag != "" {
			s011 = serviceS011(tag, t.elem, t.comp)
		}
		w.seg("UCI", append(uci, el(strconv.Itoa(t.code)), el(tag), s011)...)
	}
	if action == 4 && t.group != nil {
		// SG3 UCF: the group (UNG..UNE) refused, with the group-level
		// fault when the UNG or UNE is what failed (CONTRL message
		// definition, D:3 and 4:1: UCF for messages inside groups, UCI for
		// the interchange level only)
		g := t.group
		ucf := []([]string){el(cut(g.ControlRef, 14)), partyEl(g.Sender), partyEl(g.Recipient), el("4")}
		if t.msg == nil {
			tag := t.svcTag
			if tag != "UNG" && tag != "UNE" {
				tag = ""
			}
			s011 := el("", "")
			if tag != "" {
				s011 = serviceS011(tag, t.elem, t.comp)
			}
			ucf = append(ucf, el(strconv.Itoa(t.code)), el(tag), s011)
		}
		w.seg("UCF", ucf...)
	}
	if action == 4 && t.msg != nil {
		m := t.msg
		w.messageFault(t, el(cut(m.Type, 6), cut(m.Version, 3), cut(m.Release, 3), cut(m.Agency, 2)))
	}
	return w.close(ref)
}

// serviceComposites are the positions (tag = 1) of the composites of the
// service segments (ISO 9735-2 V3 and V4): UNB S001..S005, UNG S006, S007,
// S004, S008, UNH S009, S010 and (V4) S016..S018.
var serviceComposites = map[string][]int{"UNB": {2, 3, 4, 5, 7}, "UNG": {3, 4, 5, 8}, "UNH": {3, 5, 6, 7, 8}}

// serviceS011 is the S011 of a fault in a service segment: 0098, and 0104
// only when the element is a composite (a simple element has no component
// position; the parser counts its value as component 1).
func serviceS011(tag string, elem, comp int) []string {
	if !slices.Contains(serviceComposites[tag], elem) {
		comp = 0
	}
	return el(num(elem), num(comp))
}

// aperak is an APERAK (D:96A) for a business rejection: the message
// referred to (RFF ACW) and the failing rule's text (ERC, FTX AAO).
func aperak(t target, ref string, now time.Time) []byte {
	var w ediWriter
	w.open(t.ich, "UNOC", ref, now)
	w.startMessage(TypeAPERAK)
	w.seg("BGM", el("23"), el(ref), el("27"))
	w.seg("DTM", el("137", now.Format("200601021504"), "203"))
	w.seg("RFF", el("ACW", t.msg.Ref))
	// 9321 has no UN code list: "User or association defined code. May
	// be used in combination with 1131/3055" (UNTDID EDED 9321, D.95A,
	// D.97A and D.97B; the shipped D96A codes have no list for it). BUSINESS is edihub's code for a business rule refused;
	// 3055 86 ("assigned by party originating the message", D.96A code
	// list 3055; shared reference data D96A/codes.xml line 8813) says
	// whose list it is.
	w.seg("ERC", el("BUSINESS", "", "86"))
	w.seg("FTX", el("AAO"), el(""), el(""), freeText(t.business.Msg))
	return w.close(ref)
}

// freeText cuts s into at most five 4440 values of at most 70 printable
// ASCII characters each, between words.
func freeText(s string) []string {
	b := []byte(s)
	for i, c := range b {
		if c < ' ' || c > '~' {
			b[i] = '.'
		}
	}
	var out []string
	for len(b) > 0 && len(out) < 5 {
		n := min(70, len(b))
		if n < len(b) {
			// cut after the last space that fits, never mid-word (a word
			// longer than 70 is cut where it must be)
			if sp := bytes.LastIndexByte(b[:n+1], ' '); sp > 0 {
				n = sp
			}
		}
		out = append(out, string(b[:n]))
		b = bytes.TrimLeft(b[n:], " ")
	}
	return out
}
