package directory

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// xmlNode is any element of the directory XML files (php-edifact's
// edifact-mapping layout): messages, groups, segments, composites, data
// elements and codes all use the same few attributes.
type xmlNode struct {
	XMLName   xml.Name
	ID        string    `xml:"id,attr"`
	Value     string    `xml:"value,attr"`
	MaxRepeat string    `xml:"maxrepeat,attr"`
	Required  string    `xml:"required,attr"`
	Type      string    `xml:"type,attr"`
	MaxLength string    `xml:"maxlength,attr"`
	Length    string    `xml:"length,attr"`
	Children  []xmlNode `xml:",any"`
}

func readXML(path string) (*xmlNode, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeXML(b, path)
}

func decodeXML(b []byte, name string) (*xmlNode, error) {
	var n xmlNode
	if err := xml.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return &n, nil
}

// LoadDir reads one directory folder in the XML layout of the shipped
// reference data: messages/<type>.xml, segments.xml, and where present
// codes.xml and service_codes_v3.xml / service_codes_v4.xml. name is the
// directory's name (D96A, Service_V3); the known transcription defects of
// that directory are corrected (see overrides.xml).
func LoadDir(path, name string) (*Directory, error) {
	d, err := LoadDirUncorrected(path, name)
	if err != nil {
		return nil, err
	}
	if err := ApplyOverrides(d, overridesXML); err != nil {
		return nil, err
	}
	return d, nil
}

