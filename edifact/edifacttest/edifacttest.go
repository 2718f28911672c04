// Package edifacttest is the EDI test kit: the interchanges tests send,
// written once. Tests only (test/arch_test.go lists it as a test kit); it
// imports nothing of the module, so every package's tests may use it.
package edifacttest

import (
	"bytes"
	"fmt"
	"strings"
)

// Invoice is a small valid EDIFACT interchange (UNOC, one INVOIC D:96A)
// whose control reference and document number are ref, from SENDER1:14 to
// RECEIVER1:14.
func Invoice(ref string) string { return InvoiceFrom("SENDER1:14", "RECEIVER1:14", ref) }

// InvoiceFrom is Invoice with the UNB sender and recipient given
// ("ID:QUALIFIER").
func InvoiceFrom(sender, recipient, ref string) string {
	return "UNA:+.? 'UNB+UNOC:3+" + sender + "+" + recipient + "+261130:1200+" + ref + "'" +
		"UNH+1+INVOIC:D:96A:UN'BGM+380+" + ref + "+9'UNT+3+1'UNZ+1+" + ref + "'"
}

// BadCount is InvoiceFrom whose UNT counts 9 segments where the message
// has 3: the parse stage's envelope check refuses it (a schema dead
// letter).
func BadCount(sender, recipient, ref string) string {
	return "UNA:+.? 'UNB+UNOC:3+" + sender + "+" + recipient + "+261130:1200+" + ref + "'" +
		"UNH+1+INVOIC:D:96A:UN'BGM+380+" + ref + "+9'UNT+9+1'UNZ+1+" + ref + "'"
}

// BigInvoice is one INVOIC D:96A (UNOA, from 4012345000009:14 to
// 4098765000002:14, control reference INV0042) with n lines whose amounts
// sum to the total (about 100 bytes a line): it passes the built-in rules.
func BigInvoice(n int) []byte {
	var b bytes.Buffer
	b.WriteString("UNB+UNOA:3+4012345000009:14+4098765000002:14+240315:0930+INV0042++INVOIC'")
	b.WriteString("UNH+1+INVOIC:D:96A:UN'BGM+380+R-1+9'DTM+137:20240315:102'NAD+BY+4098765000002::9'")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "LIN+%d++4000862141404:EN'QTY+47:1:PCE'MOA+203:1.00'PRI+AAA:1.00'", i)
	}
	fmt.Fprintf(&b, "UNS+S'MOA+79:%d.00'UNT+%d+1'UNZ+1+INV0042'", n, 4*n+7)
	return b.Bytes()
}

// TextInvoice is a valid INVOIC D:96A (UNOA, control reference ref) of
// about size bytes, most of them free-text segments (FTX, "LARGE PAYLOAD
// TEXT"): a view about as large as the interchange, cheap to parse.
func TextInvoice(sender, recipient, ref string, size int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "UNB+UNOA:3+%s+%s+240315:0930+%s++INVOIC'UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'", sender, recipient, ref)
	text := strings.Repeat("LARGE PAYLOAD TEXT ", 16)
	n := 0
	for b.Len() < size-len(text)-60 {
		b.WriteString("FTX+AAI+++" + text + "'")
		n++
	}
	fmt.Fprintf(&b, "UNT+%d+1'UNZ+1+%s'", n+3, ref)
	return b.Bytes()
}
