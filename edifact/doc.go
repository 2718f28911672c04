// Package edifact checks and reads UN/EDIFACT interchanges (and recognises
// the X12 envelope) so that a partner's input can never crash, hang or
// exhaust the hub. It uses the standard library only.
//
// # Layers
//
// Guard is the cheap first look, one pass over the bytes: the size limit
// (Options.MaxSize, 10 MiB by default), a UTF-8 BOM and trailing NUL/Ctrl-Z
// stripped, an interchange header (UNA, UNB or ISA) required at the start,
// the syntax identifier (UNOA..UNOL, UNOW, UNOX, UNOY, and IATA/IATB) read
// and every byte checked against its repertoire. Control characters other
// than the declared separators, CR and LF are always refused; bytes outside
// the repertoire (lowercase or UTF-8 under UNOA) are refused, or reported as
// Warnings when Options.Lenient is set. An identifier outside that list
// (KECA, ANSI...) is refused with code 2, or in lenient mode accepted with a
// warning and only control characters checked. X12 has no syntax identifier:
// only control characters are checked there.
//
// Reader reads one segment at a time, modelled on encoding/csv. Separators
// come from UNA, or else from the byte after "UNB" ('+' selects the level A
// defaults ":+.? '", 0x1D the level B information separators 0x1F, 0x1D,
// 0x1C), or from the fixed-width ISA for X12. The repetition separator exists
// only from syntax version 4 on (a space in UNA means none). A stream may hold
// several interchanges, each with its own separators. The Reader runs in time
// linear in its input; its memory is bounded by Options.MaxSegmentLen (1 MiB)
// whatever the input, and it never runs a regular expression. CR and LF are
// allowed between segments only. With ReuseSegment the returned segment's
// slices alias the Reader's buffers until the next Read, like
// csv.Reader.ReuseRecord; the strings themselves are never overwritten.
// ReadRaw runs the same checks but returns a RawSegment, a view of the
// Reader's buffers: nothing is allocated per segment and a string is made
// only for the values the caller asks for. Plain segments (no release
// character, no repetition, whole in the read buffer) are scanned in one
// pass there (fast.go); the others are cut at their terminator first and
// then tokenized; both ways give the same segments and the same errors.
//
// Parse runs Guard, the Reader and the envelope checks: UNB/UNZ, UNG/UNE and
// UNH/UNT counts and references, missing and extra trailers, a message cut
// off at the end, envelope segments inside a message, groups and messages
// mixed; for X12 ISA/IEA, GS/GE and ST/SE counts and control numbers.
// Parse holds the whole document (about ten times the input size in memory,
// so at most ~100 MB at the default MaxSize); Walk runs the same checks but
// hands each message to a callback and drops it, so that memory is bounded
// by the largest message. WalkViews hands each message over with its JSON
// view and keeps none of the segments of a large one (over 2 048): it is
// rendered while read, and Message.EachSegment reads its segments again
// from the input, so that memory is the input and the views.
// GuardReaderAt, WalkReaderAt and Check do the same
// over an io.ReaderAt (a file) without holding the input: Guard's pass reads
// 1 MiB chunks, then the Reader streams the body. Check keeps only counts, so
// its memory is the largest message plus the references of the open
// interchange (for the duplicate check), whatever the file's size.
//
// # Errors
//
// Every error of Guard and Parse has Cause() == "schema" and prints one line
// of printable ASCII with its position (offending bytes appear as 0xNN):
//
//	schema: segment 20 UNT at line 20 col 1 (offset 545) element 1 component 1: UNT count 21 but message "1" has 18 segments (code 29)
//
// *GuardError carries Offset and Code; *ParseError carries Offset, Line,
// Column, Segment (number in the stream), Tag, Element and Component
// positions, Code and the underlying Err (Unwrap). Codes are the syntax
// error codes of UN/EDIFACT code list 0085, as a CONTRL message would report
// them: 2 syntax level or version not supported, 12 invalid value, 13
// missing, 15 not supported in this position, 16 too many constituents, 18
// unspecified (size limit), 20 character invalid as service character, 21
// invalid character, 26 duplicate, 28 references do not match, 29 control
// count does not match, 30 groups and messages mixed, 32 lower level empty,
// 33 invalid occurrence outside message or group, 35 too many repetitions,
// 39 data element too long. X12 errors use the same codes.
//
// What is tolerated on purpose: a release character before an ordinary
// character ("?@" reads "@"); segment tags that no directory knows (this
// package checks syntax and envelopes, not message structure or code lists);
// a UNOB interchange that uses the level A separators without UNA; ISA11
// holding "U" in a version 00402+ header.
//
// # JSON view (jsonVersion 1)
//
// Document.MarshalJSON renders a whole input; Message.MarshalJSON (also
// MessageJSON) renders one message with its envelope, the unit the hub
// publishes once per UNH. Text is converted to UTF-8 from the interchange's
// character set (ISO 8859 parts for UNOC..UNOL; for 7-bit levels accepted in
// lenient mode, 8-bit bytes are taken as UTF-8 when valid, else Latin-1).
// All listed fields are always present (empty string when absent), except
// "repeats". Fields may be added in later versions; none will change meaning
// without a new jsonVersion.
//
// Message view:
//
//	field                   type      EDIFACT source            X12 source
//	jsonVersion             number    1                         1
//	standard                string    "EDIFACT"                 "X12"
//	interchange.syntax      string    UNB S001/0001 (UNOA...)   "X12"
//	interchange.syntaxVersion string  UNB S001/0002 (1..4)      ISA12
//	interchange.sender      object    UNB S002 {id 0004, qualifier 0007, routing 0008}  {ISA06, ISA05, ""}
//	interchange.recipient   object    UNB S003 {id 0010, qualifier 0007, routing 0014}  {ISA08, ISA07, ""}
//	interchange.date        string    UNB S004/0017 as sent     ISA09
//	interchange.time        string    UNB S004/0019             ISA10
//	interchange.controlRef  string    UNB 0020                  ISA13
//	interchange.applicationRef string UNB 0026                  ""
//	interchange.ackRequest  string    UNB 0031                  ISA14
//	interchange.testIndicator string  UNB 0035                  ISA15
//	interchange.separators  object    {component, element, decimal, release, repetition, segment}, one character each, "" for none
//	interchange.offset      number    byte offset of UNB        of ISA
//	group                   object    null outside UNG..UNE, else {id 0038, sender, recipient, date, time, controlRef 0048, agency 0051, version 0052, release 0054}  GS01..GS08
//	message.ref             string    UNH 0062                  ST02
//	message.type            string    UNH S009/0065 (INVOIC)    ST01 (850)
//	message.version         string    UNH S009/0052 (D)         GS08 (005010)
//	message.release         string    UNH S009/0054 (96A)       ST03
//	message.agency          string    UNH S009/0051 (UN)        GS07 (X)
//	message.association     string    UNH S009/0057 (EAN008)    ""
//	message.groupRef        string    UNG 0048 or ""            GS06
//	message.segmentCount    number    UNH..UNT inclusive        ST..SE inclusive
//	message.offset          number    byte offset of UNH        of ST
//	segments[]              array     every segment from UNH to UNT inclusive
//	segments[].tag          string    segment tag
//	segments[].elements     array     one entry per data element after the tag; each an array of its components (strings, release characters removed)
//	segments[].repeats      object    only when the repetition separator was used: element position (1-based, as a string) -> further occurrences, each an array of components
//
// Example: "ATT+2++M*F" gives {"tag":"ATT","elements":[["2"],[""],["M"]],"repeats":{"3":[["F"]]}}.
//
// Document view: {jsonVersion, standard, segmentCount (all segments, UNA not
// counted), interchanges[], warnings[]}; each interchange holds the fields of
// interchange above plus groups[] (group objects) and messages[] (the message
// fields above plus segments). Warnings are {offset, code, msg}.
//
// Imports: the standard library and package escape (error messages quote
// hostile input in escape's style: \xNN, \n, \\, inside double quotes).
package edifact
