package parse

import (
	"fmt"
	"sort"

	"github.com/edihub/edihub/edifact"
)

// Config is the parse settings (the top-level parse: section of the
// config; hub.edifact before, still read): the guard's and the reader's
// limits, the default strictness, max_size per partner. The edifact
// package defines its fields; this room owns the section.
type Config = edifact.Config

// Deprecated lists the settings of c that still work but have a new place,
// one line each, for the log: per-partner strictness belongs to the
// partner's profile (partners.profiles[].strict, or its file in
// partners.dir), the one place for it; parse.partners.<id>.lenient still
// applies, and a profile's strict wins over it (as before).
func Deprecated(c Config) []string {
	var out []string
	for id, p := range c.Partners {
		if p.Lenient != nil {
			out = append(out, fmt.Sprintf("parse.partners.%s.lenient is deprecated: set strict: %v in partner %s's profile instead (partners.profiles or partners.dir)",
				id, !*p.Lenient, id))
		}
	}
	sort.Strings(out)
	return out
}
