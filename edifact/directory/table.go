package directory

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// tables is the generated compact form of the shipped directories (see
// generate.go): gzip over a binary stream of varints and string-table
// references, with segment layouts, message structures and code lists
// stored once however many directories share them.
//
//go:embed tables.bin.gz
var tables []byte

const tableMagic = "EDIHUBDIR1"

// Builtin returns the directories shipped in the binary: D95A, D95B, D96A,
// D97B, D99B, D01B, D03B and the service messages of syntax versions 3 and 4.
// Each call decodes the embedded tables anew (a few milliseconds): build the
// Set once and share it.
func Builtin() (*Set, error) {
	dirs, err := DecodeTables(bytes.NewReader(tables))
	if err != nil {
		return nil, fmt.Errorf("built-in directories: %w", err)
	}
	return NewSet(dirs...), nil
}

// EncodeTables writes dirs in the compact form that DecodeTables reads.
func EncodeTables(w io.Writer, dirs []*Directory) error {
	e := &encoder{strs: map[string]int{}, blobs: map[string]int{}}
	var body bytes.Buffer
	e.uint(&body, len(dirs))
	for _, d := range dirs {
		e.str(&body, d.Name)
		e.uint(&body, len(d.Messages))
		for _, t := range sortedKeys(d.Messages) {
			e.uint(&body, e.blob(e.message(d.Messages[t])))
		}
		e.uint(&body, len(d.Segments))
		for _, t := range sortedKeys(d.Segments) {
			e.uint(&body, e.blob(e.segment(d.Segments[t])))
		}
		e.uint(&body, len(d.Codes))
		for _, id := range sortedKeys(d.Codes) {
			var b bytes.Buffer
			e.str(&b, id)
			e.uint(&b, len(d.Codes[id]))
			for _, c := range d.Codes[id] {
				e.str(&b, c)
			}
			e.uint(&body, e.blob(b.Bytes()))
		}
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	var head bytes.Buffer
	head.WriteString(tableMagic)
	e.uint(&head, len(e.strList))
	for _, s := range e.strList {
		e.uint(&head, len(s))
		head.WriteString(s)
	}
	e.uint(&head, len(e.blobList))
	for _, b := range e.blobList {
		e.uint(&head, len(b))
		head.WriteString(b)
	}
	for _, b := range [][]byte{head.Bytes(), body.Bytes()} {
		if _, err := zw.Write(b); err != nil {
			return err
		}
	}
	return zw.Close()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

type encoder struct {
	strs     map[string]int
	strList  []string
	blobs    map[string]int
	blobList []string
}

func (e *encoder) uint(b *bytes.Buffer, n int) { b.Write(binary.AppendUvarint(nil, uint64(n))) }

func (e *encoder) str(b *bytes.Buffer, s string) {
	i, ok := e.strs[s]
	if !ok {
		i = len(e.strList)
		e.strs[s] = i
		e.strList = append(e.strList, s)
	}
	e.uint(b, i)
}

func (e *encoder) blob(b []byte) int {
	i, ok := e.blobs[string(b)]
	if !ok {
		i = len(e.blobList)
		e.blobs[string(b)] = i
		e.blobList = append(e.blobList, string(b))
	}
	return i
}

func (e *encoder) message(m *MessageDef) []byte {
	var b bytes.Buffer
	for _, s := range []string{m.Type, m.Version, m.Release, m.Agency} {
		e.str(&b, s)
	}
	e.nodes(&b, m.Body)
	return b.Bytes()
}

func (e *encoder) nodes(b *bytes.Buffer, ns []Node) {
	e.uint(b, len(ns))
	for _, n := range ns {
		flags := 0
		if n.Required {
			flags |= 1
		}
		if n.Tag == "" {
			flags |= 2
		}
		e.uint(b, flags)
		e.str(b, n.Tag+n.Group)
		e.uint(b, n.MaxRepeat)
		if n.Tag == "" {
			e.nodes(b, n.Children)
		}
	}
}

func (e *encoder) segment(s *SegmentDef) []byte {
	var b bytes.Buffer
	e.str(&b, s.Tag)
	e.uint(&b, len(s.Elements))
	for _, el := range s.Elements {
		flags := 0
		if el.Required {
			flags |= 1
		}
		if el.Components != nil {
			flags |= 2
		}
		e.uint(&b, flags)
		e.str(&b, el.ID)
		if el.Components == nil {
			e.component(&b, el.Simple)
			continue
		}
		e.uint(&b, len(el.Components))
		for _, c := range el.Components {
			e.component(&b, c)
		}
	}
	return b.Bytes()
}

func (e *encoder) component(b *bytes.Buffer, c ComponentDef) {
	flags := int(c.Type) << 1
	if c.Required {
		flags |= 1
	}
	e.uint(b, flags)
	e.str(b, c.ID)
	e.uint(b, c.MinLen)
	e.uint(b, c.MaxLen)
}

// DecodeTables reads directories written by EncodeTables.
func DecodeTables(r io.Reader) ([]*Directory, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, err
	}
	d := &decoder{b: raw}
	if !bytes.HasPrefix(raw, []byte(tableMagic)) {
		return nil, errors.New("not a directory table (bad magic)")
	}
	d.b = raw[len(tableMagic):]
	d.strs = make([]string, d.count())
	for i := range d.strs {
		d.strs[i] = string(d.bytes(d.count()))
	}
	d.blobs = make([][]byte, d.count())
	for i := range d.blobs {
		d.blobs[i] = d.bytes(d.count())
	}
	out := make([]*Directory, d.count())
	msgs, segs := map[int]*MessageDef{}, map[int]*SegmentDef{}
	for i := range out {
		dir := &Directory{Name: d.str(), Messages: map[string]*MessageDef{}, Segments: map[string]*SegmentDef{}, Codes: map[string][]string{}}
		for n := d.count(); n > 0 && d.err == nil; n-- {
			k := d.uint()
			m, ok := msgs[k]
			if !ok {
				m = d.sub(k).message()
				msgs[k] = m
			}
			dir.Messages[m.Type] = m
		}
		for n := d.count(); n > 0 && d.err == nil; n-- {
			k := d.uint()
			s, ok := segs[k]
			if !ok {
				s = d.sub(k).segment()
				segs[k] = s
			}
			dir.Segments[s.Tag] = s
		}
		for n := d.count(); n > 0 && d.err == nil; n-- {
			sd := d.sub(d.uint())
			id := sd.str()
			list := make([]string, sd.count())
			for j := range list {
				list[j] = sd.str()
			}
			if sd.err != nil {
				d.err = sd.err
			}
			dir.Codes[id] = list
		}
		out[i] = dir
	}
	if d.err != nil {
		return nil, fmt.Errorf("directory table: %w", d.err)
	}
	return out, nil
}

type decoder struct {
	b     []byte
	strs  []string
	blobs [][]byte
	err   error
	sh    *decoder // the decoder whose error a sub-decoder reports
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = errors.New(msg)
		if d.sh != nil && d.sh.err == nil {
			d.sh.err = d.err
		}
	}
}

