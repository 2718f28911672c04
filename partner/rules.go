package partner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/edihub/edihub/edifact"
)

// defaultRuleCostLimit bounds one rule's evaluation: a rule is the operator's,
// but the message it runs over is the partner's, and a comprehension over
// 100 000 segments must not hold a partition.
const defaultRuleCostLimit = 1_000_000

// defaultRuleTimeLimit and maxRuleTimeLimit bound the rules of one message
// in time: cel-go's cost tracker slows down quadratically in the length of
// a comprehension (its stack of values is searched per step), so a rule
// over the 600 000 segments of a 10 MiB message would run for minutes
// before its cost limit, and only a deadline holds it. The maximum stays
// well under the parse stage's deadline, so that a rule out of time is
// the business refusal it is, never a stage timeout.
const (
	defaultRuleTimeLimit = time.Second
	maxRuleTimeLimit     = 10 * time.Second
)

// ruleLimits bound one message's rules: CEL cost units per evaluation,
// and time for all of them (the view's decode included).
type ruleLimits struct {
	cost uint64
	time time.Duration
}

// interruptEvery is how many comprehension steps cel-go takes between two
// looks at the deadline: a step over a huge list costs microseconds, so
// the limit holds within milliseconds.
const interruptEvery = 20

type compiledRule struct {
	Rule
	prg cel.Program
}

// celEnv is the environment every rule is compiled in: msg is the JSON
// view of one message (edifact.MessageJSON) as maps and lists.
func celEnv() (*cel.Env, error) {
	return cel.NewEnv(cel.Variable("msg", cel.DynType))
}

func compileRules(rules []Rule, costLimit uint64) ([]*compiledRule, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	seen := map[string]bool{}
	out := make([]*compiledRule, 0, len(rules))
	for i, r := range rules {
		if r.Name == "" || strings.ContainsAny(r.Name, " \t\r\n") || len(r.Name) > 64 {
			return nil, fmt.Errorf("rules[%d]: name %q: want 1 to 64 characters without spaces", i, r.Name)
		}
		if seen[r.Name] || strings.HasPrefix(r.Name, builtinPrefix) {
			return nil, fmt.Errorf("rules[%d]: name %q is used twice or reserved (%s*)", i, r.Name, builtinPrefix)
		}
		seen[r.Name] = true
		ast, iss := env.Compile(r.Expr)
		if iss.Err() != nil {
			return nil, fmt.Errorf("rule %s: %w", r.Name, iss.Err())
		}
		if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
			return nil, fmt.Errorf("rule %s: the expression gives %s, want a bool", r.Name, ast.OutputType())
		}
		prg, err := env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(interruptEvery))
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.Name, err)
		}
		out = append(out, &compiledRule{Rule: r, prg: prg})
	}
	return out, nil
}

// ruleError is a failing rule: its name and why.
type ruleError struct {
	name, msg string
}

func (e *ruleError) Error() string { return "rule " + e.name + " failed: " + e.msg }

// runRules runs the profile's rules for one message over its JSON view;
// the view is decoded once, and only when a rule applies. The decode and
// the evaluations share one deadline of limit: a rule still running at it
// (or at its cost limit) is a failing rule. err is set only when ctx
// itself ends (the stage's deadline or shutdown), which is not the rule's.
func runRules(ctx context.Context, rules []*compiledRule, limit time.Duration, em *edifact.Message, view []byte) (*ruleError, error) {
	if limit <= 0 {
		limit = defaultRuleTimeLimit
	}
	if !slices.ContainsFunc(rules, func(r *compiledRule) bool { return r.applies(em) }) {
		return nil, nil
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var msg any
	for _, r := range rules {
		if !r.applies(em) {
			continue
		}
		if msg == nil {
			var err error
			if msg, err = decodeView(rctx, view); err != nil {
				return outOfTime(ctx, r, limit, em, "the JSON view does not decode: "+err.Error())
			}
		}
		out, _, err := r.prg.ContextEval(rctx, map[string]any{"msg": msg})
		if err != nil {
			return outOfTime(ctx, r, limit, em, "evaluation error: "+err.Error())
		}
		if out != types.True {
			return &ruleError{name: r.Name, msg: fmt.Sprintf("%s is not true for message %s", r.Expr, em.Ref)}, nil
		}
	}
	return nil, nil
}

func (r *compiledRule) applies(em *edifact.Message) bool { return r.Type == "" || r.Type == em.Type }

// outOfTime names why rule r stopped: the stage's end (ctx's error, not
// the rule's), its time limit, or msg.
func outOfTime(ctx context.Context, r *compiledRule, limit time.Duration, em *edifact.Message, msg string) (*ruleError, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rule %s: %w", r.Name, err)
	}
	if strings.Contains(msg, "operation interrupted") || strings.Contains(msg, context.DeadlineExceeded.Error()) {
		msg = fmt.Sprintf("ran out of its time limit (partners.rule_time_limit %s) over message %s (%d segments)", limit, em.Ref, em.SegmentCount())
	}
	return &ruleError{name: r.Name, msg: msg}, nil
}

