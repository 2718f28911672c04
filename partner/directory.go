package partner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/edifact/directory"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// validators are the directory validators by strictness (nil: off), built
// once from the shipped tables plus partners.directories.
type validators map[directory.Strictness]*directory.Validator

func newValidators(set *directory.Set, folder string) (validators, error) {
	var err error
	if set == nil {
		if set, err = directory.Builtin(); err != nil {
			return nil, fmt.Errorf("directories: %w", err)
		}
	}
	if folder != "" {
		if set, err = set.LoadFolder(folder); err != nil {
			return nil, fmt.Errorf("partners.directories %s: %w", folder, err)
		}
	}
	vs := validators{}
	for _, s := range []directory.Strictness{directory.Strict, directory.Lenient} {
		v, err := directory.NewValidator(set, &directory.Options{Strictness: s})
		if err != nil {
			return nil, err
		}
		vs[s] = v
	}
	return vs, nil
}

// strictness is the directory validation that applies to a partner: its
// profile's directory setting, else partners.directory, else lenient with
// a profile and off without.
func (r *Registry) strictness(p *Profile) directory.Strictness {
	switch {
	case p != nil && p.Directory != "":
		return directory.Strictness(p.Directory)
	case r.dirDefault != "":
		return r.dirDefault
	case p != nil:
		return directory.DefaultStrictness
	}
	return directory.Off
}

// validate checks one message against its UN/EDIFACT directory; a
// refusal is cause schema, names the segment position in the message, the
// element and component and the 0085 code (its CONTRL says the same).
func (r *Registry) validate(p *Profile, em *edifact.Message) error {
	v := r.validators[r.strictness(p)]
	if v == nil || em.Interchange == nil || em.Interchange.Standard == "X12" {
		return nil
	}
	err := v.Validate(em).Err()
	if err == nil {
		return nil
	}
	var de *directory.Error
	if !errors.As(err, &de) || len(de.Findings) == 0 {
		return &Rejection{DLQCause: wire.CauseSchema, Reason: wire.ReasonDirectory, Code: codeUnspecified,
			Interchange: em.Interchange, Message: em, Msg: escape.Header(err.Error()), err: err}
	}
	f := de.First()
	// A finding counts elements after the tag; S011 0098 counts the tag
	// as position 1 (ISO 9735, as the Service directories define it).
	if f.Element > 0 {
		f.Element++
	}
	return &Rejection{DLQCause: wire.CauseSchema, Reason: wire.ReasonDirectory, Code: f.Code, Interchange: em.Interchange,
		Message: em, Tag: f.Tag, MsgSegment: f.Segment, Element: f.Element, Component: f.Component, Repetition: f.Repetition,
		Msg: escape.Header(strings.TrimPrefix(de.Error(), wire.CauseSchema+": ")), err: err}
}

// validateEnvelope checks an EDIFACT interchange's service segments (UNB,
// UNG, UNE, UNZ) against the Service directory of its syntax version, with
// the validator that applies to the partner; a refusal names the service
// segment, the element (tag = 1) and component and the 0085 code, and the
// group for UNG and UNE.
func (r *Registry) validateEnvelope(p *Profile, ich *edifact.Interchange) error {
	v := r.validators[r.strictness(p)]
	if v == nil || ich == nil || ich.Standard == "X12" {
		return nil
	}
	err := v.ValidateInterchange(ich).Err()
	if err == nil {
		return nil
	}
	var de *directory.Error
	if !errors.As(err, &de) || len(de.Findings) == 0 {
		return &Rejection{DLQCause: wire.CauseSchema, Reason: wire.ReasonDirectory, Code: codeUnspecified,
			Interchange: ich, Tag: "UNB", Msg: escape.Header(err.Error()), err: err}
	}
	f := de.First()
	rej := &Rejection{DLQCause: wire.CauseSchema, Reason: wire.ReasonDirectory, Code: f.Code, Interchange: ich,
		Tag: f.Tag, Element: f.Element + 1, Component: f.Component,
		Msg: escape.Header(fmt.Sprintf("interchange %s: %s", ich.ControlRef, f.String())), err: err}
	if f.Tag == "UNG" || f.Tag == "UNE" {
		for _, g := range ich.Groups {
			if g.Header != nil && g.Header.Number == f.Number || g.Trailer != nil && g.Trailer.Number == f.Number {
				rej.Group = g
			}
		}
	}
	return rej
}

// ReadsSegments is false: the directory validation and the built-in rules
// read a message's segments through edifact.Message.EachSegment, which
// reads those of a large message again from the input when the parse
// stage did not keep them, and the CEL rules read the JSON view. So the
// stage renders every large message's view while reading it and keeps
// none of its segments (parse.SegmentReader).
func (r *Registry) ReadsSegments(string) bool { return false }
