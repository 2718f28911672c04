package edifact

import (
	"strings"
	"unicode/utf8"
)

// charset is what a syntax identifier (code list 0001) means for the bytes of
// an interchange: which printable bytes it allows, and how to turn its values
// into UTF-8 for the JSON view.
type charset struct {
	id      string
	known   bool      // listed in code list 0001 (or a well-known IATA level)
	allowed [256]bool // bytes allowed besides separators, CR and LF
	utf8    bool      // bytes must also form valid UTF-8 (UNOW, UNOY)
	high    *[96]rune // ISO 8859 part for 0xA0..0xFF, nil when not 8859
	latin1  bool      // ISO 8859-1 (UNOC)
	note    string    // what the id stands for, for messages
}

const levelA = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-()/='+:?!\"%&*;<>"

var charsets = map[string]*charset{}

func init() {
	add := func(id, note string, f func(c *charset)) {
		c := &charset{id: id, known: true, note: note}
		f(c)
		charsets[id] = c
	}
	levelAFn := func(c *charset) {
		for i := 0; i < len(levelA); i++ {
			c.allowed[levelA[i]] = true
		}
	}
	levelBFn := func(c *charset) {
		levelAFn(c)
		for b := 'a'; b <= 'z'; b++ {
			c.allowed[b] = true
		}
	}
	ascii := func(c *charset) {
		for b := 0x20; b < 0x7f; b++ {
			c.allowed[b] = true
		}
	}
	add("UNOA", "ISO 646 level A (uppercase)", levelAFn)
	add("UNOB", "ISO 646 level B (mixed case)", levelBFn)
	// IATA's own identifiers for levels A and B (PADIS), common in airline traffic.
	add("IATA", "IATA level A", levelAFn)
	add("IATB", "IATA level B", levelBFn)
	add("UNOC", "ISO 8859-1", func(c *charset) {
		ascii(c)
		for b := 0xA0; b <= 0xFF; b++ {
			c.allowed[b] = true
		}
		c.latin1 = true
	})
	for id, tbl := range high8859 {
		add(id, "ISO 8859", func(c *charset) {
			ascii(c)
			for i, r := range tbl {
				if r != 0 {
					c.allowed[0xA0+i] = true
				}
			}
			c.high = tbl
		})
	}
	utf := func(c *charset) {
		ascii(c)
		for b := 0x80; b <= 0xFF; b++ {
			c.allowed[b] = true
		}
		c.utf8 = true
	}
	add("UNOW", "UTF-8", utf)
	// UNOY is ISO 10646 without code extension; in practice it is sent as UTF-8.
	add("UNOY", "ISO 10646 (UTF-8)", utf)
	// UNOX uses ISO 2022 escape sequences; ESC, SO and SI are part of its text.
	add("UNOX", "ISO 2022", func(c *charset) {
		ascii(c)
		for b := 0xA0; b <= 0xFF; b++ {
			c.allowed[b] = true
		}
		c.allowed[0x1B], c.allowed[0x0E], c.allowed[0x0F] = true, true, true
	})
	charsets["UNOD"].note = "ISO 8859-2"
	charsets["UNOE"].note = "ISO 8859-5"
	charsets["UNOF"].note = "ISO 8859-7"
	charsets["UNOG"].note = "ISO 8859-3"
	charsets["UNOH"].note = "ISO 8859-4"
	charsets["UNOI"].note = "ISO 8859-6"
	charsets["UNOJ"].note = "ISO 8859-8"
	charsets["UNOK"].note = "ISO 8859-9"
	charsets["UNOL"].note = "ISO 8859-15"
}

// anyText is used for unknown identifiers in lenient mode and for X12: every
// byte from 0x20 up except DEL; only control characters are refused.
var anyText = func() *charset {
	c := &charset{id: "", note: "any text"}
	for b := 0x20; b <= 0xFF; b++ {
		c.allowed[b] = b != 0x7f
	}
	return c
}()

// lookupCharset returns the charset of a syntax identifier, or nil.
func lookupCharset(id string) *charset { return charsets[id] }

// toUTF8 converts a value of this charset to UTF-8 for the JSON view.
// ASCII, the common case, is returned as is without allocating.
func (c *charset) toUTF8(s string) string {
	i := 0
	for i < len(s) && s[i] < 0x80 {
		i++
	}
	if i == len(s) {
		return s
	}
	switch {
	case c.utf8:
		return s // guarded as valid UTF-8 already
	case c.high != nil:
		var b strings.Builder
		b.Grow(len(s) + 8)
		for j := 0; j < len(s); j++ {
			x := s[j]
			switch {
			case x < 0x80:
				b.WriteByte(x)
			case x >= 0xA0 && c.high[x-0xA0] != 0:
				b.WriteRune(c.high[x-0xA0])
			default:
				b.WriteRune(utf8.RuneError)
			}
		}
		return b.String()
	case c.latin1:
		return latin1(s)
	}
	// A 7-bit level or an unknown identifier with 8-bit bytes, accepted in
	// lenient mode: most such senders really send UTF-8, the rest Latin-1.
	if utf8.ValidString(s) {
		return s
	}
	return latin1(s)
}

func latin1(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for j := 0; j < len(s); j++ {
		b.WriteRune(rune(s[j]))
	}
	return b.String()
}
