package bridge

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/edihub/edihub/wire"
)

// Config is the `bridge:` section of the hub's YAML config. The zero value
// with at least one route and Brokers set is usable: New fills in defaults.
type Config struct {
	// Brokers are the Kafka seed brokers, host:port.
	Brokers []string `yaml:"brokers"`
	// ClientID names the bridge's Kafka clients (default "edihub-bridge").
	ClientID string `yaml:"client_id"`
	// BatchSize bounds how many records or messages one route moves per
	// round trip (default 256). It also bounds outstanding async publishes.
	BatchSize int `yaml:"batch_size"`
	// BatchBytes bounds the payload bytes of one outbound batch (default
	// 16 MiB; raised to twice the NATS max payload when that is larger).
	BatchBytes int `yaml:"batch_bytes"`
	// MaxRecordBytes is the largest record the producer sends (Kafka's
	// max.message.bytes; default 1000012, Kafka's own default).
	MaxRecordBytes int32 `yaml:"max_record_bytes"`
	// PublishTimeout bounds the wait for one JetStream ack (default 10s);
	// a publish that times out is retried and deduplicated by the server.
	PublishTimeout time.Duration `yaml:"publish_timeout"`
	// ProduceTimeout bounds one produce including the producer's own
	// retries (default 30s); after it the bridge backs off and retries.
	ProduceTimeout time.Duration `yaml:"produce_timeout"`
	// ShutdownTimeout bounds the flush of in-flight records once the
	// context is done (default 10s).
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// BackoffMin and BackoffMax bound the wait between retries after a
	// broker or NATS failure (defaults 250ms and 30s, doubling).
	BackoffMin time.Duration `yaml:"backoff_min"`
	BackoffMax time.Duration `yaml:"backoff_max"`
	// LagInterval is how often the lag gauges are refreshed (default 5s).
	LagInterval time.Duration `yaml:"lag_interval"`
	// LagLogInterval is how often a lag line is logged (default 1m).
	LagLogInterval time.Duration `yaml:"lag_log_interval"`
	// HealthInterval is how often the brokers are asked whether they
	// answer and the inbound topics exist (default 5s).
	HealthInterval time.Duration `yaml:"health_interval"`
	// OutageLogInterval is how often a "still down" line is logged while
	// the brokers are unreachable or an inbound topic is missing (default
	// 1m; the change itself is logged at once).
	OutageLogInterval time.Duration `yaml:"outage_log_interval"`
	// SessionTimeout is how long the group coordinator waits for a silent
	// inbound consumer before it gives its partitions to another (default
	// 6s, a stock broker's group.min.session.timeout.ms; Kafka's own
	// default is 45s, which is how long inbound stalls after a crash). A
	// static member (group_instance_id) does not leave the group when it
	// stops, so this is also how long its partitions wait for a bridge
	// that stopped for good. The broker bounds it
	// (group.min/max.session.timeout.ms).
	SessionTimeout time.Duration `yaml:"session_timeout"`
	// HeartbeatInterval is how often an inbound consumer tells the
	// coordinator it lives (default 2s, a third of the session timeout).
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"`
	// RebalanceTimeout bounds how long a rebalance waits for members to
	// rejoin (default 30s).
	RebalanceTimeout time.Duration `yaml:"rebalance_timeout"`
	// GroupInstanceID turns on static membership (Kafka's
	// group.instance.id): each inbound route joins as
	// "<group_instance_id>-<route name>", and a bridge restarted under the
	// same id gets its partitions back at once instead of after a
	// rebalance. Two live processes with one id fence each other. Empty
	// (the default): serve derives one from the host name and its data
	// folder, which it locks (DefaultInstanceID); the standalone `edihub
	// bridge`, whose --data may be serve's folder, and "none" use dynamic
	// membership.
	GroupInstanceID string `yaml:"group_instance_id"`
	// PoisonSubject receives records that cannot be mapped (default
	// edi.poison.bridge, stream POISON).
	PoisonSubject string `yaml:"poison_subject"`
	// CreateTopics lets the producer ask the brokers to create a missing
	// target topic (only if the brokers allow auto-creation).
	CreateTopics bool `yaml:"create_topics"`

	// CarryHeaders are the non-x-* headers that cross both ways, compared
	// without regard to case (default traceparent and tracestate, W3C
	// trace context). x-* headers always cross.
	CarryHeaders []string `yaml:"carry_headers"`
	// Keys sign the x-kafka-* headers an inbound route sets (x-kafka-mac,
	// for the partner) and check them on the outbound side: the hub's
	// audit key ring, set by serve. Without keys nothing verifies, so the
	// outbound routes take no key, topic or offset from an x-kafka-*
	// header (they key by partner; a dead letter goes to the route's topic).
	Keys wire.MACKeys `yaml:"-"`
	// ErrorsTolerance "all" (the default) quarantines a record that cannot
	// be mapped and goes on; "none" stops the bridge instead, leaving the
	// record uncommitted or unacked (Kafka Connect's errors.tolerance).
	ErrorsTolerance string `yaml:"errors_tolerance"`

	// Security: SASL and TLS to the brokers (see Security).
	Security Security `yaml:"security"`

	Inbound  []InRoute  `yaml:"inbound"`
	Outbound []OutRoute `yaml:"outbound"`
}

