package directory

// Directory is one UN/EDIFACT directory (D96A...) or one set of service
// messages (Service_V3, Service_V4): message structures, segment layouts and
// code lists. It is read-only once loaded; a *Set shares it between
// goroutines.
type Directory struct {
	Name     string                 // "D96A", "Service_V4"
	Messages map[string]*MessageDef // by message type (INVOIC)
	Segments map[string]*SegmentDef // by tag
	Codes    map[string][]string    // by data element id, sorted code values
}

// MessageDef is the structure of one message type: UNH..UNT with its
// segments and segment groups, as the directory's branching diagram has it.
type MessageDef struct {
	Type    string // 0065 (INVOIC)
	Version string // 0052 (D, or 4 for syntax 4 service messages)
	Release string // 0054 (96A)
	Agency  string // 0051 (UN)
	Body    []Node // UNH first, UNT last
}

// Node is a segment or a segment group in a message structure. A group has
// Group set ("SG25") and Children; its first child is its trigger segment.
type Node struct {
	Tag       string // segment tag; "" for a group
	Group     string // group name (SG1); "" for a segment
	Required  bool   // M in the directory
	MaxRepeat int    // maximum occurrences (of the group as a whole for a group)
	Children  []Node // a group's segments and nested groups
}

// trigger is the tag of the first segment of a group (or the segment's tag).
func (n *Node) trigger() string {
	for n.Tag == "" {
		if len(n.Children) == 0 {
			return ""
		}
		n = &n.Children[0]
	}
	return n.Tag
}

// SegmentDef is a segment's layout: its data elements in order.
type SegmentDef struct {
	Tag      string
	Elements []ElementDef
}

// Data element value types of the directories.
const (
	TypeAN = 0 // alphanumeric (an)
	TypeA  = 1 // alphabetic (a)
	TypeN  = 2 // numeric (n)
)

// ElementDef is a data element position of a segment: a simple data element
// (Components nil) or a composite with its components.
type ElementDef struct {
	ID         string // 4-digit data element id (3035) or composite id (C082)
	Required   bool
	Components []ComponentDef // nil for a simple data element
	Simple     ComponentDef   // the simple element's value rules (Components == nil)
}

// ComponentDef is the value rule of a simple data element or of one
// component of a composite.
type ComponentDef struct {
	ID       string // 4-digit data element id
	Required bool
	Type     uint8 // TypeAN, TypeA or TypeN
	MinLen   int   // equal to MaxLen for fixed-length elements (an3), else 0
	MaxLen   int   // 0 when the directory gives none
}
