package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/edihub/edihub/hub"
	ejs "github.com/edihub/edihub/jetstream"
)

func init() {
	register(command{name: "drill", summary: "make a poison message on purpose and follow it", run: runDrill})
}

// drillStep is one line of a drill's story (also its --json form).
type drillStep struct {
	At   time.Time `json:"at"`
	Step string    `json:"step"`
	Text string    `json:"text"`
}

type driller struct {
	e        *env
	json     bool
	start    time.Time
	mu       sync.Mutex
	attempts int
}

func (d *driller) say(step, format string, a ...any) {
	s := drillStep{At: time.Now().UTC(), Step: step, Text: fmt.Sprintf(format, a...)}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.json {
		b, _ := json.Marshal(s)
		fmt.Fprintln(d.e.stdout, string(b))
		return
	}
	fmt.Fprintf(d.e.stdout, "%6.1fs  %s\n", time.Since(d.start).Seconds(), s.Text)
}

func runDrill(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "drill", "--kind panic|hang|exit|error [--partner ID]")
	var cf clientFlags
	cf.register(fs, e)
	kind := fs.String("kind", "", "what the drill message does: panic, hang, exit or error")
	partner := fs.String("partner", "DRILL", "partner ID whose partition the drill uses")
	healthy := fs.Int("healthy", 3, "healthy interchanges published behind the drill message")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !slices.Contains(hub.DrillKinds, *kind) {
		return usageErr("--kind must be one of %s", strings.Join(hub.DrillKinds, ", "))
	}
	d := &driller{e: e, json: cf.json, start: time.Now()}
	nc, j, err := ejs.Connect(cf.server, "edihub-drill",
		nats.DisconnectErrHandler(func(c *nats.Conn, _ error) {
			if c.IsClosed() { // our own Close at the end
				return
			}
			if *kind != hub.DrillExit {
				d.say("hub-died", "the connection to the hub was lost")
				return
			}
			d.mu.Lock()
			d.attempts++
			n := d.attempts
			d.mu.Unlock()
			d.say("hub-died", "attempt %d: the hub went away (connection lost) — the drill message killed it, as intended", n)
		}),
		nats.ReconnectHandler(func(_ *nats.Conn) { d.say("hub-back", "the hub is back (restarted by its supervisor)") }),
	)
	if err != nil {
		return unreachableErr(fmt.Errorf("%v (is the hub running with --drill?)", err))
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	id := nuid.Next()
	partition := partitionOfPartner(ctx, j, *partner)
	drillSeq, err := publishInterchange(ctx, j, *partner, "DRL"+id[len(id)-8:], nats.Header{hub.HdrDrill: {*kind}, hub.HdrCorrelationID: {"drill-" + id}})
	if err != nil {
		return unreachableErr(err)
	}
	d.say("published", "published a %q drill message (INGEST seq %d) for partner %s in partition %s", *kind, drillSeq, *partner, partition)
	var healthySeqs []uint64
	for i := 0; i < *healthy; i++ {
		seq, err := publishInterchange(ctx, j, *partner, fmt.Sprintf("H%s%d", id[len(id)-6:], i), nats.Header{hub.HdrCorrelationID: {fmt.Sprintf("drill-%s-ok-%d", id, i)}})
		if err != nil {
			return unreachableErr(err)
		}
		healthySeqs = append(healthySeqs, seq)
	}
	d.say("published", "published %d healthy interchanges behind it (seq %v)", len(healthySeqs), healthySeqs)

	events := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(hub.EventSubjectPrefix+">", events)
	if err != nil {
		return unreachableErr(err)
	}
	defer sub.Unsubscribe()

	wantPoison := *kind != hub.DrillError
	var placed string
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return failedErr("timed out after %v: drill message %s; healthy parsed %s", *timeout, orNot(placed, "not yet quarantined or dead-lettered"), "incomplete")
		case m := <-events:
			var ev hub.Event
			if json.Unmarshal(m.Data, &ev) != nil || ev.Seq != drillSeq || ev.Stream != "INGEST" {
				continue
			}
			switch ev.Kind {
			case hub.EventAttemptFailed:
				d.mu.Lock()
				d.attempts = max(d.attempts+1, ev.Attempt)
				d.mu.Unlock()
				d.say("attempt", "attempt %d failed in stage %s (%s): %s", ev.Attempt, ev.Stage, ev.Class, ev.Error)
			case hub.EventQuarantined:
				d.say("quarantined", "quarantined after %d attempts to %s, cause %s: %s", ev.Attempt, ev.Subject, ev.Cause, ev.Error)
			case hub.EventDeadLettered:
				d.say("dead-lettered", "dead-lettered after %d attempt(s) to %s, cause %s: %s", ev.Attempt, ev.Subject, ev.Cause, ev.Error)
			}
		case <-tick.C:
			if placed == "" {
				where, err := findCopy(ctx, j, drillSeq, wantPoison, d.start)
				if err != nil || where == "" {
					if parsedSeqs, _ := parsedOriginSeqs(ctx, j, d.start); slices.Contains(parsedSeqs, drillSeq) {
						return failedErr("the hub parsed the drill message like any other: is it running with --drill?")
					}
					continue
				}
				placed = where
				d.say("placed", "the drill message is in %s", where)
			}
			parsedSeqs, err := parsedOriginSeqs(ctx, j, d.start)
			if err != nil {
				continue
			}
			if got := inOrder(parsedSeqs, healthySeqs); got == len(healthySeqs) {
				d.say("moved-on", "partition %s moved on: the %d healthy interchanges behind it were parsed in order", partition, len(healthySeqs))
				d.say("passed", "drill %s passed in %.1fs", *kind, time.Since(d.start).Seconds())
				return nil
			}
		}
	}
}