// InRoute moves one Kafka topic to edi.ingest.<partner>.
type InRoute struct {
	// Name labels metrics and logs (default: derived from the topic).
	Name string `yaml:"name"`
	// Topic is the Kafka topic to read.
	Topic string `yaml:"topic"`
	// Subject is the target subject; {{partner}} is replaced by the
	// partner (default "edi.ingest.{{partner}}").
	Subject string `yaml:"subject"`
	// PartnerFrom is where the partner comes from: "key" (the record key,
	// the default) or "header:NAME" (a record header).
	PartnerFrom string `yaml:"partner_from"`
	// Group is the Kafka consumer group (default "edihub-bridge-<name>").
	// Offsets are committed in it only after JetStream acked.
	Group string `yaml:"group"`
	// DLTTopic, when set, also writes a record that cannot be mapped to
	// this Kafka topic, as it was, with dead-letter headers ({{topic}} is
	// the record's topic, e.g. "{{topic}}.DLT"). The NATS poison copy is
	// written either way. Default: off.
	DLTTopic string `yaml:"dlt_topic"`
	// DLTHeaders is the header set of those records: spring (default),
	// connect or none.
	DLTHeaders string `yaml:"dlt_headers"`
}

// OutRoute moves a JetStream subject filter to a Kafka topic.
type OutRoute struct {
	// Name labels metrics and logs and names the durable consumer
	// (default: derived from the filter).
	Name string `yaml:"name"`
	// Filter is the JetStream subject filter, e.g. edi.parsed.>.
	Filter string `yaml:"filter"`
	// Topic is the Kafka topic; {{subject}} is replaced by the message's
	// subject (default "{{subject}}").
	Topic string `yaml:"topic"`
	// Stream holds the filter (default: looked up with StreamNameBySubject).
	Stream string `yaml:"stream"`
	// Durable names the JetStream pull consumer (default "bridge-<name>").
	Durable string `yaml:"durable"`
	// KeyToken is the 1-based subject token used as the Kafka key when the
	// message has neither x-kafka-key nor x-partner-id, so one partner's
	// records share a Kafka partition (default 3, the partner in
	// edi.parsed.<partner>.<type>; 0 on dead-letter routes, whose subject
	// has no partner). -1 disables it.
	KeyToken int `yaml:"key_token"`
	// SpringDLT adds Spring Kafka's kafka_dlt-* headers (default on for
	// dead-letter filters edi.<stage>.dlq.…, off otherwise). Kept for old
	// configs; DLTHeaders says the same and more.
	SpringDLT *bool `yaml:"spring_dlt"`
	// DLTHeaders is the dead-letter header set to add: "spring" (Spring
	// Kafka's kafka_dlt-*), "connect" (Kafka Connect's __connect.errors.*)
	// or "none". Default: spring on dead-letter filters, none otherwise.
	DLTHeaders string `yaml:"dlt_headers"`
	// DLTTopic "spring" names the topic Spring's way for a message that
	// came from Kafka: <original topic>.DLT, same partition as the original
	// record. Messages that entered over NATS go to Topic. Default "".
	DLTTopic string `yaml:"dlt_topic"`
	// MaxAckPending bounds unacked messages of the consumer (default
	// 4 × batch size). Produce is ordered, so this only bounds memory.
	MaxAckPending int `yaml:"max_ack_pending"`
	// AckWait is the consumer's redelivery timer (default 30s); held
	// messages are kept alive with InProgress while the bridge retries.
	AckWait time.Duration `yaml:"ack_wait"`
}

