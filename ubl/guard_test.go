package ubl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpus is the shared UBL corpus, used by path: $EDIHUB_UBL_CORPUS, else
// ../shared/ubl from the repository root (or from a worktree one level
// further down).
var corpus = func() string {
	if d := os.Getenv("EDIHUB_UBL_CORPUS"); d != "" {
		return d
	}
	for _, d := range []string{"../../shared/ubl", "../../../shared/ubl"} {
		if _, err := os.Stat(filepath.Join(d, "SOURCES.tsv")); err == nil {
			return d
		}
	}
	return "../../shared/ubl"
}()

// minimal is this package's own small fixture (the corpus is used by path only).
const minimal = `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:ID>INV-1</cbc:ID>
</Invoice>
`

func wantReason(t *testing.T, err error, reason string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *Error %s", err, err, reason)
	}
	if e.Reason != reason {
		t.Fatalf("reason %q (%v), want %q", e.Reason, e, reason)
	}
	if e.Line < 1 || e.Column < 1 {
		t.Fatalf("error %v has no position", e)
	}
	return e
}

func TestGuardRecognisesUBLByNamespace(t *testing.T) {
	cases := []struct {
		name, doc, typ, reason string
	}{
		{"default namespace", minimal, TypeInvoice, ""},
		{"prefixed", `<ubl:CreditNote xmlns:ubl="` + NSCreditNote + `"/>`, TypeCreditNote, ""},
		{"bom and comment", "\xEF\xBB\xBF<!-- x --><?pi y?>\n<Invoice xmlns='" + NSInvoice + "'/>", TypeInvoice, ""},
		{"wrong namespace", `<Invoice xmlns="urn:example"/>`, "", ReasonNotUBL},
		{"no namespace", `<Invoice/>`, "", ReasonNotUBL},
		{"invoice in credit note namespace", `<Invoice xmlns="` + NSCreditNote + `"/>`, "", ReasonNotUBL},
		{"prefix declared for another", `<a:Invoice xmlns="` + NSInvoice + `" xmlns:a="urn:x"/>`, "", ReasonNotUBL},
		{"EDIFACT", "UNB+UNOA:3+A+B+200101:1200+1'", "", ReasonNotUBL},
		{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><Invoice xmlns="` + NSInvoice + `"/>`, "", ReasonEncoding},
		{"utf-16", "\xFF\xFE<\x00", "", ReasonEncoding},
		{"empty", "", "", ReasonNotUBL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := Guard([]byte(c.doc), nil)
			if c.reason != "" {
				wantReason(t, err, c.reason)
				if IsUBL([]byte(c.doc)) && c.reason == ReasonNotUBL {
					t.Fatal("IsUBL true for a refused root")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Type != c.typ || !IsUBL([]byte(c.doc)) {
				t.Fatalf("type %q IsUBL %v, want %q", g.Type, IsUBL([]byte(c.doc)), c.typ)
			}
		})
	}
}

func TestGuardLimitsArePositioned(t *testing.T) {
	open := `<Invoice xmlns="` + NSInvoice + `">` + "\n"
	long := strings.Repeat("x", 70) // the namespace (55 bytes) fits MaxTextLen 60
	cases := []struct {
		name   string
		doc    string
		lim    Limits
		reason string
		line   int
		column int
	}{
		{"size", open + "</Invoice>", Limits{MaxSize: 10}, ReasonSize, 1, 11},
		{"doctype", "<?xml version='1.0'?>\n<!DOCTYPE Invoice [<!ENTITY a 'b'>]>\n" + open + "</Invoice>", Limits{}, ReasonDoctype, 2, 1},
		{"doctype after root", open + "<!DOCTYPE x>\n</Invoice>", Limits{}, ReasonDoctype, 2, 1},
		{"entity declaration", open + "  <!ENTITY x 'y'>\n</Invoice>", Limits{}, ReasonDoctype, 2, 3},
		{"depth", open + "<a><b><c></c></b></a></Invoice>", Limits{MaxDepth: 3}, ReasonDepth, 2, 7},
		{"elements", open + "<a/><b/><c/></Invoice>", Limits{MaxElements: 3}, ReasonElements, 2, 9},
		{"attributes", open + `<a x="1" y="2" z="3"/></Invoice>`, Limits{MaxAttributes: 2}, ReasonAttributes, 2, 16},
		{"element name", open + "<abcdefghij/></Invoice>", Limits{MaxNameLen: 8}, ReasonName, 2, 2},
		{"text", open + "<a>" + long + "</a></Invoice>", Limits{MaxTextLen: 60}, ReasonText, 2, 64},
		{"attribute value", open + `<a x="` + long + `"/></Invoice>`, Limits{MaxTextLen: 60}, ReasonText, 2, 67},
		{"cdata", open + `<a><![CDATA[` + long + `]]></a></Invoice>`, Limits{MaxTextLen: 60}, ReasonText, 2, 73},
		{"invalid utf-8", open + "<a>\xff</a></Invoice>", Limits{}, ReasonUTF8, 2, 4},
		{"control character", open + "<a>\x01</a></Invoice>", Limits{}, ReasonUTF8, 2, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Guard([]byte(c.doc), &c.lim)
			e := wantReason(t, err, c.reason)
			if e.Line != c.line || e.Column != c.column {
				t.Fatalf("%v: at %d:%d, want %d:%d", e, e.Line, e.Column, c.line, c.column)
			}
			if e.Cause() != "schema" || !strings.Contains(e.Error(), "line") {
				t.Fatalf("cause %q, message %q", e.Cause(), e.Error())
			}
		})
	}
}

func TestGuardAcceptsEveryCorpusDocument(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpus, "valid", "*"))
	if len(files) == 0 {
		t.Skip("corpus not found at " + corpus)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Guard(data, nil); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		if !IsUBL(data) {
			t.Errorf("%s: IsUBL false", filepath.Base(f))
		}
	}
}
