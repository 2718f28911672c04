package directory

import (
	"errors"
	"fmt"

	"github.com/edihub/edihub/edifact"
)

// Strictness says which deviations reject a message.
type Strictness string

// Strictness levels. The zero value means DefaultStrictness.
const (
	// Strict: every finding is an error, code values included.
	Strict Strictness = "strict"
	// Lenient: structure, mandatory items, repetitions, type and length are
	// errors; a value outside its code list and a trailing empty element
	// are warnings; a message whose directory is unknown is a warning.
	Lenient Strictness = "lenient"
	// Off: no directory validation.
	Off Strictness = "off"
)

// DefaultStrictness is used when Options.Strictness is empty: lenient,
// because real interchanges carry agency and partner codes outside the UN
// code lists (EANCOM subsets, "ZZZ" mutually defined codes) far more often
// than structural faults (README, "Directory validation", has the corpus
// numbers behind this choice).
const DefaultStrictness = Lenient

// ParseStrictness reads a strictness name (strict, lenient, off; "" is the
// default).
func ParseStrictness(s string) (Strictness, error) {
	switch Strictness(s) {
	case "":
		return DefaultStrictness, nil
	case Strict, Lenient, Off:
		return Strictness(s), nil
	}
	return "", fmt.Errorf("strictness \"%s\": want strict, lenient or off", s)
}

// Options tunes a Validator. A nil *Options means defaults; zero fields take
// their defaults.
type Options struct {
	// Strictness: strict, lenient or off. Default DefaultStrictness.
	Strictness Strictness
	// RejectUnknown makes a message whose type/version/release no directory
	// of the Set defines an error (code 14 on UNH S009) in every strictness
	// but off. By default it is an error in strict mode and a warning in
	// lenient mode.
	RejectUnknown bool
	// MaxFindings caps the findings kept per message (errors and warnings).
	// Default 100.
	MaxFindings int
}

func (o *Options) setDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Strictness == "" {
		c.Strictness = DefaultStrictness
	}
	if c.MaxFindings <= 0 {
		c.MaxFindings = 100
	}
	return c
}

// Validate checks the options.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	_, err := ParseStrictness(string(o.Strictness))
	return err
}

// Validator checks messages against the directories of a Set. It holds no
// per-message state and is safe for concurrent use.
type Validator struct {
	set  *Set
	opts Options
	// envCodes are the service code lists by syntax version ("3", "4")
	// for the envelope (ValidateInterchange).
	envCodes map[string]map[string][]string
}

// NewValidator returns a Validator over set (Builtin() for the shipped
// directories) with opts (nil for defaults).
func NewValidator(set *Set, opts *Options) (*Validator, error) {
	if set == nil {
		return nil, fmt.Errorf("directory validator: no directory set")
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("directory validator: %w", err)
	}
	return &Validator{set: set, opts: opts.setDefaults(),
		envCodes: map[string]map[string][]string{"3": set.envelopeCodes("3"), "4": set.envelopeCodes("4")}}, nil
}

// Strictness returns the strictness in force.
func (v *Validator) Strictness() Strictness { return v.opts.Strictness }

// Result is the outcome of validating one message.
type Result struct {
	Ref       string    `json:"ref"`       // UNH 0062
	Type      string    `json:"type"`      // S009 0065
	Version   string    `json:"version"`   // S009 0052
	Release   string    `json:"release"`   // S009 0054
	Directory string    `json:"directory"` // directory used (D96A, Service_V4), "" when not validated
	Validated bool      `json:"validated"` // false: off, X12, or no directory for the message
	Findings  []Finding `json:"findings"`  // errors and warnings in message order
	Truncated bool      `json:"truncated,omitempty"`
	Offset    int64     `json:"offset"` // byte offset of UNH
}

// Errors counts the findings of severity error.
func (r *Result) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			n++
		}
	}
	return n
}

