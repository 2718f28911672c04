package edifact

import "strings"

// addX12 follows ISA..IEA, GS..GE, ST..SE. X12 has no release character and
// ISA is fixed-width (its separators are read by the Reader); here the counts
// and control numbers are checked: SE01 counts ST..SE, GE01 the STs of the
// group, IEA01 the GSs of the interchange. Control numbers must repeat the
// header's exactly: "1" does not close "0001" (partners' translators match
// them as strings, so a numeric match would accept what they reject).
func (c *checker) addX12(s *Segment) error {
	if c.msg != nil {
		switch s.Tag {
		case "SE":
			return c.closeX12Message(s)
		case "ST", "GE", "GS", "IEA", "ISA":
			return segErr(s, 0, 0, CodeMissing, "SE missing: %s while transaction set %s (segment %d) is open",
				s.Tag, quoted(c.msg.Ref, 20), c.msg.firstNumber())
		}
		return c.appendToMessage(s)
	}
	switch s.Tag {
	case "ISA":
		if c.ic != nil {
			return segErr(s, 0, 0, CodeMissing, "IEA missing: ISA while interchange %s is open", quoted(c.ic.ControlRef, 20))
		}
		return c.openISA(s)
	}
	if c.ic == nil {
		return segErr(s, 0, 0, CodeOutsideEnvelope, "%s outside an interchange", s.Tag)
	}
	switch s.Tag {
	case "GS":
		if c.grp != nil {
			return segErr(s, 0, 0, CodeMissing, "GE missing: GS while group %s is open", quoted(c.grp.ControlRef, 20))
		}
		if err := checkX12Fields(s, gsFields[:]); err != nil {
			return err
		}
		g := &Group{ID: s.Value(1, 1), Sender: Party{ID: s.Value(2, 1)}, Recipient: Party{ID: s.Value(3, 1)},
			Date: s.Value(4, 1), Time: s.Value(5, 1), Agency: s.Value(7, 1), Version: s.Value(8, 1)}
		var err error
		if g.ControlRef, err = need(s, 6, 1, "group control number (GS06)"); err != nil {
			return err
		}
		g.Header = c.kept(s)
		c.grp = g
		c.ic.Groups = append(c.ic.Groups, g)
		return nil
	case "GE":
		g := c.grp
		if g == nil {
			return segErr(s, 0, 0, CodeNotSupportedPosition, "GE without GS")
		}
		n, err := count(s, 1, "number of transaction sets (GE01)")
		if err != nil {
			return err
		}
		if g.nmsg == 0 {
			return segErr(s, 0, 0, CodeLowerLevelEmpty, "group %s holds no transaction set", quoted(g.ControlRef, 20))
		}
		if n != g.nmsg {
			return segErr(s, 1, 1, CodeCountMismatch, "GE count %d but the group holds %d transaction sets", n, g.nmsg)
		}
		ref, err := need(s, 2, 1, "group control number (GE02)")
		if err != nil {
			return err
		}
		if ref != g.ControlRef {
			return segErr(s, 2, 1, CodeReferenceMismatch, "GE control number %s does not match GS %s", quoted(ref, 20), quoted(g.ControlRef, 20))
		}
		g.Trailer = c.kept(s)
		c.grp = nil
		return nil
	case "ST":
		if c.grp == nil {
			return segErr(s, 0, 0, CodeOutsideEnvelope, "ST outside a functional group (GS)")
		}
		m := &Message{Offset: s.Offset, Interchange: c.ic, Group: c.grp,
			Version: c.grp.Version, Agency: c.grp.Agency, Release: s.Value(3, 1)}
		var err error
		if m.Type, err = need(s, 1, 1, "transaction set identifier (ST01)"); err != nil {
			return err
		}
		if m.Ref, err = need(s, 2, 1, "transaction set control number (ST02)"); err != nil {
			return err
		}
		if len(m.Ref) < 4 { // ST02 is AN 4/9
			return segErr(s, 2, 1, CodeInvalidValue, "ST02 transaction set control number %s is shorter than 4 characters", quoted(m.Ref, 20))
		}
		m.Segments = append(c.newMessageSegments(), *s)
		c.msg = m
		return nil
	case "IEA":
		ic := c.ic
		if c.grp != nil {
			return segErr(s, 0, 0, CodeMissing, "GE missing: IEA while group %s is open", quoted(c.grp.ControlRef, 20))
		}
		n, err := count(s, 1, "number of functional groups (IEA01)")
		if err != nil {
			return err
		}
		// An interchange of TA1 acknowledgements only has no group (IEA01 0).
		if len(ic.Groups) == 0 && c.ta1s == 0 {
			return segErr(s, 0, 0, CodeLowerLevelEmpty, "interchange %s holds no functional group", quoted(ic.ControlRef, 20))
		}
		if n != len(ic.Groups) {
			return segErr(s, 1, 1, CodeCountMismatch, "IEA count %d but the interchange holds %d groups", n, len(ic.Groups))
		}
		ref, err := need(s, 2, 1, "interchange control number (IEA02)")
		if err != nil {
			return err
		}
		if ref != ic.ControlRef {
			return segErr(s, 2, 1, CodeReferenceMismatch, "IEA control number %s does not match ISA13 %s", quoted(ref, 20), quoted(ic.ControlRef, 20))
		}
		ic.Trailer = c.kept(s)
		c.doc.Interchanges = append(c.doc.Interchanges, ic)
		c.ic, c.ta1s = nil, 0
		return nil
	case "TA1": // interchange acknowledgment, allowed between ISA and the first GS
		if c.grp == nil {
			c.ta1s++
			return nil
		}
	case "SE":
		return segErr(s, 0, 0, CodeNotSupportedPosition, "SE without ST")
	}
	return segErr(s, 0, 0, CodeOutsideEnvelope, "segment %s outside a transaction set (ST..SE)", s.Tag)
}

func (c *checker) openISA(s *Segment) error {
	v := func(e int) string { return strings.TrimSpace(s.Value(e, 1)) }
	ic := &Interchange{Standard: X12, Syntax: X12, SyntaxVersion: v(12), Offset: s.Offset, Segments: 1,
		Sender: Party{Qualifier: v(5), ID: v(6)}, Recipient: Party{Qualifier: v(7), ID: v(8)},
		Date: v(9), Time: v(10), ControlRef: v(13), AckRequest: v(14), TestIndicator: v(15), cs: anyText}
	if ic.ControlRef == "" {
		return segErr(s, 13, 1, CodeMissing, "ISA13 interchange control number is missing")
	}
	if err := checkX12Fields(s, isaFields[:]); err != nil {
		return err
	}
	ic.Header = c.kept(s)
	c.ic = ic
	return nil
}

func (c *checker) closeX12Message(s *Segment) error {
	m := c.msg
	if err := c.appendToMessage(s); err != nil {
		return err
	}
	n, err := count(s, 1, "number of included segments (SE01)")
	if err != nil {
		return err
	}
	if n != m.SegmentCount() {
		return segErr(s, 1, 1, CodeCountMismatch, "SE count %d but transaction set %s has %d segments", n, quoted(m.Ref, 20), m.SegmentCount())
	}
	ref, err := need(s, 2, 1, "transaction set control number (SE02)")
	if err != nil {
		return err
	}
	if ref != m.Ref {
		return segErr(s, 2, 1, CodeReferenceMismatch, "SE control number %s does not match ST02 %s", quoted(ref, 20), quoted(m.Ref, 20))
	}
	c.closed(m)
	return c.messageDone(m)
}
