package wire

// Default stream names; the config may rename every one (hub.streams).
const (
	DefaultIngestStream  = "INGEST"
	DefaultParsedStream  = "PARSED"
	DefaultRetryStream   = "RETRY"
	DefaultDLQStream     = "DLQ"
	DefaultParkingStream = "PARKING"
	DefaultPoisonStream  = "POISON"
	DefaultAuditStream   = "AUDIT"
)

// StreamNames are the JetStream stream names. Tools must read them from
// the config rather than assume the defaults.
type StreamNames struct {
	Ingest  string `yaml:"ingest"`
	Parsed  string `yaml:"parsed"`
	Retry   string `yaml:"retry"`
	DLQ     string `yaml:"dlq"`
	Parking string `yaml:"parking"`
	Poison  string `yaml:"poison"`
	Audit   string `yaml:"audit"`
}

// SetDefaults fills every empty name with its default.
func (s *StreamNames) SetDefaults() {
	set := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	set(&s.Ingest, DefaultIngestStream)
	set(&s.Parsed, DefaultParsedStream)
	set(&s.Retry, DefaultRetryStream)
	set(&s.DLQ, DefaultDLQStream)
	set(&s.Parking, DefaultParkingStream)
	set(&s.Poison, DefaultPoisonStream)
	set(&s.Audit, DefaultAuditStream)
}

// Kinds of the streams operators work on.
const (
	KindDLQ     = "dlq"
	KindParking = "parking"
	KindPoison  = "poison"
)

// KindOf names the role of a stream ("" for the others).
func (s StreamNames) KindOf(stream string) string {
	switch stream {
	case s.DLQ:
		return KindDLQ
	case s.Parking:
		return KindParking
	case s.Poison:
		return KindPoison
	}
	return ""
}

// StreamOf is the stream of a kind ("" for an unknown kind).
func (s StreamNames) StreamOf(kind string) string {
	switch kind {
	case KindDLQ:
		return s.DLQ
	case KindParking:
		return s.Parking
	case KindPoison:
		return s.Poison
	}
	return ""
}