// LoadDirUncorrected reads a directory folder as its files say, without
// the corrections of overrides.xml: for tools that audit the data (the
// generator derives overrides.xml from it).
func LoadDirUncorrected(path, name string) (*Directory, error) {
	d := &Directory{Name: name, Messages: map[string]*MessageDef{}, Segments: map[string]*SegmentDef{}, Codes: map[string][]string{}}
	segs, err := readXML(filepath.Join(path, "segments.xml"))
	if err != nil {
		return nil, fmt.Errorf("directory %s: %w", name, err)
	}
	for _, s := range segs.Children {
		if s.XMLName.Local != "segment" || s.ID == "" {
			continue
		}
		def, err := segmentDef(&s)
		if err != nil {
			return nil, fmt.Errorf("directory %s: %w", name, err)
		}
		d.Segments[def.Tag] = def
	}
	files, err := filepath.Glob(filepath.Join(path, "messages", "*.xml"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		m, err := readXML(f)
		if err != nil {
			return nil, fmt.Errorf("directory %s: %w", name, err)
		}
		def, err := messageDef(m)
		if err != nil {
			return nil, fmt.Errorf("directory %s: %s: %w", name, filepath.Base(f), err)
		}
		if def.Version == "" && def.Release == "" && isUNDirectory(name) {
			def.Version, def.Release = "D", name[1:] // a file without them (D95A RESREQ)
		}
		d.Messages[def.Type] = def
	}
	for _, f := range []string{"codes.xml", "service_codes_v3.xml", "service_codes_v4.xml"} {
		if err := d.loadCodes(filepath.Join(path, f)); err != nil {
			return nil, fmt.Errorf("directory %s: %w", name, err)
		}
	}
	if len(d.Messages) == 0 {
		return nil, fmt.Errorf("directory %s: no message in %s", name, filepath.Join(path, "messages"))
	}
	return d, nil
}

// xmlCodes is the layout of codes.xml and service_codes_v*.xml, read with
// a struct of its own: the files are large and only ids matter.
type xmlCodes struct {
	Elements []struct {
		ID    string `xml:"id,attr"`
		Codes []struct {
			ID string `xml:"id,attr"`
		} `xml:"code"`
	} `xml:"data_element"`
}

// loadCodes merges a code list file into d.Codes; a missing file is fine.
func (d *Directory) loadCodes(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var x xmlCodes
	if err := xml.Unmarshal(b, &x); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	for _, de := range x.Elements {
		if de.ID == "" {
			continue
		}
		list := d.Codes[de.ID]
		for _, c := range de.Codes {
			if c.ID != "" {
				list = append(list, c.ID)
			}
		}
		if len(list) == 0 {
			continue // an empty list checks nothing
		}
		slices.Sort(list)
		d.Codes[de.ID] = slices.Compact(list)
	}
	return nil
}

func messageDef(m *xmlNode) (*MessageDef, error) {
	def := &MessageDef{}
	for _, c := range m.Children {
		if c.XMLName.Local != "defaults" {
			continue
		}
		for _, v := range c.Children {
			switch v.ID {
			case "0065":
				def.Type = v.Value
			case "0052":
				def.Version = v.Value
			case "0054":
				def.Release = v.Value
			case "0051":
				def.Agency = v.Value
			case "0312": // interactive messages (UIH S306) name them so
				if def.Version == "" {
					def.Version = v.Value
				}
			case "0316":
				if def.Release == "" {
					def.Release = v.Value
				}
			}
		}
	}
	if def.Type == "" {
		return nil, errors.New("no message type (0065) in <defaults>")
	}
	body, err := nodes(m.Children)
	if err != nil {
		return nil, err
	}
	def.Body = body
	return def, nil
}

func nodes(xs []xmlNode) ([]Node, error) {
	var out []Node
	for i := range xs {
		x := &xs[i]
		var n Node
		switch x.XMLName.Local {
		case "segment":
			n.Tag = x.ID
		case "group":
			n.Group = x.ID
			kids, err := nodes(x.Children)
			if err != nil {
				return nil, err
			}
			if len(kids) == 0 || kids[0].Tag == "" {
				return nil, fmt.Errorf("group %s does not start with a segment", x.ID)
			}
			n.Children = kids
		default:
			continue
		}
		n.Required = x.Required == "true"
		n.MaxRepeat = 1
		if x.MaxRepeat != "" {
			r, err := strconv.Atoi(x.MaxRepeat)
			if err != nil || r < 1 {
				return nil, fmt.Errorf("%s %s: maxrepeat %q", x.XMLName.Local, x.ID, x.MaxRepeat)
			}
			n.MaxRepeat = r
		}
		out = append(out, n)
	}
	return out, nil
}

func segmentDef(s *xmlNode) (*SegmentDef, error) {
	def := &SegmentDef{Tag: s.ID}
	for i := range s.Children {
		e := &s.Children[i]
		switch e.XMLName.Local {
		case "data_element":
			c, err := componentDef(e)
			if err != nil {
				return nil, fmt.Errorf("segment %s: %w", s.ID, err)
			}
			def.Elements = append(def.Elements, ElementDef{ID: e.ID, Required: c.Required, Simple: c})
		case "composite_data_element":
			el, err := compositeDef(e)
			if err != nil {
				return nil, fmt.Errorf("segment %s: %w", s.ID, err)
			}
			def.Elements = append(def.Elements, el)
		}
	}
	return def, nil
}

func compositeDef(e *xmlNode) (ElementDef, error) {
	el := ElementDef{ID: e.ID, Required: e.Required == "true", Components: []ComponentDef{}}
	for i := range e.Children {
		if e.Children[i].XMLName.Local != "data_element" {
			continue
		}
		c, err := componentDef(&e.Children[i])
		if err != nil {
			return el, fmt.Errorf("composite %s: %w", e.ID, err)
		}
		el.Components = append(el.Components, c)
	}
	return el, nil
}

func componentDef(e *xmlNode) (ComponentDef, error) {
	c := ComponentDef{ID: e.ID, Required: e.Required == "true"}
	switch e.Type {
	case "", "an":
		c.Type = TypeAN
	case "a":
		c.Type = TypeA
	case "n":
		c.Type = TypeN
	default:
		return c, fmt.Errorf("data element %s: type %q", e.ID, e.Type)
	}
	var err error
	if e.Length != "" {
		if c.MaxLen, err = strconv.Atoi(e.Length); err != nil {
			return c, fmt.Errorf("data element %s: length %q", e.ID, e.Length)
		}
		c.MinLen = c.MaxLen
	} else if e.MaxLength != "" {
		if c.MaxLen, err = strconv.Atoi(e.MaxLength); err != nil {
			return c, fmt.Errorf("data element %s: maxlength %q", e.ID, e.MaxLength)
		}
	}
	return c, nil
}

// isDirectoryFolder tells whether path holds a directory in the XML layout.
func isDirectoryFolder(path string) bool {
	_, err := os.Stat(filepath.Join(path, "segments.xml"))
	return err == nil
}