// Enabled reports whether any route is configured, so serve can skip the
// bridge entirely when the section is empty.
func (c *Config) Enabled() bool { return len(c.Inbound)+len(c.Outbound) > 0 }

func (c *Config) setDefaults() {
	if c.ClientID == "" {
		c.ClientID = "edihub-bridge"
	}
	if c.BatchSize == 0 {
		c.BatchSize = 256
	}
	if c.BatchBytes == 0 {
		c.BatchBytes = 16 << 20
	}
	if c.MaxRecordBytes == 0 {
		c.MaxRecordBytes = 1000012
	}
	setDur(&c.PublishTimeout, 10*time.Second)
	setDur(&c.ProduceTimeout, 30*time.Second)
	setDur(&c.ShutdownTimeout, 10*time.Second)
	setDur(&c.BackoffMin, 250*time.Millisecond)
	setDur(&c.BackoffMax, 30*time.Second)
	setDur(&c.LagInterval, 5*time.Second)
	setDur(&c.LagLogInterval, time.Minute)
	setDur(&c.HealthInterval, 5*time.Second)
	setDur(&c.SessionTimeout, 6*time.Second)
	setDur(&c.HeartbeatInterval, 2*time.Second)
	setDur(&c.RebalanceTimeout, 30*time.Second)
	setDur(&c.OutageLogInterval, time.Minute)
	if c.CarryHeaders == nil {
		c.CarryHeaders = []string{"traceparent", "tracestate"}
	}
	if c.ErrorsTolerance == "" {
		c.ErrorsTolerance = "all"
	}
	if c.PoisonSubject == "" {
		c.PoisonSubject = wire.PoisonSubject("bridge")
	}
	for i := range c.Inbound {
		r := &c.Inbound[i]
		if r.Name == "" {
			r.Name = "in-" + tokenName(r.Topic)
		}
		if r.Subject == "" {
			r.Subject = wire.IngestSubject("{{partner}}")
		}
		if r.PartnerFrom == "" {
			r.PartnerFrom = "key"
		}
		if r.Group == "" {
			r.Group = "edihub-bridge-" + r.Name
		}
		if r.DLTHeaders == "" {
			r.DLTHeaders = DLTSpring
		}
	}
	for i := range c.Outbound {
		r := &c.Outbound[i]
		if r.Name == "" {
			r.Name = "out-" + tokenName(r.Filter)
		}
		if r.Topic == "" {
			r.Topic = "{{subject}}"
		}
		if r.Durable == "" {
			r.Durable = "bridge-" + r.Name
		}
		dlq := isDLQFilter(r.Filter)
		if r.KeyToken == 0 && !dlq {
			r.KeyToken = 3
		}
		if r.SpringDLT == nil {
			on := dlq
			r.SpringDLT = &on
		}
		if r.DLTHeaders == "" {
			r.DLTHeaders = DLTNone
			if *r.SpringDLT {
				r.DLTHeaders = DLTSpring
			}
		}
		if r.MaxAckPending == 0 {
			r.MaxAckPending = 4 * c.BatchSize
		}
		setDur(&r.AckWait, 30*time.Second)
	}
}

func setDur(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// withDefaults returns a copy with defaults applied; the route slices are
// copied so the caller's config is left as it was written.
func (c *Config) withDefaults() *Config {
	cp := *c
	cp.Brokers = append([]string(nil), c.Brokers...)
	cp.Inbound = append([]InRoute(nil), c.Inbound...)
	cp.Outbound = append([]OutRoute(nil), c.Outbound...)
	cp.setDefaults()
	return &cp
}

// Validate reports a setting that cannot work. It checks the config as New
// would run it, defaults included, and leaves c unchanged.
func (c *Config) Validate() error { return c.withDefaults().validate() }

var (
	kafkaTopicRE = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)
	consumerRE   = regexp.MustCompile(`^[^.*>\s]{1,255}$`)
)