// decodeView decodes a message's JSON view for CEL within ctx. The decode
// itself cannot be interrupted (4 s for the 29 MB view of a 10 MiB
// message on a busy machine): past the deadline it is left to finish on
// its own and its result dropped, so that the rule's limit holds.
func decodeView(ctx context.Context, view []byte) (any, error) {
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		var v any
		err := json.Unmarshal(view, &v)
		done <- result{v, err}
	}()
	select {
	case res := <-done:
		return res.v, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Built-in rules, named builtin:<name> in x-rule.
const builtinPrefix = "builtin:"

const (
	RuleInvoicTotal = builtinPrefix + "invoic-line-total"
	RuleOrdersLines = builtinPrefix + "orders-has-lines"
	RuleDates       = builtinPrefix + "dates-parse"
)

// runBuiltins checks what users expect of every message, on its segments.
func runBuiltins(em *edifact.Message) *ruleError {
	switch em.Type {
	case "INVOIC":
		if e := invoicTotal(em); e != nil {
			return e
		}
	case "ORDERS":
		if !hasSegment(em, "LIN") {
			return &ruleError{name: RuleOrdersLines, msg: "ORDERS message " + em.Ref + " has no LIN segment"}
		}
	case "850":
		if !hasSegment(em, "PO1") {
			return &ruleError{name: RuleOrdersLines, msg: "850 transaction set " + em.Ref + " has no PO1 segment"}
		}
	}
	return datesParse(em)
}

func hasSegment(em *edifact.Message, tag string) bool {
	found := &ruleError{}
	return eachSegment(em, RuleOrdersLines, func(s *edifact.Segment) *ruleError {
		if s.Tag == tag {
			return found
		}
		return nil
	}) == found
}

// eachSegment runs fn over em's segments (kept, or read again from the
// input for a large message the parse stage did not keep:
// edifact.Message.EachSegment) until fn returns a rule's error. s is valid
// only during the call.
func eachSegment(em *edifact.Message, rule string, fn func(s *edifact.Segment) *ruleError) *ruleError {
	var failed *ruleError
	err := em.EachSegment(func(s *edifact.Segment) error {
		if failed = fn(s); failed != nil {
			return errRuleFailed
		}
		return nil
	})
	if err != nil && failed == nil { // the walk read the same bytes: cannot happen
		return &ruleError{name: rule, msg: "message " + em.Ref + ": " + err.Error()}
	}
	return failed
}

var errRuleFailed = errors.New("rule failed")

// invoicTotal: the line amounts (MOA 203) sum to the total of the line
// items (MOA 79), exactly, when the message states that total.
func invoicTotal(em *edifact.Message) *ruleError {
	dec := byte('.')
	if em.Interchange != nil && em.Interchange.Separators.Decimal != 0 {
		dec = em.Interchange.Separators.Decimal
	}
	sum := new(big.Rat)
	var total *big.Rat
	lines := 0
	if e := eachSegment(em, RuleInvoicTotal, func(s *edifact.Segment) *ruleError {
		if s.Tag != "MOA" {
			return nil
		}
		q, v := s.Value(1, 1), s.Value(1, 2)
		if q != "203" && q != "79" {
			return nil
		}
		amt, ok := new(big.Rat).SetString(strings.ReplaceAll(v, string(dec), "."))
		if !ok {
			return &ruleError{name: RuleInvoicTotal, msg: fmt.Sprintf("segment %d MOA %s: amount %q is not a number", s.Number, q, v)}
		}
		if q == "203" {
			sum.Add(sum, amt)
			lines++
		} else if total == nil {
			total = amt
		}
		return nil
	}); e != nil {
		return e
	}
	if total == nil || lines == 0 || sum.Cmp(total) == 0 {
		return nil
	}
	return &ruleError{name: RuleInvoicTotal, msg: fmt.Sprintf("INVOIC %s: the %d line amounts (MOA 203) sum to %s, the total (MOA 79) is %s",
		em.Ref, lines, sum.FloatString(2), total.FloatString(2))}
}

// dateFormats are the EDIFACT 2379 formats the dates rule checks, as Go
// layouts.
var dateFormats = map[string]string{
	"101": "060102", "102": "20060102", "201": "0601021504", "203": "200601021504", "204": "20060102150405",
}

// datesParse: every DTM (EDIFACT C507 with a known 2379 format; X12 DTM02
// CCYYMMDD) holds a real date.
func datesParse(em *edifact.Message) *ruleError {
	x12 := em.Interchange != nil && em.Interchange.Standard == "X12"
	return eachSegment(em, RuleDates, func(s *edifact.Segment) *ruleError {
		if s.Tag != "DTM" {
			return nil
		}
		var v, layout, fmtCode string
		if x12 {
			v, layout, fmtCode = s.Value(2, 1), "20060102", "CCYYMMDD"
			if v == "" {
				return nil
			}
		} else {
			v, fmtCode = s.Value(1, 2), s.Value(1, 3)
			var ok bool
			if layout, ok = dateFormats[fmtCode]; !ok || v == "" {
				if fmtCode == "718" && v != "" {
					a, b, _ := strings.Cut(v, "-")
					if _, err := time.Parse("20060102", a); err != nil {
						return dateErr(em, s, v, fmtCode)
					}
					if _, err := time.Parse("20060102", b); err != nil {
						return dateErr(em, s, v, fmtCode)
					}
				}
				return nil
			}
		}
		if _, err := time.Parse(layout, v); err != nil {
			return dateErr(em, s, v, fmtCode)
		}
		return nil
	})
}

func dateErr(em *edifact.Message, s *edifact.Segment, v, format string) *ruleError {
	return &ruleError{name: RuleDates, msg: fmt.Sprintf("message %s segment %d DTM: %q is not a date of format %s", em.Ref, s.Number, v, format)}
}
