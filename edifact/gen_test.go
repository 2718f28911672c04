package edifact

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// invoicReader streams a valid INVOIC D96A interchange with n LIN groups
// (4 segments, about 100 bytes each) without holding it in memory.
type invoicReader struct {
	n, i  int
	stage int
	buf   bytes.Buffer
	line  []byte
}

const invoicHead = "UNA:+.? '\r\nUNB+UNOA:3+SENDER:14+RECEIVER:14+240101:1200+REF1'\r\n" +
	"UNH+M1+INVOIC:D:96A:UN:EAN008'\r\nBGM+380+INV0001+9'\r\nDTM+137:20240101:102'\r\n" +
	"NAD+SU+4000001000005::9++SUPPLIER GMBH?+CO KG+STRASSE 1+STADT++12345+DE'\r\n"

// invoicSegments is the number of segments of an interchange with n lines.
func invoicSegments(n int) int { return 5 + 4*n + 4 }

func newInvoicReader(n int) *invoicReader {
	r := &invoicReader{n: n}
	r.buf.WriteString(invoicHead)
	return r
}

func (r *invoicReader) Read(p []byte) (int, error) {
	for r.buf.Len() < len(p) && r.stage < 2 {
		switch {
		case r.i < r.n:
			r.i++
			// Built with strconv so that the generator does not allocate.
			b := r.line[:0]
			b = append(b, "LIN+"...)
			b = strconv.AppendInt(b, int64(r.i), 10)
			b = append(b, "++4000862141404:EN'\r\nQTY+47:"...)
			b = strconv.AppendInt(b, int64(r.i%97+1), 10)
			b = append(b, ":PCE'\r\nMOA+203:"...)
			b = strconv.AppendInt(b, int64(r.i*3), 10)
			b = append(b, ".50'\r\nPRI+AAA:12.5:CT:AAE'\r\n"...)
			r.buf.Write(b)
			r.line = b
		case r.stage == 0:
			r.stage = 1
			fmt.Fprintf(&r.buf, "UNS+S'\r\nMOA+79:1000'\r\nUNT+%d+M1'\r\nUNZ+1+REF1'\r\n", invoicSegments(r.n)-2)
		default:
			r.stage = 2
		}
	}
	if r.buf.Len() == 0 {
		return 0, io.EOF
	}
	return r.buf.Read(p)
}

// genINVOIC returns the whole interchange with n lines.
func genINVOIC(n int) []byte {
	b, err := io.ReadAll(newInvoicReader(n))
	if err != nil {
		panic(err)
	}
	return b
}
