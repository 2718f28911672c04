package partner

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/edihub/edihub/edifact/directory"
	"github.com/edihub/edihub/wire"
)

// Config is the partners: section of the config. Profiles are enabled as
// soon as one is listed or Dir is set: from then on an interchange of a
// partner without a profile is refused (partner-rejected).
type Config struct {
	// Dir holds one YAML file per partner (<anything>.yaml, one Profile
	// each). Read at start and on every reload (SIGHUP).
	Dir string `yaml:"dir"`
	// OutboundStream stores the acknowledgements (edi.outbound.>).
	OutboundStream string `yaml:"outbound_stream"`
	// Directory is the UN/EDIFACT directory validation of the messages of
	// every partner whose profile does not say (a profile's directory
	// wins): lenient (structure, mandatory items, repeats, type and length
	// refuse; code values and trailing separators are warnings), strict
	// (those refuse too) or off. Empty (the default): lenient for partners
	// with a profile, off for the others, so that a hub without profiles
	// accepts what it accepted before directory validation existed.
	Directory string `yaml:"directory"`
	// Directories is a folder of further directories in the layout of the
	// shipped ones (loaded at start).
	Directories string `yaml:"directories"`
	// RuleCostLimit bounds one evaluation of a CEL rule (CEL cost units,
	// about one per value visited; 0: 1 000 000): a rule that would cost
	// more over a partner's message refuses it (business, naming the
	// rule) instead of holding the partition.
	RuleCostLimit uint64 `yaml:"rule_cost_limit"`
	// RuleTimeLimit bounds the rules of one message in time (the decode
	// of its view and every rule's evaluation; 0: 1s, at most 10s): the
	// cost tracker does not bound time, and a rule that runs out refuses
	// the message (business, naming the rule) long before the stage's
	// deadline would make it a timeout.
	RuleTimeLimit time.Duration `yaml:"rule_time_limit"`
	// Profiles are partner profiles written in the config itself.
	Profiles []Profile `yaml:"profiles"`
}

// ruleLimits are the effective RuleCostLimit and RuleTimeLimit.
func (c Config) ruleLimits() ruleLimits {
	l := ruleLimits{cost: c.RuleCostLimit, time: c.RuleTimeLimit}
	if l.cost == 0 {
		l.cost = defaultRuleCostLimit
	}
	if l.time == 0 {
		l.time = defaultRuleTimeLimit
	}
	return l
}

// SetDefaults fills every unset field with its default.
func (c *Config) SetDefaults() {
	if c.OutboundStream == "" {
		c.OutboundStream = wire.DefaultOutboundStream
	}
}

// Enabled reports whether profiles are in force.
func (c Config) Enabled() bool { return c.Dir != "" || len(c.Profiles) > 0 }

