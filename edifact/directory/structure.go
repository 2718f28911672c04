package directory

import (
	"fmt"

	"github.com/edihub/edihub/edifact"
)

// frame is one open level of the message structure: the body, or one
// repetition of a segment group.
type frame struct {
	nodes []Node
	pos   int    // index of the node last matched at this level
	count int    // occurrences of nodes[pos] so far (repetitions of a segment or of a group)
	name  string // group name, "" for the body
}

// structure runs the message's segments through the structure of def: a
// state machine over the branching diagram. Each segment is matched at the
// innermost open level first, then at the enclosing ones (which closes the
// inner groups); a segment that matches nowhere is reported and skipped, so
// that one stray segment yields one finding, not a cascade.
func (c *check) structure(def *MessageDef, m *edifact.Message) {
	stack := []frame{{nodes: def.Body, pos: -1}}
	pos := 0
	var last edifact.Segment // its tag and position (missing): a copy, the segment may be reused
	err := m.EachSegment(func(s *edifact.Segment) error {
		if c.r.Truncated {
			return errStop
		}
		pos++
		stack = c.match(stack, s, pos)
		c.elements(s, pos)
		last = *s
		return nil
	})
	if err != nil {
		if err != errStop { // the walk read the same bytes: cannot happen
			c.add(SeverityError, CodeUnspecified, pos+1, nil, 0, 0, err.Error())
		}
		return
	}
	// The trailer closes everything: what is still open must be complete.
	var lastp *edifact.Segment
	if pos > 0 {
		lastp = &last
	}
	for k := len(stack) - 1; k >= 0; k-- {
		c.missing(&stack[k], len(stack[k].nodes), lastp, pos)
	}
}

// match places segment s (position pos) in the structure and returns the new
// stack.
func (c *check) match(stack []frame, s *edifact.Segment, pos int) []frame {
	tooMany := -1 // code of a match refused only by its repetition count
	tooManyNode := ""
	for level := len(stack) - 1; level >= 0; level-- {
		f := &stack[level]
		start := max(f.pos, 0)
		for j := start; j < len(f.nodes); j++ {
			n := &f.nodes[j]
			cnt := 0
			if j == f.pos {
				cnt = f.count
			}
			if !sameTag(n.trigger(), s.Tag) {
				continue
			}
			if cnt >= n.MaxRepeat {
				if j == 0 && level > 0 {
					continue // a group's trigger again: a new repetition of the group, judged one level up
				}
				if tooMany < 0 {
					tooMany, tooManyNode = CodeTooManyRepetitions, s.Tag
					if n.Tag == "" {
						tooMany, tooManyNode = CodeTooManyGroupRepetitions, n.Group
					}
					tooManyNode = fmt.Sprintf("%s (at most %d)", tooManyNode, n.MaxRepeat)
				}
				continue
			}
			// Accepted at this level: the inner levels are closed, and
			// the mandatory nodes skipped over are missing.
			for k := len(stack) - 1; k > level; k-- {
				c.missing(&stack[k], len(stack[k].nodes), s, pos)
			}
			c.missing(f, j, s, pos)
			stack = stack[:level+1]
			f = &stack[level]
			f.pos, f.count = j, cnt+1
			// Enter the group (and nested groups whose trigger it is).
			for n.Tag == "" {
				stack = append(stack, frame{nodes: n.Children, pos: 0, count: 1, name: n.Group})
				n = &n.Children[0]
			}
			return stack
		}
	}
	switch {
	case tooMany >= 0:
		c.add(SeverityError, tooMany, pos, s, 0, 0, "too many repetitions of "+tooManyNode)
	case c.inMessage(stack[0].nodes, s.Tag):
		c.add(SeverityError, CodeNotSupportedPosition, pos, s, 0, 0, fmt.Sprintf("segment %s is not expected here (out of order)", quote(s.Tag)))
	default:
		c.add(SeverityError, CodeNotSupportedPosition, pos, s, 0, 0, fmt.Sprintf("segment %s is not part of this message type", quote(s.Tag)))
	}
	return stack
}

// missing reports the mandatory nodes of f from its current position up to
// (not including) index end that did not occur. s and pos name the segment
// where the absence was noticed.
func (c *check) missing(f *frame, end int, s *edifact.Segment, pos int) {
	for j := max(f.pos, 0); j < end && j < len(f.nodes); j++ {
		n := &f.nodes[j]
		if !n.Required || (j == f.pos && f.count > 0) {
			continue
		}
		name := n.Tag
		what := "mandatory segment " + n.Tag
		if n.Tag == "" {
			name = n.Group + "/" + n.trigger()
			what = fmt.Sprintf("mandatory segment group %s (starting with %s)", n.Group, n.trigger())
		}
		if f.name != "" {
			what += " of " + f.name
		}
		if fd := c.add(SeverityError, CodeMissing, pos, s, 0, 0, what+" is missing"); fd != nil {
			fd.Missing = name
		}
	}
	if end > f.pos {
		f.pos, f.count = end, 0
	}
}

// inMessage tells whether tag occurs anywhere in the structure.
func (c *check) inMessage(nodes []Node, tag string) bool {
	for i := range nodes {
		if nodes[i].Tag == tag || (nodes[i].Tag == "" && c.inMessage(nodes[i].Children, tag)) {
			return true
		}
	}
	return false
}

// sameTag compares two segment tags; tags are three letters, compared
// inline rather than through the general string comparison.
func sameTag(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 3 {
		return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]
	}
	return a == b
}