func (d *decoder) uint() int {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > 1<<30 {
		d.fail("truncated or bad varint")
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

// count is a length that cannot exceed the bytes left (each item is at
// least one byte), so a corrupt table cannot make a huge allocation.
func (d *decoder) count() int {
	n := d.uint()
	if n > len(d.b) {
		d.fail("count beyond the data")
		return 0
	}
	return n
}

func (d *decoder) bytes(n int) []byte {
	if n > len(d.b) {
		d.fail("truncated")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	i := d.uint()
	if i >= len(d.strs) {
		d.fail("bad string reference")
		return ""
	}
	return d.strs[i]
}

func (d *decoder) sub(i int) *decoder {
	sh := d
	if d.sh != nil {
		sh = d.sh
	}
	if i >= len(d.blobs) {
		d.fail("bad blob reference")
		return &decoder{err: d.err, sh: sh}
	}
	return &decoder{b: d.blobs[i], strs: d.strs, blobs: d.blobs, sh: sh}
}

func (d *decoder) message() *MessageDef {
	m := &MessageDef{Type: d.str(), Version: d.str(), Release: d.str(), Agency: d.str()}
	m.Body = d.nodes(0)
	return m
}

func (d *decoder) nodes(depth int) []Node {
	if depth > 32 {
		d.fail("groups nested too deep")
		return nil
	}
	ns := make([]Node, d.count())
	for i := range ns {
		flags := d.uint()
		name := d.str()
		ns[i] = Node{Required: flags&1 != 0, MaxRepeat: d.uint()}
		if flags&2 != 0 {
			ns[i].Group = name
			ns[i].Children = d.nodes(depth + 1)
			if len(ns[i].Children) == 0 || ns[i].Children[0].Tag == "" {
				d.fail("group without a trigger segment")
			}
		} else {
			ns[i].Tag = name
		}
	}
	return ns
}

func (d *decoder) segment() *SegmentDef {
	s := &SegmentDef{Tag: d.str()}
	if n := d.count(); n > 0 {
		s.Elements = make([]ElementDef, n)
	}
	for i := range s.Elements {
		flags := d.uint()
		el := ElementDef{Required: flags&1 != 0, ID: d.str()}
		if flags&2 == 0 {
			el.Simple = d.component()
		} else {
			el.Components = make([]ComponentDef, d.count())
			for j := range el.Components {
				el.Components[j] = d.component()
			}
		}
		s.Elements[i] = el
	}
	return s
}

func (d *decoder) component() ComponentDef {
	flags := d.uint()
	c := ComponentDef{Required: flags&1 != 0, Type: uint8(flags >> 1), ID: d.str(), MinLen: d.uint(), MaxLen: d.uint()}
	if c.Type > TypeN {
		d.fail("bad data element type")
	}
	return c
}
