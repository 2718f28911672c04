package partner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/wire"
)

// ackCase is one interchange, the profile it is decided with, and the
// acknowledgements that decision sends.
type ackCase struct {
	name    string
	file    string
	profile func(*Profile)
	syntax4 bool
	types   []string // acknowledgement types expected, in order
	code    int      // 0085 code a negative CONTRL carries (0: positive)
	note    int      // TA105 a negative TA1 carries (0: ta1Note of code)
	// business: refused by a business rule (the acknowledgements may be
	// positive: the syntax was right)
	business bool
	// want are segments the acknowledgements must hold, each case citing
	// the clause that says so.
	want []string
}

func ackCases() []ackCase {
	return []ackCase{
		{name: "contrl-positive-v3", file: "invoic_ok.edi", types: []string{TypeCONTRL}},
		{name: "contrl-positive-v4-received", file: "invoic_ok.edi", syntax4: true, types: []string{TypeCONTRL},
			profile: func(p *Profile) { p.Ack.Positive = 8 }},
		{name: "contrl-count-v3", file: "invoic_bad_count.edi", types: []string{TypeCONTRL}, code: edifact.CodeCountMismatch},
		{name: "contrl-count-v4", file: "invoic_bad_count.edi", syntax4: true, types: []string{TypeCONTRL}, code: edifact.CodeCountMismatch},
		{name: "contrl-test-indicator", file: "invoic_test.edi", types: []string{TypeCONTRL}, code: codeTestNotSupported},
		{name: "contrl-sender", file: "invoic_ok.edi", types: []string{TypeCONTRL}, code: codeUnknownSender,
			profile: func(p *Profile) { p.Senders = []string{"1111111111111"} }},
		{name: "contrl-recipient", file: "invoic_ok.edi", types: []string{TypeCONTRL}, code: codeNotActualRecipient,
			profile: func(p *Profile) { p.Recipients = []string{"1111111111111"} }},
		{name: "contrl-syntax", file: "invoic_ok.edi", types: []string{TypeCONTRL}, code: codeSyntaxNotSupported,
			profile: func(p *Profile) { p.Syntax = []string{"UNOC"} }},
		{name: "contrl-type-not-agreed", file: "invoic_ok.edi", types: []string{TypeCONTRL}, code: codeNoAgreement,
			profile: func(p *Profile) { p.Messages = []string{"ORDERS D:96A"} }},
		{name: "contrl-character", file: "invoic_lower.edi", types: []string{TypeCONTRL}, code: edifact.CodeInvalidCharacter},
		{name: "contrl-character-in-unz", file: "invoic_lower_unz.edi", types: []string{TypeCONTRL}, code: edifact.CodeInvalidCharacter},
		{name: "contrl-lowercase-sender", file: "invoic_lower_sender.edi", types: []string{TypeCONTRL}, code: edifact.CodeInvalidCharacter,
			profile: func(p *Profile) { p.Senders = nil }},
		// Item 13: a missing UNZ is reported on UCI with 0085 13
		// (missing) and the missing segment's tag in 0013 (CONTRL message
		// definition, UCI: 0085, 0013 service segment tag, S011).
		{name: "contrl-missing-unz", file: "invoic_no_unz.edi", types: []string{TypeCONTRL}, code: edifact.CodeMissing,
			want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+4+13+UNZ'"}},
		{name: "contrl-directory-type", file: "invoic_qty_letter.edi", types: []string{TypeCONTRL}, code: 37},
		{name: "contrl-directory-missing", file: "invoic_no_bgm.edi", types: []string{TypeCONTRL}, code: edifact.CodeMissing,
			profile: func(p *Profile) { p.Directory = "strict" }},
		// ERC C901: 9321 is user or association defined (UNTDID EDED
		// 9321), so the code names its list's owner, 3055 86 (assigned by
		// the party originating the message, code list 3055)
		{name: "aperak-total", file: "invoic_bad_total.edi", types: []string{TypeAPERAK, TypeCONTRL}, want: []string{"'ERC+BUSINESS::86'"}},
		{name: "x12-999-accepted", file: "x12_850.edi", types: []string{Type999}, profile: x12Partner},
		{name: "x12-999-count", file: "x12_850_bad_count.edi", types: []string{Type999}, code: edifact.CodeCountMismatch, profile: x12Partner},
		{name: "x12-997-count", file: "x12_850_bad_count.edi", types: []string{Type997}, code: edifact.CodeCountMismatch,
			profile: func(p *Profile) { x12Partner(p); p.Ack.X12 = Type997 }},
		{name: "x12-ta1-sender", file: "x12_850.edi", types: []string{TypeTA1}, code: codeUnknownSender,
			profile: func(p *Profile) { x12Partner(p); p.Senders = []string{"SOMEONE"} }},
		{name: "x12-999-type-not-agreed", file: "x12_850.edi", types: []string{Type999}, code: codeNoAgreement,
			profile: func(p *Profile) { x12Partner(p); p.Messages = []string{"810 005010"} }},

		// Item 1: the service segments against the Service V3/V4
		// directories (ISO 9735-2 (V3) / ISO 9735-2:2002 (V4) segment
		// specifications of UNB); the fault is reported on UCI with its
		// 0085 code, the segment tag 0013 and S011 (0098 counts the tag as
		// 1), as the CONTRL message definition has it for the interchange
		// level; what UCI echoes is cut to its own length (0020 an..14).
		{name: "contrl-unb-0020-too-long", file: "invoic_unb_0020_15.edi", types: []string{TypeCONTRL}, code: edifact.CodeTooLong,
			want: []string{"UCI+INV00420000000+4012345000009:14+4098765000002:14+4+39+UNB+6'"}},
		{name: "contrl-unb-sender-too-long", file: "invoic_unb_sender_36.edi", types: []string{TypeCONTRL}, code: edifact.CodeTooLong,
			profile: func(p *Profile) { p.Senders = nil }, want: []string{"+4+39+UNB+3:1'"}},
		{name: "contrl-unb-qualifier-too-long", file: "invoic_unb_0007_5.edi", types: []string{TypeCONTRL}, code: edifact.CodeTooLong,
			profile: func(p *Profile) { p.Senders = nil }, want: []string{"UCI+INV0042+4012345000009+4098765000002:14+4+39+UNB+3:2'"}},
		{name: "contrl-unb-test-indicator-7", file: "invoic_unb_0035_7.edi", types: []string{TypeCONTRL}, code: edifact.CodeInvalidValue,
			want: []string{"+4+12+UNB+12'"}}, // 0035 code list (V3): 1 only
		{name: "contrl-unb-time-2460", file: "invoic_unb_time_2460.edi", types: []string{TypeCONTRL}, code: edifact.CodeInvalidValue,
			want: []string{"+4+12+UNB+5:2'"}}, // 0019 HHMM
		{name: "contrl-unb-v3-date-8", file: "invoic_unb_v3_date8.edi", types: []string{TypeCONTRL}, code: edifact.CodeTooLong,
			want: []string{"+4+39+UNB+5:1'"}}, // V3 0017 n6
		{name: "contrl-unb-v4-date-6", file: "invoic_unb_v4_date6.edi", types: []string{TypeCONTRL}, code: edifact.CodeTooShort,
			profile: func(p *Profile) { p.Syntax = nil }, want: []string{"+4+40+UNB+5:1'"}}, // V4 0017 n8
		{name: "contrl-unb-unow-v3", file: "invoic_unb_unow_v3.edi", types: []string{TypeCONTRL}, code: edifact.CodeSyntaxNotSupported,
			want: []string{"+4+2+UNB+2:1'"}}, // 0001 UNOW exists from syntax version 4 release 1 on

		// Item 1, X12: ISA fields of X12.5 (ISA09 DT YYMMDD, ISA11 under
		// 00401 is the standards identifier U, ISA13 N0 9/9, ISA15 ID
		// I/P/T); TA105 names the field (note codes 014, 016, 018, 020).
		{name: "x12-ta1-isa13-alpha", file: "x12_isa13_alpha.edi", types: []string{TypeTA1}, code: edifact.CodeInvalidValue, note: 18,
			profile: x12Partner, want: []string{"TA1*00000010A*240315*0930*R*018~"}},
		{name: "x12-ta1-isa15-x", file: "x12_isa15_x.edi", types: []string{TypeTA1}, code: edifact.CodeInvalidValue, note: 20,
			profile: x12Partner, want: []string{"*R*020~"}},
		{name: "x12-ta1-isa09-date", file: "x12_isa09_date.edi", types: []string{TypeTA1}, code: edifact.CodeInvalidValue, note: 14,
			profile: x12Partner, want: []string{"TA1*000000101*261399*0930*R*014~"}},
		{name: "x12-ta1-isa11-00401", file: "x12_isa11_00401.edi", types: []string{TypeTA1}, code: edifact.CodeInvalidValue, note: 16,
			profile: func(p *Profile) { x12Partner(p); p.Messages = nil }, want: []string{"*R*016~"}},

		// Item 2: IK3 names the segment in error by its tag and position
		// in the set (ST = 1) with IK304 8 (segment has data element
		// errors), and IK4 the element (IK401 position, IK403 6 invalid
		// character, 5 too long): 005010X231A1 999, IK3 and IK4; 997
		// (005010X230) AK3/AK4 the same.
		{name: "x12-999-control-char", file: "x12_ctl_char_po1.edi", types: []string{Type999}, code: edifact.CodeInvalidCharacter,
			profile: x12Partner, want: []string{"IK3*PO1*5**8~IK4*7**6~IK5*R*5~"}},
		{name: "x12-997-control-char", file: "x12_ctl_char_po1.edi", types: []string{Type997}, code: edifact.CodeInvalidCharacter,
			profile: func(p *Profile) { x12Partner(p); p.Ack.X12 = Type997 }, want: []string{"AK3*PO1*5**8~AK4*7**6~AK5*R*5~"}},
		// a business refusal is not a syntax error: no IK5 R without IK3;
		// the 999 accepts the syntax (IK5 A, AK9 A), as CONTRL does beside
		// an APERAK
		{name: "x12-999-business", file: "x12_850.edi", types: []string{Type999}, business: true,
			profile: func(p *Profile) {
				x12Partner(p)
				p.Rules = []Rule{{Name: "never", Type: "850", Expr: "false"}}
			}, want: []string{"AK9*A*1*1*1~"}},
		// Item 3: AK9 (999/997 AK9): AK902 the number of sets GE01 says
		// were included, AK903 the number received, AK904 the number
		// accepted, AK905 the group's own fault (5: GE01 does not match).
		{name: "x12-999-ge01", file: "x12_ge_count.edi", types: []string{Type999}, code: edifact.CodeCountMismatch,
			profile: x12Partner, want: []string{"AK1*PO*101*005010~AK9*R*2*1*0*5~"}},
		{name: "x12-999-two-sets-one-bad", file: "x12_two_sets_bad.edi", types: []string{Type999}, code: edifact.CodeCountMismatch,
			profile: x12Partner, want: []string{"AK2*850*0002~IK5*R*4~AK9*R*2*2*0~"}},
		// Item 4: every group of a refused interchange gets its functional
		// ack: the first, refused for the second's fault, in AK9 alone.
		{name: "x12-999-two-groups", file: "x12_two_groups.edi", types: []string{Type999, Type999}, code: edifact.CodeCountMismatch,
			profile: x12Partner, want: []string{"AK1*PO*101*005010~AK9*R*1*1*0~", "AK1*PO*102*005010~AK2*850*0001~IK5*R*4~AK9*R*1*1*0~"}},
		// Item 6: a missing SE is the set's fault, IK5/AK5 2 (transaction
		// set trailer missing), not a segment error on the GE.
		{name: "x12-999-no-se", file: "x12_no_se.edi", types: []string{Type999}, code: edifact.CodeMissing,
			profile: x12Partner, want: []string{"AK2*850*0001~IK5*R*2~AK9*R*1*1*0~"}},
		{name: "x12-997-no-se", file: "x12_no_se.edi", types: []string{Type997}, code: edifact.CodeMissing,
			profile: func(p *Profile) { x12Partner(p); p.Ack.X12 = Type997 }, want: []string{"AK2*850*0001~AK5*R*2~AK9*R*1*1*0~"}},
		// Item 7: a group-level fault is reported on UCF (SG3 of CONTRL:
		// 0048, S006, S007, 0083 = 4, 0085, 0013/0135 UNE, S011), the UCI
		// says the interchange is refused without an error of its own; a
		// message inside a group is reported in SG4 under its UCF.
		{name: "contrl-une-count", file: "invoic_une_count.edi", types: []string{TypeCONTRL}, code: edifact.CodeCountMismatch,
			want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+4'UCF+G1+4012345000009:14+4098765000002:14+4+29+UNE+2'"}},
		{name: "contrl-une-ref", file: "invoic_une_ref.edi", types: []string{TypeCONTRL}, code: edifact.CodeReferenceMismatch,
			want: []string{"UCF+G1+4012345000009:14+4098765000002:14+4+28+UNE+3'"}},
		{name: "contrl-ung-0038", file: "invoic_ung_0038.edi", types: []string{TypeCONTRL}, code: edifact.CodeTooLong,
			want: []string{"UCF+G1+4012345000009:14+4098765000002:14+4+39+UNG+2'"}},
		{name: "contrl-group-message", file: "invoic_group_qty.edi", types: []string{TypeCONTRL}, code: 37,
			want: []string{"+4'UCF+G1+4012345000009:14+4098765000002:14+4'UCM+1+INVOIC:D:96A:UN+4'UCS+"}},
		// Item 8: the acknowledgement of a test interchange is a test
		// interchange (UNB 0035 = 1, ISO 9735-2 UNB), for CONTRL and APERAK.
		{name: "contrl-test-positive", file: "invoic_test.edi", types: []string{TypeCONTRL},
			profile: func(p *Profile) { p.Test = TestAny }, want: []string{"+A420++++++1'UNH+1+CONTRL"}},
		{name: "aperak-test", file: "invoic_test_bad_total.edi", types: []string{TypeAPERAK, TypeCONTRL}, business: true,
			profile: func(p *Profile) { p.Test = TestAny }, want: []string{"+A420++++++1'UNH+1+APERAK", "+A421++++++1'UNH+1+CONTRL"}},
		// Item 9: an acknowledgement request is honoured with contrl /
		// ta1 errors: UNB 0031 = 1 (ISO 9735-2 UNB: acknowledgement
		// requested) a positive CONTRL, 0031 = 2 in syntax 4 (indication
		// of receipt) UCI 0083 = 8; ISA14 = 1 (X12.5) a TA1 A.
		{name: "contrl-requested", file: "invoic_ack_requested.edi", types: []string{TypeCONTRL},
			profile: func(p *Profile) { p.Ack.CONTRL = AckErrors }, want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+7'"}},
		{name: "contrl-receipt-requested-v4", file: "invoic_receipt_requested.edi", types: []string{TypeCONTRL}, syntax4: true,
			profile: func(p *Profile) { p.Ack.CONTRL = AckErrors }, want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+8'"}},
		{name: "x12-ta1-requested", file: "x12_ta1_requested.edi", types: []string{TypeTA1, Type999},
			profile: x12Partner, want: []string{"TA1*000000101*240315*0930*A*000~"}},
		// Item 13: a repetition refused in syntax 4 names its occurrence,
		// UCD S011 0136 (ISO 9735 V4 UCD: 0098, 0104, 0136).
		{name: "contrl-repetition-v4", file: "invoic_qty_repeated.edi", types: []string{TypeCONTRL}, syntax4: true,
			code: edifact.CodeTooManyRepetitions, want: []string{"UCD+35+2::2'"}},
		// Item 13: S011 0104 (component data element position) is only
		// for a component of a composite (CONTRL message definition, UCD
		// S011: 0098 position of the erroneous data element, 0104
		// position of the component data element): BGM 1004 (D.96A, a
		// simple an..35, segment 2) too long is UCD 0098 3 alone.
		{name: "contrl-simple-element-no-0104", file: "invoic_bgm_1004_36.edi", types: []string{TypeCONTRL}, code: edifact.CodeTooLong,
			want: []string{"UCS+2'UCD+39+3'"}},
		// Item 13: a CONTRL refusing the syntax level UNOD (0085 2,
		// syntax level not supported) is not written in UNOD, which the
		// partner was just told is not read here: it is written in level
		// A, which every recipient reads (ISO 9735-1, 0001 UNOA).
		{name: "contrl-syntax-unod", file: "invoic_unod.edi", types: []string{TypeCONTRL}, code: codeSyntaxNotSupported,
			profile: func(p *Profile) { p.Syntax = []string{"UNOA", "UNOC"} },
			want:    []string{"UNA:+.? 'UNB+UNOA:3+", "UCI+INV0042+4012345000009:14+4098765000002:14+4+2+UNB+2:1'"}},
		{name: "x12-999-long-element", file: "x12_long_element.edi", types: []string{Type999}, code: edifact.CodeTooLong,
			profile: x12Partner, want: []string{"IK3*PO1*6**8~IK4*7**5~IK5*R*5~"}},
	}
}

func x12Partner(p *Profile) {
	p.Senders, p.Recipients, p.Test = []string{"BUYERID:ZZ"}, []string{"SELLERID"}, TestAny
}

// v4 makes a syntax 4 interchange of a syntax 3 one: S001 and the
// eight-digit date of S004 (ISO 9735-2 (V4) UNB: 0017 n8, CCYYMMDD).
func v4(data []byte) []byte {
	data = bytes.Replace(data, []byte("+240315:0930+"), []byte("+20240315:0930+"), 1)
	return bytes.Replace(data, []byte("UNB+UNOA:3+"), []byte("UNB+UNOC:4+"), 1)
}

func setupAckFiles(t *testing.T) {
	t.Helper()
	ok := read(t, "invoic_ok.edi")
	dir := t.TempDir()
	files := map[string][]byte{
		"invoic_lower.edi":        bytes.Replace(ok, []byte("LIEFERANT AG"), []byte("Lieferant AG"), 1),
		"invoic_lower_unz.edi":    bytes.Replace(ok, []byte("UNZ+1+INV0042"), []byte("UNZ+1+INV004x"), 1),
		"invoic_lower_sender.edi": bytes.Replace(ok, []byte("+4012345000009:14+"), []byte("+acme\xc3\xa9:14+"), 1),
		"invoic_no_unz.edi":       bytes.TrimSuffix(bytes.TrimSpace(ok), []byte("UNZ+1+INV0042'")),
		"invoic_qty_letter.edi":   bytes.Replace(ok, []byte("QTY+47:10:PCE"), []byte("QTY+47:1O:PCE"), 1),
		"invoic_no_bgm.edi": bytes.Replace(bytes.Replace(ok, []byte("BGM+380+R-2024-0042+9'\n"), nil, 1),
			[]byte("UNT+20+1"), []byte("UNT+19+1"), 1),
	}
	x12 := read(t, "x12_850.edi")
	files["invoic_unb_0020_15.edi"] = bytes.ReplaceAll(ok, []byte("INV0042"), []byte("INV004200000000"))
	files["invoic_unb_sender_36.edi"] = bytes.Replace(ok, []byte("+4012345000009:14+"), []byte("+401234500000940123450000094012345000:14+"), 1)
	files["invoic_unb_0007_5.edi"] = bytes.Replace(ok, []byte("+4012345000009:14+"), []byte("+4012345000009:14ZZZ+"), 1)
	files["invoic_unb_0035_7.edi"] = bytes.Replace(ok, []byte("+INV0042++INVOIC'"), []byte("+INV0042++INVOIC++++7'"), 1)
	files["invoic_unb_time_2460.edi"] = bytes.Replace(ok, []byte("+240315:0930+"), []byte("+240315:2460+"), 1)
	files["invoic_unb_v3_date8.edi"] = bytes.Replace(ok, []byte("+240315:0930+"), []byte("+20240315:0930+"), 1)
	files["invoic_unb_v4_date6.edi"] = bytes.Replace(ok, []byte("UNB+UNOA:3+"), []byte("UNB+UNOC:4+"), 1)
	files["invoic_unb_unow_v3.edi"] = bytes.Replace(ok, []byte("UNB+UNOA:3+"), []byte("UNB+UNOW:3+"), 1)
	files["x12_isa13_alpha.edi"] = bytes.ReplaceAll(x12, []byte("000000101"), []byte("00000010A"))
	files["x12_isa15_x.edi"] = bytes.Replace(x12, []byte("*0*T*>~"), []byte("*0*X*>~"), 1)
	files["x12_isa09_date.edi"] = bytes.Replace(x12, []byte("*240315*0930*^*"), []byte("*261399*0930*^*"), 1)
	files["x12_isa11_00401.edi"] = bytes.Replace(bytes.Replace(x12, []byte("*^*00501*"), []byte("*^*00401*"), 1),
		[]byte("ITEM-1^ITEM-1A"), []byte("ITEM-1"), 1)
	files["x12_ctl_char_po1.edi"] = bytes.Replace(x12, []byte("ITEM-1^ITEM-1A"), []byte("ITEM\x01-1^ITEM-1A"), 1)
	files["x12_long_element.edi"] = bytes.Replace(x12, []byte("*BP*ITEM-2~"), []byte("*BP*"+strings.Repeat("X", 70000)+"~"), 1)
	set2 := bytes.ReplaceAll(x12[bytes.Index(x12, []byte("ST*850")):bytes.Index(x12, []byte("GE*"))], []byte("0001~"), []byte("0002~"))
	twoSets := bytes.Replace(bytes.Replace(x12, []byte("GE*1*101~"), append(set2, []byte("GE*2*101~")...), 1), []byte("SE*8*0002"), []byte("SE*9*0002"), 1)
	files["x12_two_sets_bad.edi"] = bytes.Replace(twoSets, []byte("SE*8*0002"), []byte("SE*9*0002"), 1)
	files["x12_ge_count.edi"] = bytes.Replace(x12, []byte("GE*1*101~"), []byte("GE*2*101~"), 1)
	group2 := bytes.ReplaceAll(x12[bytes.Index(x12, []byte("GS*")):bytes.Index(x12, []byte("IEA*"))], []byte("*101"), []byte("*102"))
	files["x12_two_groups.edi"] = bytes.Replace(bytes.Replace(x12, []byte("IEA*1*"), append(bytes.Replace(group2, []byte("SE*8*"), []byte("SE*7*"), 1), []byte("IEA*2*")...), 1), nil, nil, 0)
	files["x12_no_se.edi"] = bytes.Replace(x12, []byte("SE*8*0001~\n"), nil, 1)
	grouped := bytes.Replace(bytes.Replace(ok, []byte("INVOIC'\n"), []byte("INVOIC'\nUNG+INVOIC+4012345000009:14+4098765000002:14+240315:0930+G1+UN+D:96A'\n"), 1),
		[]byte("UNZ+1+"), []byte("UNE+1+G1'\nUNZ+1+"), 1)
	files["invoic_group_ok.edi"] = grouped
	files["invoic_une_count.edi"] = bytes.Replace(grouped, []byte("UNE+1+G1"), []byte("UNE+2+G1"), 1)
	files["invoic_une_ref.edi"] = bytes.Replace(grouped, []byte("UNE+1+G1"), []byte("UNE+1+G2"), 1)
	files["invoic_ung_0038.edi"] = bytes.Replace(grouped, []byte("UNG+INVOIC+"), []byte("UNG+INVOICXX+"), 1)
	files["invoic_group_qty.edi"] = bytes.Replace(grouped, []byte("QTY+47:10:PCE"), []byte("QTY+47:1O:PCE"), 1)
	files["invoic_test_bad_total.edi"] = bytes.Replace(read(t, "invoic_bad_total.edi"), []byte("+INV0042++INVOIC'"), []byte("+INV0042++INVOIC++++1'"), 1)
	files["invoic_ack_requested.edi"] = bytes.Replace(ok, []byte("+INV0042++INVOIC'"), []byte("+INV0042++INVOIC++1'"), 1)
	files["invoic_receipt_requested.edi"] = bytes.Replace(ok, []byte("+INV0042++INVOIC'"), []byte("+INV0042++INVOIC++2'"), 1)
	files["x12_ta1_requested.edi"] = bytes.Replace(x12, []byte("*000000101*0*T*"), []byte("*000000101*1*T*"), 1)
	files["invoic_bgm_1004_36.edi"] = bytes.Replace(ok, []byte("BGM+380+R-2024-0042+9'"), []byte("BGM+380+R-2024-0042-"+strings.Repeat("9", 24)+"+9'"), 1)
	files["invoic_unod.edi"] = bytes.Replace(ok, []byte("UNB+UNOA:3+"), []byte("UNB+UNOD:3+"), 1)
	files["invoic_qty_repeated.edi"] = bytes.Replace(ok, []byte("QTY+47:10:PCE"), []byte("QTY+47:10:PCE*47:1:PCE"), 1)
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	extraDir = dir
}

// extraDir holds inputs made by setupAckFiles.
var extraDir string

func readCase(t *testing.T, name string) []byte {
	if b, err := os.ReadFile(filepath.Join(extraDir, name)); err == nil {
		return b
	}
	return read(t, name)
}

// TestAcknowledgements decides each case, builds its acknowledgements,
// compares them with the golden files (-update rewrites them) and parses
// every one with edihub's own parser, strictly: each error code emitted
// round-trips.
func TestAcknowledgements(t *testing.T) {
	setupAckFiles(t)
	strict := strictValidator(t)
	for _, c := range ackCases() {
		t.Run(c.name, func(t *testing.T) {
			acks, err := caseAcks(t, c)
			if (c.code == 0 && c.name != "aperak-total" && !c.business) != (err == nil) {
				t.Fatalf("decision: %v", err)
			}
			var types []string
			for _, a := range acks {
				types = append(types, a.Header.Get(wire.HdrMessageType))
			}
			if strings.Join(types, ",") != strings.Join(c.types, ",") {
				t.Fatalf("acknowledgements %v, want %v (decision: %v)", types, c.types, err)
			}
			var all bytes.Buffer
			for i, a := range acks {
				if a.Subject != wire.OutboundSubject("ACME", c.types[i]) || a.Header.Get(wire.HdrAckOrigin) != "INGEST:42" ||
					a.Header.Get(wire.HdrCorrelationID) != "corr-1" || a.Header.Get(wire.HdrAckOf) == "" {
					t.Errorf("ack %d: subject %s headers %v", i, a.Subject, a.Header)
				}
				ackDoc, perr := edifact.Parse(a.Data, &edifact.Options{})
				if perr != nil {
					t.Fatalf("%s does not parse with edihub's parser: %v\n%s", types[i], perr, a.Data)
				}
				checkAck(t, types[i], ackDoc, c, a.Data)
				if ackDoc.Standard == edifact.EDIFACT {
					// as `edihub edifact validate --strictness strict`:
					// the service segments too
					for _, ich := range ackDoc.Interchanges {
						if err := strict.ValidateInterchange(ich).Err(); err != nil {
							t.Fatalf("%s envelope fails strict validation: %v\n%s", types[i], err, a.Data)
						}
					}
					for _, m := range ackDoc.Messages() {
						if err := strict.Validate(m).Err(); err != nil {
							t.Fatalf("%s fails strict directory validation: %v\n%s", types[i], err, a.Data)
						}
					}
				}
				all.Write(a.Data)
				all.WriteByte('\n')
			}
			matchesGolden(t, c.name, all.Bytes(), c.want)
		})
	}
}

// caseAcks decides case c and builds its acknowledgements (setupAckFiles
// first); err is the decision.
func caseAcks(t *testing.T, c ackCase) ([]*nats.Msg, error) {
	t.Helper()
	p := acmeProfile()
	if c.profile != nil {
		c.profile(&p)
	}
	r := newRegistry(t, p)
	data := readCase(t, c.file)
	if c.syntax4 {
		data = v4(data)
	}
	doc, err := decide(r, "ACME", nil, data)
	return r.Acks("ACME", "INGEST:42", "corr-1", data, doc, err), err
}

// checkAck reads the ack's own segments: the message type, and the error
// code where a negative one must carry it.
func checkAck(t *testing.T, typ string, doc *edifact.Document, c ackCase, raw []byte) {
	t.Helper()
	code := c.code
	msgs := doc.Messages()
	if len(msgs) == 0 && typ != TypeTA1 {
		t.Fatalf("%s holds no message", typ)
	}
	text := string(raw)
	switch typ {
	case TypeCONTRL:
		if msgs[0].Type != "CONTRL" {
			t.Fatalf("type %s", msgs[0].Type)
		}
		uci := msgs[0].Segments[1]
		if uci.Tag != "UCI" || uci.Value(1, 1) == "" {
			t.Fatalf("second segment %v", uci)
		}
		action := uci.Value(4, 1)
		if code == 0 {
			if action != "7" && action != "8" {
				t.Fatalf("positive CONTRL with UCI action %s", action)
			}
			return
		}
		if action != "4" {
			t.Fatalf("negative CONTRL with UCI action %s", action)
		}
		found := false
		for _, s := range msgs[0].Segments {
			var got string
			switch s.Tag {
			case "UCI", "UCF":
				got = s.Value(5, 1)
			case "UCM":
				got = s.Value(4, 1)
			case "UCS":
				got = s.Value(2, 1)
			case "UCD":
				got = s.Value(1, 1)
			}
			if got == strconv.Itoa(code) {
				found = true
			}
		}
		if !found {
			t.Fatalf("code %d not in %s", code, text)
		}
	case TypeAPERAK:
		var ftx string
		for _, s := range msgs[0].Segments {
			if s.Tag == "FTX" {
				ftx = strings.Join(s.Elements[3], "")
			}
		}
		if msgs[0].Type != "APERAK" || !strings.Contains(text, "RFF+ACW:1'") || !strings.Contains(ftx, RuleInvoicTotal) {
			t.Fatalf("APERAK %s (FTX %q)", text, ftx)
		}
	case Type999, Type997:
		if msgs[0].Type != typ {
			t.Fatalf("type %s", msgs[0].Type)
		}
		if code == 0 && !strings.Contains(text, "AK9*A*") || code != 0 && !strings.Contains(text, "AK9*R*") {
			t.Fatalf("%s: %s", typ, text)
		}
	case TypeTA1:
		note := c.note
		if note == 0 && code != 0 {
			note = ta1Note(target{code: code})
		}
		status := "R"
		if code == 0 {
			status = "A"
		}
		if !strings.Contains(text, "TA1*") || !strings.Contains(text, fmt.Sprintf("*%s*%03d~", status, note)) {
			t.Fatalf("TA1: %s", text)
		}
	}
}

// TestEveryCodeRoundTrips builds a negative CONTRL (syntax 3 and 4) for
// every 0085 code the parser, the directory validator or the profiles can
// report, at each level a CONTRL names (UCI on the UNB, UCM on the UNH,
// UCS for a segment, UCD for an element), and checks that each parses
// and passes strict directory validation, which also checks the code is
// in code list 0085.
func TestEveryCodeRoundTrips(t *testing.T) {
	strict := strictValidator(t)
	doc, err := edifact.Parse(read(t, "invoic_ok.edi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	codes := []int{2, 7, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 25, 26, 28, 29, 30, 32, 33, 35, 36, 37, 38, 39, 40, 45}
	for _, version := range []string{"3", "4"} {
		ich := *doc.Interchanges[0]
		ich.SyntaxVersion = version
		msg := *doc.Messages()[0]
		msg.Interchange = &ich
		for _, code := range codes {
			for _, tg := range []target{
				{ich: &ich, code: code, svcTag: "UNB", elem: 3, comp: 1},
				{ich: &ich, msg: &msg, code: code, svcTag: "UNH", elem: 3, comp: 2},
				{ich: &ich, msg: &msg, code: code, msgSeg: 7, segTag: "QTY"},
				{ich: &ich, msg: &msg, code: code, msgSeg: 7, segTag: "QTY", elem: 2, comp: 2},
			} {
				out := contrl(tg, "A1", fixedNow(), 4)
				ack, err := edifact.Parse(out, nil)
				if err != nil {
					t.Fatalf("syntax %s code %d: %v\n%s", version, code, err, out)
				}
				if err := strict.Validate(ack.Messages()[0]).Err(); err != nil {
					t.Fatalf("syntax %s code %d: %v\n%s", version, code, err, out)
				}
				if !bytes.Contains(out, []byte("+"+strconv.Itoa(code))) {
					t.Fatalf("syntax %s: code %d not in %s", version, code, out)
				}
			}
		}
	}
}

// TestDuplicateAcks: item 10. A duplicate interchange gets a negative
// CONTRL naming UNB 0020 with 0085 26 (duplicate detected; CONTRL UCI
// S011 0098 = 6), an X12 one a TA1 R with TA105 025 (X12.5 TA1: duplicate
// interchange control number). Golden files as TestAcknowledgements.
func TestDuplicateAcks(t *testing.T) {
	for _, c := range []struct {
		name, file string
		profile    func(*Profile)
		want       string
	}{
		{"duplicate-contrl", "invoic_ok.edi", nil, "UCI+INV0042+4012345000009:14+4098765000002:14+4+26+UNB+6'"},
		{"duplicate-ta1", "x12_850.edi", x12Partner, "TA1*000000101*240315*0930*R*025~"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := acmeProfile()
			if c.profile != nil {
				c.profile(&p)
			}
			r := newRegistry(t, p)
			acks := r.DuplicateAcks("ACME", "INGEST:42", "corr-1", read(t, c.file))
			if len(acks) != 1 {
				t.Fatalf("%d acknowledgements", len(acks))
			}
			got := acks[0].Data
			if !bytes.Contains(got, []byte(c.want)) {
				t.Fatalf("lacks %s:\n%s", c.want, got)
			}
			if _, err := edifact.Parse(got, nil); err != nil {
				t.Fatalf("does not parse: %v\n%s", err, got)
			}
			golden := filepath.Join("testdata", "golden", c.name+".edi")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(want, append(got, '\n')) {
				t.Fatalf("differs from %s:\n got: %s\nwant: %s", golden, got, want)
			}
		})
	}
}