func (c *Config) validate() error {
	var errs []error
	if !c.Enabled() {
		errs = append(errs, errors.New("no routes: add bridge.inbound or bridge.outbound"))
	}
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("no Kafka brokers (bridge.brokers)"))
	}
	for _, b := range c.Brokers {
		if !strings.Contains(b, ":") {
			errs = append(errs, fmt.Errorf("broker %q: want host:port", b))
		}
	}
	if c.BatchSize < 1 || c.BatchSize > 10000 {
		errs = append(errs, fmt.Errorf("batch_size %d: must be 1..10000", c.BatchSize))
	}
	if c.BackoffMin > c.BackoffMax {
		errs = append(errs, fmt.Errorf("backoff_min %v exceeds backoff_max %v", c.BackoffMin, c.BackoffMax))
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		errs = append(errs, fmt.Errorf("heartbeat_interval %v must be below session_timeout %v (a third of it is usual)", c.HeartbeatInterval, c.SessionTimeout))
	}
	if c.GroupInstanceID != "" && !consumerRE.MatchString(c.GroupInstanceID) {
		errs = append(errs, fmt.Errorf("group_instance_id %q may not contain . * > or spaces", c.GroupInstanceID))
	}
	if !validSubject(c.PoisonSubject, false) {
		errs = append(errs, fmt.Errorf("poison_subject %q: not a NATS subject", c.PoisonSubject))
	}
	names := map[string]bool{}
	seen := func(n string) {
		if names[n] {
			errs = append(errs, fmt.Errorf("route name %q used twice", n))
		}
		names[n] = true
	}
	for _, r := range c.Inbound {
		seen(r.Name)
		if !kafkaTopicRE.MatchString(r.Topic) {
			errs = append(errs, fmt.Errorf("inbound %s: topic %q is not a Kafka topic name", r.Name, r.Topic))
		}
		if !strings.Contains(r.Subject, "{{partner}}") || !validSubject(strings.ReplaceAll(r.Subject, "{{partner}}", "P"), false) {
			errs = append(errs, fmt.Errorf("inbound %s: subject %q must be a subject containing {{partner}}", r.Name, r.Subject))
		}
		if t := strings.ReplaceAll(r.DLTTopic, "{{topic}}", r.Topic); r.DLTTopic != "" && (!kafkaTopicRE.MatchString(t) || t == r.Topic) {
			errs = append(errs, fmt.Errorf("inbound %s: dlt_topic %q is not a Kafka topic name other than the route's own", r.Name, r.DLTTopic))
		}
		if r.DLTHeaders != DLTNone && r.DLTHeaders != DLTSpring && r.DLTHeaders != DLTConnect {
			errs = append(errs, fmt.Errorf("inbound %s: dlt_headers %q: want spring, connect or none", r.Name, r.DLTHeaders))
		}
		if _, err := parsePartnerFrom(r.PartnerFrom); err != nil {
			errs = append(errs, fmt.Errorf("inbound %s: %w", r.Name, err))
		}
	}
	if c.ErrorsTolerance != "all" && c.ErrorsTolerance != "none" {
		errs = append(errs, fmt.Errorf("errors_tolerance %q: want all or none", c.ErrorsTolerance))
	}
	for _, hn := range c.CarryHeaders {
		if !wire.ValidHeaderName(hn) || isXHeader(hn) || strings.HasPrefix(strings.ToLower(hn), "nats-") {
			errs = append(errs, fmt.Errorf("carry_headers: %q is not a header name to carry (x-* always cross, Nats-* never)", hn))
		}
	}
	for _, r := range c.Outbound {
		seen(r.Name)
		if r.DLTHeaders != DLTNone && r.DLTHeaders != DLTSpring && r.DLTHeaders != DLTConnect {
			errs = append(errs, fmt.Errorf("outbound %s: dlt_headers %q: want spring, connect or none", r.Name, r.DLTHeaders))
		}
		if r.DLTTopic != "" && r.DLTTopic != "spring" {
			errs = append(errs, fmt.Errorf("outbound %s: dlt_topic %q: want spring or nothing", r.Name, r.DLTTopic))
		}
		if !validSubject(r.Filter, true) {
			errs = append(errs, fmt.Errorf("outbound %s: filter %q is not a subject filter", r.Name, r.Filter))
		}
		if t := strings.ReplaceAll(r.Topic, "{{subject}}", "s"); !kafkaTopicRE.MatchString(t) {
			errs = append(errs, fmt.Errorf("outbound %s: topic %q is not a Kafka topic name or {{subject}} template", r.Name, r.Topic))
		}
		if !consumerRE.MatchString(r.Durable) {
			errs = append(errs, fmt.Errorf("outbound %s: durable %q may not contain . * > or spaces", r.Name, r.Durable))
		}
		if r.MaxAckPending < c.BatchSize {
			errs = append(errs, fmt.Errorf("outbound %s: max_ack_pending %d is below batch_size %d", r.Name, r.MaxAckPending, c.BatchSize))
		}
	}
	errs = append(errs, c.Security.validate()...)
	errs = append(errs, c.loopErrors()...)
	return errors.Join(errs...)
}

