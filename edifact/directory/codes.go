package directory

// Syntax error codes of UN/EDIFACT code list 0085 (Syntax error, coded), as a
// CONTRL message reports them in UCI, UCM, UCS and UCD. The values that
// package edifact reports for syntax and envelope errors are the same codes.
const (
	CodeSyntaxNotSupported      = 2  // syntax level or version not supported
	CodeRecipientNotActual      = 7  // interchange recipient not actual recipient
	CodeInvalidValue            = 12 // invalid value (also: a code not in its code list)
	CodeMissing                 = 13 // missing (mandatory segment, element or component)
	CodeValueNotSupported       = 14 // value not supported in this position (e.g. no directory for the message)
	CodeNotSupportedPosition    = 15 // not supported in this position (segment out of order or unknown)
	CodeTooManyConstituents     = 16 // too many data elements or components
	CodeNoAgreement             = 17 // no agreement
	CodeUnspecified             = 18 // unspecified error
	CodeInvalidDecimalNotation  = 19 // invalid decimal notation
	CodeInvalidServiceChar      = 20 // character invalid as service character
	CodeInvalidCharacter        = 21 // invalid character(s)
	CodeInvalidServiceTag       = 22 // invalid service segment tag
	CodeUnknownSender           = 23 // unknown interchange sender
	CodeTooOld                  = 24 // too old
	CodeTestIndicatorNotSupport = 25 // test indicator not supported
	CodeDuplicate               = 26 // duplicate detected
	CodeSecurityNotSupported    = 27 // security function not supported
	CodeReferenceMismatch       = 28 // references do not match
	CodeCountMismatch           = 29 // control count does not match
	CodeGroupsMessagesMixed     = 30 // functional groups and messages mixed
	CodeMoreThanOneType         = 31 // more than one message type in group
	CodeLowerLevelEmpty         = 32 // lower level empty
	CodeOutsideEnvelope         = 33 // invalid occurrence outside message, package or group
	CodeTooManyRepetitions      = 35 // too many segment (or data element) repetitions
	CodeTooManyGroupRepetitions = 36 // too many segment group repetitions
	CodeInvalidCharType         = 37 // invalid type of characters (a letter in a numeric element)
	CodeMissingDigitBeforeMark  = 38 // missing digit in front of decimal sign
	CodeTooLong                 = 39 // data element too long
	CodeTooShort                = 40 // data element too short
	CodeUnknownRecipient        = 43 // unknown interchange recipient
	CodeTrailingSeparator       = 45 // trailing separator
	CodeCharsetNotSupported     = 46 // character set not supported
)
