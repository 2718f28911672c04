package ubl

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteOutlineMarksTheFailingElement(t *testing.T) {
	doc, findings, err := Check([]byte(mlrDoc), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := doc.WriteOutline(&buf, findings); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != doc.Elements {
		t.Fatalf("%d lines for %d elements:\n%s", len(lines), doc.Elements, buf.String())
	}
	var total string
	for _, l := range lines {
		if strings.Contains(l, "/Invoice/cac:LegalMonetaryTotal ") || strings.HasSuffix(l, "/Invoice/cac:LegalMonetaryTotal") || strings.Contains(l, "/Invoice/cac:LegalMonetaryTotal  <-") {
			total = l
		}
	}
	if !strings.Contains(total, "<- ") || !strings.Contains(total, "BR-CO-16") || !strings.HasPrefix(strings.TrimSpace(total), "10:3") {
		t.Fatalf("LegalMonetaryTotal line %q\n%s", total, buf.String())
	}
	if !strings.Contains(buf.String(), "/Invoice/cac:LegalMonetaryTotal/cbc:PayableAmount = 99.00 @currencyID=EUR") {
		t.Fatalf("no value line:\n%s", buf.String())
	}
}
