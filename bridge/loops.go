package bridge

import (
	"fmt"
	"strings"

	"github.com/edihub/edihub/wire"
)

// A bridge must never read what it wrote: a record Kafka refuses would be
// quarantined to the poison subject, read from there again, refused again,
// and so on until POISON is full. Two guards keep that from happening:
//
//   - at config time, an outbound filter may not cover a subject the bridge
//     writes to (the poison subject, an inbound subject, whatever the INGEST
//     transform makes of it), and an outbound topic may not be one an
//     inbound route reads;
//   - every message the bridge writes carries wire.HdrBridgeCopy, and an
//     outbound route acks such a message without producing it, so even two
//     bridges whose routes point at each other cannot ping-pong.

// loopErrors lists the routes of c that would read back what c writes.
func (c *Config) loopErrors() []error {
	var errs []error
	type written struct{ what, filter string }
	var ws []written
	if validSubject(c.PoisonSubject, false) {
		ws = append(ws, written{"the poison subject " + c.PoisonSubject, c.PoisonSubject})
	}
	for _, r := range c.Inbound {
		if !strings.Contains(r.Subject, "{{partner}}") {
			continue
		}
		// As published, and as the hub's INGEST transform stores it
		// (edi.ingest.<partition>.<partner>: one token inserted).
		head, tail, _ := strings.Cut(r.Subject, "{{partner}}")
		for _, f := range []string{head + "*" + tail, head + numToken + ".*" + tail} {
			if validSubject(strings.ReplaceAll(f, numToken, "0"), true) {
				ws = append(ws, written{fmt.Sprintf("inbound %s's subject %s", r.Name, r.Subject), f})
			}
		}
	}
	for _, r := range c.Inbound {
		for _, other := range c.Inbound {
			if r.DLTTopic != "" && strings.ReplaceAll(r.DLTTopic, "{{topic}}", r.Topic) == other.Topic {
				errs = append(errs, fmt.Errorf("inbound %s: dlt_topic writes %s, which inbound %s reads: a feedback loop", r.Name, other.Topic, other.Name))
			}
		}
	}
	for _, o := range c.Outbound {
		if !validSubject(o.Filter, true) {
			continue
		}
		for _, w := range ws {
			if subjectsOverlap(o.Filter, w.filter) {
				errs = append(errs, fmt.Errorf("outbound %s: filter %s covers %s, which the bridge itself writes: it would read back its own copies (a feedback loop); narrow the filter", o.Name, o.Filter, w.what))
			}
		}
		for _, in := range c.Inbound {
			if topicCovers(o, in.Topic) {
				errs = append(errs, fmt.Errorf("outbound %s: writes Kafka topic %s, which inbound %s reads: a feedback loop; use another topic", o.Name, in.Topic, in.Name))
			}
		}
	}
	return errs
}

// topicCovers reports whether outbound route o can produce to topic.
func topicCovers(o OutRoute, topic string) bool {
	if !strings.Contains(o.Topic, "{{subject}}") {
		return o.Topic == topic
	}
	// The template's fixed parts must match and the rest must be a subject
	// the filter can deliver.
	head, tail, _ := strings.Cut(o.Topic, "{{subject}}")
	if !strings.HasPrefix(topic, head) || !strings.HasSuffix(topic, tail) || len(topic) < len(head)+len(tail) {
		return false
	}
	subj := topic[len(head) : len(topic)-len(tail)]
	return validSubject(subj, false) && subjectsOverlap(o.Filter, subj)
}

// numToken in a filter stands for any token of digits (the partition
// INGEST's transform inserts).
const numToken = "#num"

// subjectsOverlap reports whether some subject matches both filters.
func subjectsOverlap(a, b string) bool {
	at, bt := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; ; i++ {
		switch {
		case i == len(at) && i == len(bt):
			return true
		case i < len(at) && at[i] == ">":
			return len(bt) > i
		case i < len(bt) && bt[i] == ">":
			return len(at) > i
		case i == len(at) || i == len(bt):
			return false
		case at[i] == "*" || bt[i] == "*" || at[i] == bt[i]:
			continue
		case at[i] == numToken && digits(bt[i]), bt[i] == numToken && digits(at[i]):
			continue
		default:
			return false
		}
	}
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// bridgeMade reports whether a message is one the bridge wrote.
func bridgeMade(h map[string][]string) bool {
	return len(h[wire.HdrBridgeCopy]) > 0
}
