package ubl

import "strings"

// Select returns the elements at path below e. A path is steps separated by
// '/'; a step is an element name, alternatives "a|b", optionally with one
// predicate "[rel=VALUE]" or "[rel!=VALUE]" comparing the normalized value
// of the first element at the relative path rel (upper-cased when VALUE is
// upper case, as the rules compare scheme ids: upper-case(cbc:ID)='VAT').
// This is the small XPath subset the rule tables and the BT mapping need.
func (e *Element) Select(path string) []*Element {
	if e == nil {
		return nil
	}
	cur := []*Element{e}
	for _, step := range splitPath(path) {
		name, pred := step, ""
		if i := strings.IndexByte(step, '['); i >= 0 && strings.HasSuffix(step, "]") {
			name, pred = step[:i], step[i+1:len(step)-1]
		}
		alts := strings.Split(name, "|")
		var next []*Element
		for _, c := range cur {
			for _, k := range c.Kids {
				for _, a := range alts {
					if k.Name == a && k.matches(pred) {
						next = append(next, k)
						break
					}
				}
			}
		}
		if len(next) == 0 {
			return nil
		}
		cur = next
	}
	return cur
}

// SelectOne is the first element of Select, or nil.
func (e *Element) SelectOne(path string) *Element {
	if all := e.Select(path); len(all) > 0 {
		return all[0]
	}
	return nil
}

func (e *Element) matches(pred string) bool {
	if pred == "" {
		return true
	}
	neg := false
	i := strings.Index(pred, "!=")
	if i >= 0 {
		neg = true
	} else if i = strings.IndexByte(pred, '='); i < 0 {
		return e.SelectOne(pred) != nil
	}
	rel, want := pred[:i], pred[i+1:]
	if neg {
		want = pred[i+2:]
	}
	got := e.SelectOne(rel).Value()
	if want == strings.ToUpper(want) {
		got = strings.ToUpper(got)
	}
	return (got == want) != neg
}

// splitPath splits at '/' outside predicates.
func splitPath(p string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '/':
			if depth == 0 {
				out = append(out, p[start:i])
				start = i + 1
			}
		}
	}
	return append(out, p[start:])
}