// Err returns an *Error holding the findings of severity error, or nil when
// the message passes (it may still carry warnings).
func (r *Result) Err() error {
	var errs []Finding
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			errs = append(errs, f)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &Error{Ref: r.Ref, Type: r.Type, Version: r.Version, Release: r.Release, Directory: r.Directory, Offset: r.Offset, Findings: errs}
}

// Validate checks one message (as edifact.Parse or edifact.Walk hands it
// over: UNH..UNT with its interchange) against its directory. It never
// panics and runs in time linear in the message. X12 messages and, with
// strictness off, every message come back with Validated false.
func (v *Validator) Validate(m *edifact.Message) *Result {
	r := &Result{Ref: m.Ref, Type: m.Type, Version: m.Version, Release: m.Release, Offset: m.Offset, Findings: []Finding{}}
	unh, ok := firstSegment(m)
	if v.opts.Strictness == Off || !ok || unh.Tag != "UNH" {
		return r
	}
	syntax := ""
	if m.Interchange != nil {
		syntax = m.Interchange.SyntaxVersion
	}
	c := &check{v: v, r: r, service: v.set.serviceDir(syntax)}
	dir, def, ok := v.set.Lookup(m.Type, m.Version, m.Release)
	if !ok {
		sev := SeverityWarning
		if v.opts.Strictness == Strict || v.opts.RejectUnknown {
			sev = SeverityError
		}
		c.add(sev, CodeValueNotSupported, 1, &unh, 2, 0,
			fmt.Sprintf("no directory for message %s %s %s: not validated", quote(m.Type), quote(m.Version), quote(m.Release)))
		return r
	}
	r.Directory, r.Validated = dir.Name, true
	c.dir = dir
	c.structure(def, m)
	return r
}

// errStop ends an EachSegment early.
var errStop = errors.New("stop")

// firstSegment is m's first segment, m's segments kept or not
// (edifact.Message.EachSegment); only its tag and position are read.
func firstSegment(m *edifact.Message) (edifact.Segment, bool) {
	if len(m.Segments) > 0 {
		return m.Segments[0], true
	}
	var first edifact.Segment
	found := false
	_ = m.EachSegment(func(s *edifact.Segment) error { first, found = *s, true; return errStop })
	return first, found
}

// check is the state of one Validate call.
type check struct {
	v       *Validator
	r       *Result
	dir     *Directory
	service *Directory
	// envelope, when set, are the service code lists of the syntax
	// version of the envelope being checked, other those of the other
	// version (ValidateInterchange).
	envelope, other map[string][]string
}

// add records a finding unless the cap is reached.
func (c *check) add(sev Severity, code, pos int, s *edifact.Segment, elem, comp int, msg string) *Finding {
	if len(c.r.Findings) >= c.v.opts.MaxFindings {
		c.r.Truncated = true
		return nil
	}
	f := Finding{Severity: sev, Code: code, Segment: pos, Element: elem, Component: comp, Msg: msg}
	if s != nil {
		f.Tag, f.Number, f.Offset, f.Line = s.Tag, s.Number, s.Offset, s.Line
	}
	c.r.Findings = append(c.r.Findings, f)
	return &c.r.Findings[len(c.r.Findings)-1]
}

// soft is the severity of findings that lenient mode only reports.
func (c *check) soft() Severity {
	if c.v.opts.Strictness == Strict {
		return SeverityError
	}
	return SeverityWarning
}

// segmentDef finds a segment's layout: the message's directory, then the
// service segments of the interchange's syntax version.
func (c *check) segmentDef(tag string) *SegmentDef {
	if d := c.dir.Segments[tag]; d != nil {
		return d
	}
	if c.service != nil {
		return c.service.Segments[tag]
	}
	return nil
}

// codes returns the code list of a data element, from the message's
// directory or the service directory.
func (c *check) codes(id string) []string {
	if l, ok := c.dir.Codes[id]; ok {
		return l
	}
	if c.service != nil && id != "" && id[0] == '0' { // service data elements are 0001..0999
		return c.service.Codes[id]
	}
	return nil
}