func orNot(s, def string) string {
	if s == "" {
		return def
	}
	return "in " + s
}

// publishInterchange publishes until the server acks: during an exit
// drill the hub (and its embedded server) may be down between restarts.
// The dedupe id makes a retried publish land once.
func publishInterchange(ctx context.Context, j js.JetStream, partner, ref string, h nats.Header) (uint64, error) {
	msg := &nats.Msg{Subject: hub.IngestPublishSubject(partner), Header: h, Data: sampleInterchange(ref, 2)}
	var lastErr error
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ack, err := j.PublishMsg(pctx, msg, js.WithMsgID("drill:"+ref), js.WithRetryAttempts(10), js.WithRetryWait(250*time.Millisecond))
		cancel()
		if err == nil {
			return ack.Sequence, nil
		}
		lastErr = err
		time.Sleep(250 * time.Millisecond)
	}
	return 0, fmt.Errorf("publish: %w", lastErr)
}

var rePartitions = regexp.MustCompile(`partition\((\d+),`)

// partitionOfPartner reads the partition count from INGEST's transform.
func partitionOfPartner(ctx context.Context, j js.JetStream, partner string) string {
	s, err := j.Stream(ctx, "INGEST")
	if err != nil || s.CachedInfo().Config.SubjectTransform == nil {
		return "?"
	}
	m := rePartitions.FindStringSubmatch(s.CachedInfo().Config.SubjectTransform.Destination)
	if m == nil {
		return "?"
	}
	n, _ := strconv.Atoi(m[1])
	return strconv.Itoa(hub.PartitionOf(partner, n))
}

// readSince reads the messages of stream on filter stored since t, with a
// throwaway ordered consumer, calling f for each.
func readSince(ctx context.Context, j js.JetStream, stream, filter string, t time.Time, f func(js.Msg)) error {
	start := t.Add(-2 * time.Second)
	c, err := j.OrderedConsumer(ctx, stream, js.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: js.DeliverByStartTimePolicy, OptStartTime: &start})
	if err != nil {
		return err
	}
	for {
		batch, err := c.FetchNoWait(500)
		if err != nil {
			return err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			f(m)
		}
		if batch.Error() != nil {
			return batch.Error()
		}
		if n == 0 {
			return nil
		}
	}
}

// findCopy looks for the quarantine or dead-letter copy of INGEST seq.
func findCopy(ctx context.Context, j js.JetStream, seq uint64, poison bool, since time.Time) (string, error) {
	stream, filter := "DLQ", "edi.*.dlq.>"
	if poison {
		stream, filter = "POISON", "edi.poison.>"
	}
	var where string
	err := readSince(ctx, j, stream, filter, since, func(m js.Msg) {
		h := m.Headers()
		if h.Get(hub.HdrOriginalStream) == "INGEST" && h.Get(hub.HdrOriginalSeq) == strconv.FormatUint(seq, 10) {
			cause := hub.HdrPoisonCause + "=" + h.Get(hub.HdrPoisonCause)
			if !poison {
				cause = hub.HdrErrorCause + "=" + h.Get(hub.HdrErrorCause)
			}
			where = fmt.Sprintf("%s (stream %s, %s, %s=%s)", m.Subject(), stream, cause, hub.HdrAttempts, h.Get(hub.HdrAttempts))
		}
	})
	return where, err
}

// parsedOriginSeqs lists the INGEST sequences of parsed outputs, in the
// order PARSED stored them.
func parsedOriginSeqs(ctx context.Context, j js.JetStream, since time.Time) ([]uint64, error) {
	var out []uint64
	err := readSince(ctx, j, "PARSED", "edi.parsed.>", since, func(m js.Msg) {
		if s, err := strconv.ParseUint(m.Headers().Get(hub.HdrOriginalSeq), 10, 64); err == nil {
			out = append(out, s)
		}
	})
	return out, err
}

// inOrder counts how many of want appear in got, in want's order.
func inOrder(got, want []uint64) int {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i
}
