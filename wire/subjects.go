package wire

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// Subjects. Partners publish to edi.ingest.<partner>; INGEST stores them as
// edi.ingest.<partition>.<partner> through a deterministic transform, so one
// partner always lands in one partition.
const (
	IngestWildcard = "edi.ingest.*"
	ParsedAll      = "edi.parsed.>"
	PoisonAll      = "edi.poison.>"
	AuditAll       = "edi.audit.>"
	AuditSubject   = "edi.audit.events"
	// EventSubjectPrefix is where the hub announces what happens to failing
	// messages, on core NATS (not stored).
	EventSubjectPrefix = "edi.events."
	// AlertSubjectPrefix is the default prefix of the NATS alert sink:
	// <prefix>.<alert name>.
	AlertSubjectPrefix = "edi.alerts"
	// ForensicSubjectPrefix is the default prefix of forensic summaries:
	// <prefix>.<partner>.
	ForensicSubjectPrefix = "edi.forensic"
	// ReadyzSubject is where serve's /readyz writes its probe (stream
	// ReadyzStream, one message): inside edi.> so the hub's NATS user may.
	ReadyzSubject = "edi.readyz"
	ReadyzStream  = "EDIHUB_READYZ"
	ingestPrefix  = "edi.ingest."
	poisonPrefix  = "edi.poison."
)

// IngestSubject is where a partner's interchanges are published.
func IngestSubject(partner string) string { return ingestPrefix + partner }

// IngestTransform is INGEST's subject transform destination for n partitions
// (the server's FNV-1a partition of the partner token).
func IngestTransform(partitions int) string {
	return fmt.Sprintf("edi.ingest.{{partition(%d,1)}}.{{wildcard(1)}}", partitions)
}

// IngestStoredSubject is the subject INGEST stores partner's messages
// under in partition p (what a consumer of that partner alone filters on).
func IngestStoredSubject(p int, partner string) string {
	return ingestPrefix + strconv.Itoa(p) + "." + partner
}

// IngestPartitionFilter selects one partition of INGEST.
func IngestPartitionFilter(p int) string { return ingestPrefix + strconv.Itoa(p) + ".*" }

// ParseIngestSubject reads the partition and partner from a stored ingest
// subject edi.ingest.<partition>.<partner> (on the hot path: no allocation).
func ParseIngestSubject(subject string) (partition int, partner string, ok bool) {
	if !strings.HasPrefix(subject, ingestPrefix) {
		return 0, "", false
	}
	rest := subject[len(ingestPrefix):]
	dot := strings.IndexByte(rest, '.')
	if dot <= 0 || strings.IndexByte(rest[dot+1:], '.') >= 0 || dot+1 == len(rest) {
		return 0, "", false
	}
	p, err := strconv.Atoi(rest[:dot])
	if err != nil {
		return 0, "", false
	}
	return p, rest[dot+1:], true
}

// PartnerOfTopic reads the partner from a publish subject edi.ingest.<partner>.
func PartnerOfTopic(topic string) (string, bool) {
	p, ok := strings.CutPrefix(topic, ingestPrefix)
	if !ok || p == "" || strings.ContainsAny(p, ".*>") {
		return "", false
	}
	return p, true
}

// PartitionOf is the partition INGEST stores a partner's interchanges in:
// the same FNV-1a hash the server's {{partition(n,1)}} transform uses, so
// tools can tell which partition a partner shares without asking.
func PartitionOf(partner string, partitions int) int {
	h := fnv.New32a()
	h.Write([]byte(partner))
	return int(h.Sum32() % uint32(partitions))
}

// ParsedSubject is where parsed messages of one type go.
func ParsedSubject(partner, msgType string) string { return "edi.parsed." + partner + "." + msgType }

// DLQSubject is the dead-letter subject of a stage and cause.
func DLQSubject(stage, cause string) string { return "edi." + stage + ".dlq." + cause }