// partnerSource is a parsed InRoute.PartnerFrom.
type partnerSource struct {
	header string // "" means the record key
}

func parsePartnerFrom(s string) (partnerSource, error) {
	switch {
	case s == "key":
		return partnerSource{}, nil
	case strings.HasPrefix(s, "header:") && len(s) > len("header:"):
		return partnerSource{header: strings.TrimPrefix(s, "header:")}, nil
	}
	return partnerSource{}, fmt.Errorf("partner_from %q: want key or header:NAME", s)
}

// validSubject checks a NATS subject (or a filter when wild is set).
func validSubject(s string, wild bool) bool {
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	toks := strings.Split(s, ".")
	for i, t := range toks {
		switch {
		case t == "":
			return false
		case t == ">" && wild && i == len(toks)-1, t == "*" && wild:
		case strings.ContainsAny(t, "*>"):
			return false
		}
	}
	return true
}

// isDLQFilter reports whether a filter reads dead letters, edi.<stage>.dlq.…,
// where Spring's dead-letter headers are wanted by default.
func isDLQFilter(f string) bool {
	toks := strings.Split(f, ".")
	return len(toks) >= 3 && toks[2] == "dlq"
}

// tokenName turns a topic or filter into a name that is safe for consumer
// names and metric labels: edi.parsed.> becomes edi-parsed-all.
func tokenName(s string) string {
	r := strings.NewReplacer(".", "-", "*", "any", ">", "all", " ", "_")
	return r.Replace(s)
}

// ParseInFlag parses the `edihub bridge --in` value: `topic=T[,subject=S]
// [,partner=key|header:NAME][,group=G][,name=N][,dlt_topic=T][,dlt_headers=H]`.
func ParseInFlag(s string) (InRoute, error) {
	var r InRoute
	kv, err := parseKV(s)
	if err != nil {
		return r, err
	}
	for k, v := range kv {
		switch k {
		case "topic":
			r.Topic = v
		case "subject":
			r.Subject = v
		case "partner", "partner_from":
			r.PartnerFrom = v
		case "group":
			r.Group = v
		case "dlt_topic":
			r.DLTTopic = v
		case "dlt_headers":
			r.DLTHeaders = v
		case "name":
			r.Name = v
		default:
			return r, fmt.Errorf("--in %q: unknown key %q", s, k)
		}
	}
	if r.Topic == "" {
		return r, fmt.Errorf("--in %q: topic= is required", s)
	}
	return r, nil
}

// ParseOutFlag parses the `edihub bridge --out` value: `filter=F[,topic=T]
// [,stream=S][,durable=D][,name=N][,spring_dlt=true|false]
// [,dlt_headers=spring|connect|none][,dlt_topic=spring][,key_token=N]`.
func ParseOutFlag(s string) (OutRoute, error) {
	var r OutRoute
	kv, err := parseKV(s)
	if err != nil {
		return r, err
	}
	for k, v := range kv {
		switch k {
		case "filter":
			r.Filter = v
		case "topic":
			r.Topic = v
		case "stream":
			r.Stream = v
		case "durable":
			r.Durable = v
		case "name":
			r.Name = v
		case "spring_dlt":
			b := v == "true" || v == "1" || v == "yes"
			if !b && v != "false" && v != "0" && v != "no" {
				return r, fmt.Errorf("--out %q: spring_dlt=%q: want true or false", s, v)
			}
			r.SpringDLT = &b
		case "dlt_headers":
			r.DLTHeaders = v
		case "dlt_topic":
			r.DLTTopic = v
		case "key_token":
			if _, err := fmt.Sscanf(v, "%d", &r.KeyToken); err != nil {
				return r, fmt.Errorf("--out %q: key_token=%q: %w", s, v, err)
			}
		default:
			return r, fmt.Errorf("--out %q: unknown key %q", s, k)
		}
	}
	if r.Filter == "" {
		return r, fmt.Errorf("--out %q: filter= is required", s)
	}
	return r, nil
}

func parseKV(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value pairs separated by commas", s)
		}
		out[k] = v
	}
	return out, nil
}
