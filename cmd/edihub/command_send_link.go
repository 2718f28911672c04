package main

import (
	"context"
	"fmt"
	"time"

	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/escape"
)

// waitForHub waits until the hub is reachable again or the outage that
// began at since has lasted longer than budget. On a terminal it shows a
// countdown on one line; otherwise a plain line every 10 seconds. It
// returns nil when it is worth trying again: connected (a hub that is
// connected but silent is given a second between tries).
func waitForHub(ctx context.Context, l *client.Link, since time.Time, budget time.Duration, tty bool, say func(string)) error {
	deadline := since.Add(budget)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastPlain := time.Time{}
	show := func() {
		left := max(time.Until(deadline), 0).Round(time.Second)
		state := "unreachable"
		if l.Connected() {
			state = "connected but not answering"
		}
		text := fmt.Sprintf("hub %s for %s: waiting %s more (--wait), Ctrl-C stops; re-sending is safe", state,
			time.Since(since).Round(time.Second), left)
		if tty {
			say("\r\x1b[K" + text)
			return
		}
		if time.Since(lastPlain) >= 10*time.Second {
			lastPlain = time.Now()
			say(text + "\n")
		}
	}
	for {
		if time.Now().After(deadline) {
			if tty {
				say("\r\x1b[K")
			}
			return fmt.Errorf("the hub did not come back within %s (--wait)", budget)
		}
		show()
		if l.Connected() {
			// Connected but silent (JetStream starting, or the ack
			// timed out): try again after a second.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
			if tty {
				say("\r\x1b[K")
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.Back():
			if tty {
				say("\r\x1b[K")
			}
			say(fmt.Sprintf("hub is back after %s; sending again\n", time.Since(since).Round(100*time.Millisecond)))
			return nil
		case <-tick.C:
		}
	}
}

// lostText says why the connection dropped, for the first line of an outage.
func lostText(l *client.Link) string {
	if err := l.LastDrop(); err != nil {
		return "connection to the hub lost: " + escape.Text(oneLine(err.Error()))
	}
	return "connection to the hub lost"
}