// DLQFilter selects every dead letter of a stage.
func DLQFilter(stage string) string { return "edi." + stage + ".dlq.>" }

// ParseDLQSubject splits edi.<stage>.dlq.<cause>.
func ParseDLQSubject(subject string) (stage, cause string, ok bool) {
	tok := strings.Split(subject, ".")
	if len(tok) != 4 || tok[0] != "edi" || tok[2] != "dlq" {
		return "", "", false
	}
	return tok[1], tok[3], true
}

// ParkingSubject is the parking lot of a stage.
func ParkingSubject(stage string) string { return "edi." + stage + ".parking-lot" }

// ParseParkingSubject reads the stage of edi.<stage>.parking-lot.
func ParseParkingSubject(subject string) (stage string, ok bool) {
	tok := strings.Split(subject, ".")
	if len(tok) != 3 || tok[0] != "edi" || tok[2] != "parking-lot" {
		return "", false
	}
	return tok[1], true
}

// PoisonSubject is the quarantine subject of a stage.
func PoisonSubject(stage string) string { return poisonPrefix + stage }

// ParsePoisonSubject reads the stage of edi.poison.<stage>.
func ParsePoisonSubject(subject string) (stage string, ok bool) {
	s, ok := strings.CutPrefix(subject, poisonPrefix)
	if !ok || s == "" || strings.Contains(s, ".") {
		return "", false
	}
	return s, true
}

// RetryFilter selects every retry subject of a stage.
func RetryFilter(stage string) string { return "edi." + stage + ".retry.>" }

// TierName is the subject token of a tier delay: 5s, 30s, 5m, 2h.
func TierName(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	default:
		return fmt.Sprintf("%ds", (d+time.Second-1)/time.Second)
	}
}

// Retry subjects: a schedule waits on edi.<stage>.retry.<tier>.sched.<id>
// and fires a copy to edi.<stage>.retry.<tier>.due, where the stage's retry
// worker picks it up.
func RetryScheduleSubject(stage string, tier time.Duration, id string) string {
	return fmt.Sprintf("edi.%s.retry.%s.sched.%s", stage, TierName(tier), id)
}

// RetryDueSubject is where a tier's schedules fire.
func RetryDueSubject(stage string, tier time.Duration) string {
	return fmt.Sprintf("edi.%s.retry.%s.due", stage, TierName(tier))
}

// RetryDueFilter selects every due retry of a stage.
func RetryDueFilter(stage string) string { return "edi." + stage + ".retry.*.due" }

// EventSubject is where failure events of one kind are announced.
func EventSubject(kind string) string { return EventSubjectPrefix + kind }

// SubjectToken keeps a value chosen by a partner (a message type) usable
// as one subject token: anything but letters, digits, - and _ becomes _.
func SubjectToken(s string) string {
	if s == "" {
		return "UNKNOWN"
	}
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// MaxPartnerIDLen bounds a partner id: it is a subject token, a header
// value and a label in listings.
const MaxPartnerIDLen = 64

// ValidPartnerID refuses partner ids that are not one printable ASCII
// subject token of at most MaxPartnerIDLen characters, or that start with
// '$' (NATS's own names: $JS, $SYS, $KV). It is the one rule for a
// partner id: the config, the NATS users (role partner) and the subjects
// all ask it.
func ValidPartnerID(p string) error {
	if p == "" || len(p) > MaxPartnerIDLen {
		return fmt.Errorf("partner id must be 1 to %d characters, got %d", MaxPartnerIDLen, len(p))
	}
	if p[0] == '$' {
		return fmt.Errorf("partner id %q: a leading '$' is NATS's (as in $JS, $SYS)", p)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= ' ' || c > '~' || c == '.' || c == '*' || c == '>' {
			return fmt.Errorf("partner id: byte %d (0x%02X) is not allowed; use printable ASCII without spaces, '.', '*' or '>'", i, c)
		}
	}
	return nil
}