// Validate checks the section and every profile written in it (a Dir is
// read by Load).
func (c Config) Validate() error {
	var errs []error
	if _, err := directory.ParseStrictness(c.Directory); err != nil {
		errs = append(errs, fmt.Errorf("partners.directory: %w", err))
	}
	if c.RuleTimeLimit < 0 || c.RuleTimeLimit > maxRuleTimeLimit {
		errs = append(errs, fmt.Errorf("partners.rule_time_limit: %s: want 0 (the default, %s) up to %s, well under the stage deadline",
			c.RuleTimeLimit, defaultRuleTimeLimit, maxRuleTimeLimit))
	}
	for i := range c.Profiles {
		if err := c.Profiles[i].compile(c.ruleLimits()); err != nil {
			errs = append(errs, fmt.Errorf("partners.profiles[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// Profile is one partner agreement.
type Profile struct {
	// ID is the partner id of edi.ingest.<id> (wire.ValidPartnerID).
	ID string `yaml:"id"`
	// Senders are the UNB (ISA) sender ids the partner may use, each
	// "ID" or "ID:QUALIFIER" (a qualifier listed must match). Empty: any.
	Senders []string `yaml:"senders"`
	// Recipients are our ids the partner may address. Empty: any.
	Recipients []string `yaml:"recipients"`
	// Messages are the agreed message types and versions: "INVOIC D:96A",
	// "ORDERS D:01B", X12 "850 004010"; "INVOIC" alone agrees every
	// version. Empty: any.
	Messages []string `yaml:"messages"`
	// Syntax lists the accepted syntax identifiers (UNOA, UNOC, ...) and
	// optionally versions ("UNOC:4"). Empty: any.
	Syntax []string `yaml:"syntax"`
	// Strict refuses characters outside the declared repertoire (and,
	// with directory validation, code values): the one place for a
	// partner's strictness; nil: the parse section's (parse.lenient, or
	// the deprecated parse.partners.<id>.lenient).
	Strict *bool `yaml:"strict"`
	// Test is the test-indicator policy: "any" (default), "production"
	// (a test interchange, UNB 0035 = 1 or ISA15 = T, is refused) or
	// "test" (only test interchanges).
	Test string `yaml:"test"`
	// Signature requires a detached Ed25519 signature (x-signature,
	// x-signature-key) with one of Keys (key id → public key, standard
	// base64 of 32 bytes).
	Signature SignatureConfig `yaml:"signature"`
	// Ack says which acknowledgements the partner gets.
	Ack AckConfig `yaml:"ack"`
	// Accept is what one refused message refuses: "interchange" (default:
	// the whole interchange, nothing of it is published) or "message"
	// (the other messages are published; the refused ones are named in
	// the acknowledgements and in one dead letter of the interchange).
	// Only a message's own refusal (type, directory, rules) is per
	// message; a syntax or envelope error refuses the interchange.
	Accept string `yaml:"accept"`
	// Rules are business rules in CEL over the JSON view of each message.
	Rules []Rule `yaml:"rules"`
	// Directory overrides partners.directory for this partner: strict,
	// lenient or off.
	Directory string `yaml:"directory"`
	// BuiltinRules turns off the built-in rules when false (INVOIC line
	// amounts sum to the total, ORDERS has a line, dates parse).
	BuiltinRules *bool `yaml:"builtin_rules"`
	// UBL is the agreement on the partner's UBL invoices (ubl.go).
	UBL UBLConfig `yaml:"ubl"`

	senders, recipients []party
	messages            []agreedMessage
	keys                map[string]ed25519.PublicKey
	rules               []*compiledRule
	ruleTime            time.Duration // the rules' time limit per message
}

// SignatureConfig is a profile's signing agreement.
type SignatureConfig struct {
	Required bool              `yaml:"required"`
	Keys     map[string]string `yaml:"keys"`
	// Window is how far a signature's time may be from the hub's clock,
	// either way (default 15m): a signed interchange is not accepted again
	// once the window is over, whatever the ledger still remembers.
	Window time.Duration `yaml:"window"`
}

// DefaultSignatureWindow is SignatureConfig.Window's default.
const DefaultSignatureWindow = 15 * time.Minute

func (c SignatureConfig) window() time.Duration {
	if c.Window > 0 {
		return c.Window
	}
	return DefaultSignatureWindow
}

// AckConfig is a profile's acknowledgement agreement.
type AckConfig struct {
	// CONTRL: "none" (default), "errors" (negative only) or "all"
	// (positive too).
	CONTRL string `yaml:"contrl"`
	// Positive is the UCI action of a positive CONTRL: 7 (acknowledged,
	// default) or 8 (received).
	Positive int `yaml:"positive"`
	// X12 functional acknowledgement: "none" (default), "999" or "997";
	// sent for errors only unless X12All.
	X12    string `yaml:"x12"`
	X12All bool   `yaml:"x12_all"`
	// TA1 acknowledges the ISA envelope ("errors" or "all").
	TA1 string `yaml:"ta1"`
	// APERAK is sent for a business rejection (EDIFACT).
	APERAK bool `yaml:"aperak"`
	// MLR is the Peppol Message Level Response to a UBL document: "none"
	// (default), "errors" (rejections only) or "all" (acceptances too).
	MLR string `yaml:"mlr"`
}

// Rule is one business rule: a CEL expression over the message's JSON
// view (variable msg) that must be true. Type limits it to one message
// type ("" = every type).
type Rule struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
	Expr string `yaml:"expr"`
}

type party struct{ id, qualifier string }

type agreedMessage struct{ typ, version string }

func parseParty(s string) (party, error) {
	id, q, _ := strings.Cut(strings.TrimSpace(s), ":")
	if id == "" {
		return party{}, fmt.Errorf("%q: an id is empty", s)
	}
	return party{id: id, qualifier: q}, nil
}

func (p party) matches(id, qualifier string) bool {
	return p.id == id && (p.qualifier == "" || p.qualifier == qualifier)
}

// parseMessage reads "INVOIC D:96A" (version D:96A = 0052:0054) or
// "850 004010" or "INVOIC".
func parseMessage(s string) (agreedMessage, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return agreedMessage{}, fmt.Errorf("%q: want TYPE or TYPE VERSION, e.g. \"INVOIC D:96A\" or \"850 004010\"", s)
	}
	m := agreedMessage{typ: f[0]}
	if len(f) == 2 {
		m.version = f[1]
	}
	return m, nil
}

// compile checks a profile and prepares its lookups.
func (p *Profile) compile(limits ruleLimits) error {
	if err := wire.ValidPartnerID(p.ID); err != nil {
		return fmt.Errorf("id %q: %w", p.ID, err)
	}
	p.senders, p.recipients, p.messages = nil, nil, nil
	for _, s := range p.Senders {
		pt, err := parseParty(s)
		if err != nil {
			return fmt.Errorf("%s: senders: %w", p.ID, err)
		}
		p.senders = append(p.senders, pt)
	}
	for _, s := range p.Recipients {
		pt, err := parseParty(s)
		if err != nil {
			return fmt.Errorf("%s: recipients: %w", p.ID, err)
		}
		p.recipients = append(p.recipients, pt)
	}
	for _, s := range p.Messages {
		m, err := parseMessage(s)
		if err != nil {
			return fmt.Errorf("%s: messages: %w", p.ID, err)
		}
		p.messages = append(p.messages, m)
	}
	if p.Directory != "" {
		if _, err := directory.ParseStrictness(p.Directory); err != nil {
			return fmt.Errorf("%s: directory: %w", p.ID, err)
		}
	}
	switch p.Test {
	case "":
		p.Test = TestAny
	case TestAny, TestProduction, TestOnly:
	default:
		return fmt.Errorf("%s: test: %q, want any, production or test", p.ID, p.Test)
	}
	switch p.Accept {
	case "":
		p.Accept = AcceptInterchange
	case AcceptInterchange, AcceptMessage:
	default:
		return fmt.Errorf("%s: accept: %q, want interchange or message", p.ID, p.Accept)
	}
	a := &p.Ack
	if a.CONTRL == "" {
		a.CONTRL = AckNone
	}
	if a.TA1 == "" {
		a.TA1 = AckNone
	}
	if a.X12 == "" {
		a.X12 = AckNone
	}
	if a.Positive == 0 {
		a.Positive = 7
	}
	if a.MLR == "" {
		a.MLR = AckNone
	}
	if !slices.Contains([]string{AckNone, AckErrors, AckAll}, a.MLR) {
		return fmt.Errorf("%s: ack.mlr: %q, want none, errors or all", p.ID, a.MLR)
	}
	if err := p.UBL.compile(); err != nil {
		return fmt.Errorf("%s: ubl: %w", p.ID, err)
	}
	if !slices.Contains([]string{AckNone, AckErrors, AckAll}, a.CONTRL) {
		return fmt.Errorf("%s: ack.contrl: %q, want none, errors or all", p.ID, a.CONTRL)
	}
	if !slices.Contains([]string{AckNone, AckErrors, AckAll}, a.TA1) {
		return fmt.Errorf("%s: ack.ta1: %q, want none, errors or all", p.ID, a.TA1)
	}
	if !slices.Contains([]string{AckNone, "997", "999"}, a.X12) {
		return fmt.Errorf("%s: ack.x12: %q, want none, 997 or 999", p.ID, a.X12)
	}
	if a.Positive != 7 && a.Positive != 8 {
		return fmt.Errorf("%s: ack.positive: %d, want 7 (acknowledged) or 8 (received)", p.ID, a.Positive)
	}
	p.keys = map[string]ed25519.PublicKey{}
	for id, k := range p.Signature.Keys {
		if err := validKeyID(id); err != nil {
			return fmt.Errorf("%s: signature.keys: %w", p.ID, err)
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(k))
		if err != nil || len(b) != ed25519.PublicKeySize {
			return fmt.Errorf("%s: signature.keys.%s: want the standard base64 of a 32-byte Ed25519 public key", p.ID, id)
		}
		p.keys[id] = ed25519.PublicKey(b)
	}
	if p.Signature.Required && len(p.keys) == 0 {
		return fmt.Errorf("%s: signature.required needs at least one key in signature.keys", p.ID)
	}
	rules, err := compileRules(p.Rules, limits.cost)
	if err != nil {
		return fmt.Errorf("%s: %w", p.ID, err)
	}
	p.rules, p.ruleTime = rules, limits.time
	return nil
}

// Test-indicator policies and acknowledgement modes.
const (
	TestAny = "any"
	// Accept: what one refused message refuses.
	AcceptInterchange = "interchange"
	AcceptMessage     = "message"
	TestProduction    = "production"
	TestOnly          = "test"
	AckNone           = "none"
	AckErrors         = "errors"
	AckAll            = "all"
)

// Set is a validated set of profiles by partner id.
type Set struct {
	enabled  bool
	profiles map[string]*Profile
	sources  map[string]string // id → where it was defined
}

// Load reads the config's profiles and the files of c.Dir into a Set. Any
// error (a bad file, an id defined twice) fails the whole load: a reload
// then keeps the set it had.
func Load(c Config) (*Set, error) {
	s := &Set{enabled: c.Enabled(), profiles: map[string]*Profile{}, sources: map[string]string{}}
	var errs []error
	keyOwner := map[string]string{} // public key → partner
	add := func(p Profile, src string) {
		if err := p.compile(c.ruleLimits()); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src, err))
			return
		}
		if prev, dup := s.sources[p.ID]; dup {
			errs = append(errs, fmt.Errorf("%s: partner %s is already defined in %s", src, p.ID, prev))
			return
		}
		// A key belongs to one partner: whoever holds it could otherwise
		// sign as every partner that lists it.
		for id, k := range p.keys {
			if owner, dup := keyOwner[string(k)]; dup && owner != p.ID {
				errs = append(errs, fmt.Errorf("%s: signature.keys.%s of %s is also a key of partner %s; a key belongs to one partner", src, id, p.ID, owner))
				return
			}
		}
		for _, k := range p.keys {
			keyOwner[string(k)] = p.ID
		}
		s.profiles[p.ID], s.sources[p.ID] = &p, src
	}
	for i, p := range c.Profiles {
		add(p, fmt.Sprintf("partners.profiles[%d]", i))
	}
	if c.Dir != "" {
		files, err := filepath.Glob(filepath.Join(c.Dir, "*.yaml"))
		if err != nil {
			return nil, fmt.Errorf("partners.dir: %w", err)
		}
		if _, err := os.Stat(c.Dir); err != nil {
			return nil, fmt.Errorf("partners.dir: %w", err)
		}
		sort.Strings(files)
		for _, f := range files {
			p, err := readProfile(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(p, f)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("partner profiles: %w", errors.Join(errs...))
	}
	return s, nil
}

// readProfile reads one profile file; unknown keys are errors.
func readProfile(path string) (Profile, error) {
	var p Profile
	b, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("read %s: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return p, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Enabled reports whether profiles are in force.
func (s *Set) Enabled() bool { return s != nil && s.enabled }

// Get returns a partner's profile.
func (s *Set) Get(id string) (*Profile, bool) {
	if s == nil {
		return nil, false
	}
	p, ok := s.profiles[id]
	return p, ok
}

// IDs lists the partner ids, sorted.
func (s *Set) IDs() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.profiles))
	for id := range s.profiles {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Source says where a partner's profile was defined.
func (s *Set) Source(id string) string { return s.sources[id] }
