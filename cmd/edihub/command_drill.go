package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/drill"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
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
	e      *env
	json   bool
	start  time.Time
	mu     sync.Mutex
	deaths int         // connection losses seen: each one the hub going away
	last   time.Time   // when the last step was said
	steps  []drillStep // --json: printed as one document at the end
}

func (d *driller) say(step, format string, a ...any) {
	s := drillStep{At: time.Now().UTC(), Step: step, Text: fmt.Sprintf(format, a...)}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.last = time.Now()
	if d.json {
		d.steps = append(d.steps, s)
		return
	}
	fmt.Fprintf(d.e.stdout, "%6.1fs  %s\n", time.Since(d.start).Seconds(), escape.Text(s.Text))
}

func runDrill(ctx context.Context, e *env, args []string) (retErr error) {
	fs := newFlagSet(e, "drill", "--kind panic|hang|exit|error [--partner ID]")
	var cf clientFlags
	cf.register(fs, e)
	kind := fs.String("kind", "", "what the drill message does: panic, hang, exit or error")
	partner := fs.String("partner", "DRILL", "partner ID whose partition the drill uses")
	healthy := fs.Int("healthy", 3, "healthy interchanges published behind the drill message")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	config := fs.String("config", "", "the hub's config file, for renamed streams (default: none, the default names)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := app.LoadConfig(*config)
	if err != nil {
		return usageErr("%v", err)
	}
	cfg.Hub.SetDefaults()
	streams := cfg.Hub.Streams
	att := cfg.Hub.Attempts
	if !slices.Contains(drill.Kinds, *kind) {
		return usageErr("--kind must be one of %s", strings.Join(drill.Kinds, ", "))
	}
	d := &driller{e: e, json: cf.json, start: time.Now()}
	if d.json {
		defer func() { // one document for the command, its outcome included
			doc := map[string]any{"kind": *kind, "partner": *partner, "ok": retErr == nil, "steps": d.steps}
			if retErr != nil {
				doc["error"] = retErr.Error()
			}
			d.mu.Lock()
			b, _ := escape.JSON(doc)
			d.mu.Unlock()
			fmt.Fprintln(e.stdout, string(b))
		}()
	}
	nc, j, err := cf.connect("edihub-drill",
		nats.DisconnectErrHandler(func(c *nats.Conn, _ error) {
			if c.IsClosed() { // our own Close at the end
				return
			}
			d.mu.Lock()
			d.deaths++
			n := d.deaths
			d.mu.Unlock()
			if *kind != drill.Exit {
				d.say("hub-died", "death %d: the connection to the hub was lost (not what a %s drill does: is the hub restarting?)", n, *kind)
				return
			}
			d.say("hub-died", "death %d: the hub went away (connection lost) — the drill message killed it, as intended", n)
		}),
		nats.ReconnectHandler(func(_ *nats.Conn) { d.say("hub-back", "the hub is back (restarted by its supervisor)") }),
		// Reconnect fast: a hub that restarts and dies again within the
		// wait would be a death this drill does not see.
		nats.ReconnectWait(50*time.Millisecond), nats.ReconnectJitter(0, 0),
	)
	if err != nil {
		return unreachableErr(fmt.Errorf("%v (is the hub running with --drill?)", err))
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	settings := ""
	if *config == "" {
		settings = " (with the default attempt settings: --config reads the hub's)"
	}
	d.say("expect", "%s%s", drill.Expectation(*kind, att), settings)
	// The verdict is read from the streams, from where they end now
	// (client.Tracker); the hub's events only tell the story, since a
	// restart loses those sent while the drill's connection was down.
	track, err := client.NewTracker(ctx, j, streams)
	if err != nil {
		return unreachableErr(fmt.Errorf("%v (is the hub running?)", err))
	}
	id := nuid.Next()
	partition := client.PartitionOfPartner(ctx, j, streams.Ingest, *partner)
	drillSeq, err := publishDrill(ctx, j, *partner, "DRL"+id[len(id)-8:], nats.Header{wire.HdrDrill: {*kind}, wire.HdrCorrelationID: {"drill-" + id}})
	if err != nil {
		return unreachableErr(err)
	}
	d.say("published", "published a %q drill message (INGEST seq %d) for partner %s in partition %s", *kind, drillSeq, *partner, partition)
	var healthySeqs []uint64
	for i := 0; i < *healthy; i++ {
		seq, err := publishDrill(ctx, j, *partner, fmt.Sprintf("H%s%d", id[len(id)-6:], i), nats.Header{wire.HdrCorrelationID: {fmt.Sprintf("drill-%s-ok-%d", id, i)}})
		if err != nil {
			return unreachableErr(err)
		}
		healthySeqs = append(healthySeqs, seq)
	}
	d.say("published", "published %d healthy interchanges behind it (seq %v)", len(healthySeqs), healthySeqs)
	track.Follow(append([]uint64{drillSeq}, healthySeqs...)...) // keep only these, however busy the hub

	events := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(wire.EventSubjectPrefix+">", events)
	if err != nil {
		return unreachableErr(err)
	}
	defer sub.Unsubscribe()

	wantPoison := *kind != drill.Error
	var placed string
	var pollErr error
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			text := fmt.Sprintf("timed out after %v: drill message %s; %d of %d healthy interchanges parsed in order",
				*timeout, orNot(placed, "not yet quarantined or dead-lettered"), track.ParsedInOrder(healthySeqs), len(healthySeqs))
			if pollErr != nil {
				text += fmt.Sprintf(" (last read of the streams: %v)", pollErr)
			}
			return failedErr("%s", text)
		case m := <-events:
			var ev wire.Event
			if json.Unmarshal(m.Data, &ev) != nil || ev.Seq != drillSeq || ev.Stream != streams.Ingest {
				continue
			}
			if step, text := drill.EventStep(ev, att.Threshold); step != "" {
				d.say(step, "%s", text)
			}
		case <-tick.C:
			d.mu.Lock()
			quiet := time.Since(d.last)
			d.mu.Unlock()
			if quiet >= 10*time.Second {
				d.say("waiting", "still waiting (%s so far; %s)", time.Since(d.start).Round(time.Second), orNot(placed, "the drill message is not placed yet"))
			}
			if pollErr = track.Poll(ctx); pollErr != nil {
				continue // the hub away: the next read goes on where this one stopped
			}
			if track.Parsed(drillSeq) {
				return failedErr("the hub parsed the drill message like any other: is it running with --drill?")
			}
			if placed == "" {
				p, ok := track.Placed(drillSeq)
				if !ok {
					continue
				}
				placed = p.String()
				d.say("placed", "the drill message is in %s", placed)
				if p.Poison != wantPoison {
					return failedErr("a %s drill message belongs in %s, but the hub put it in %s", *kind, orElse(wantPoison, streams.Poison, streams.DLQ), p.Stream)
				}
				if *kind == drill.Exit {
					d.mu.Lock()
					seen := d.deaths
					d.mu.Unlock()
					d.say("deaths", "%s", drill.DeathsText(seen, p.Deaths))
				}
			}
			if track.ParsedInOrder(healthySeqs) == len(healthySeqs) {
				d.say("moved-on", "partition %s moved on: the %d healthy interchanges behind it were parsed in order", partition, len(healthySeqs))
				d.say("passed", "drill %s passed in %.1fs", *kind, time.Since(d.start).Seconds())
				return nil
			}
		}
	}
}

func orElse(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// publishDrill publishes a sample interchange with reference ref until
// the server acks it (client.PublishUntilAcked).
func publishDrill(ctx context.Context, j js.JetStream, partner, ref string, h nats.Header) (uint64, error) {
	return client.PublishUntilAcked(ctx, j, partner, "drill:"+ref, app.SampleInterchange(ref, 2), h)
}

func orNot(s, def string) string {
	if s == "" {
		return def
	}
	return "in " + s
}
