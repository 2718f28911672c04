package edifact

import "fmt"

// Default limits. They are far above anything a directory defines (the longest
// EDIFACT data element is an..512, the longest corpus segment 7.9 KB) and far
// below what would hurt the hub: a reader holds at most about two segments.
const (
	DefaultMaxSize       = 10 << 20 // whole interchange file, bytes
	DefaultMaxSegmentLen = 1 << 20  // one segment including separators, bytes
	DefaultMaxElementLen = 64 << 10 // one data element including its components, bytes
)

// Options tunes Guard, Parse and the Reader. A nil *Options means defaults;
// zero fields are replaced by their defaults (see setDefaults), like watermill's
// configs, so callers only set what they want to change.
type Options struct {
	// MaxSize is the largest input Guard accepts, in bytes. Default 10 MiB.
	MaxSize int64
	// MaxSegmentLen caps one segment (tag to terminator) in bytes; the reader
	// stops reading at the cap instead of buffering the rest. Default 1 MiB.
	MaxSegmentLen int
	// MaxElementLen caps one data element (all its components and repetitions)
	// in bytes. Default 64 KiB.
	MaxElementLen int
	// Lenient turns characters outside the declared repertoire (lowercase or
	// UTF-8 under UNOA, an unknown syntax identifier such as IATA/ANSI) into
	// Warnings instead of errors. Control characters and structure errors are
	// refused in both modes.
	Lenient bool
}

// setDefaults returns a copy of o with zero fields filled in; o may be nil.
func (o *Options) setDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.MaxSize == 0 {
		c.MaxSize = DefaultMaxSize
	}
	if c.MaxSegmentLen == 0 {
		c.MaxSegmentLen = DefaultMaxSegmentLen
	}
	if c.MaxElementLen == 0 {
		c.MaxElementLen = DefaultMaxElementLen
	}
	return c
}

// Validate reports options that cannot work (negative limits, or an element
// cap above the segment cap, which would make the element cap meaningless).
func (o *Options) Validate() error {
	c := o.setDefaults()
	switch {
	case c.MaxSize < 0:
		return fmt.Errorf("edifact: MaxSize %d is negative", c.MaxSize)
	case c.MaxSegmentLen < 0:
		return fmt.Errorf("edifact: MaxSegmentLen %d is negative", c.MaxSegmentLen)
	case c.MaxElementLen < 0:
		return fmt.Errorf("edifact: MaxElementLen %d is negative", c.MaxElementLen)
	case c.MaxElementLen > c.MaxSegmentLen:
		return fmt.Errorf("edifact: MaxElementLen %d exceeds MaxSegmentLen %d", c.MaxElementLen, c.MaxSegmentLen)
	}
	return nil
}
