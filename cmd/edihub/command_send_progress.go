package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressBar draws send's progress on one terminal line (stderr only, and
// only when stderr is a terminal): a bar, files done of total, failures,
// the rate and the time left. Lines printed above it (failures, outages)
// clear it first; it is redrawn at most ten times a second.
type progressBar struct {
	w     io.Writer
	total int
	start time.Time
	last  time.Time
	now   func() time.Time
}

func newProgressBar(w io.Writer, total int) *progressBar {
	return &progressBar{w: w, total: total, start: time.Now(), now: time.Now}
}

// update redraws the line unless it was drawn less than 100 ms ago (force
// draws anyway: the last file, or after a line was printed above).
func (p *progressBar) update(done, failed int, force bool) {
	now := p.now()
	if !force && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprint(p.w, "\r\x1b[K"+progressLine(done, failed, p.total, now.Sub(p.start)))
}

// clear removes the line so that a message can be printed in its place.
func (p *progressBar) clear() { fmt.Fprint(p.w, "\r\x1b[K") }

// finish leaves the final state on its own line.
func (p *progressBar) finish(done, failed int) {
	p.update(done, failed, true)
	fmt.Fprintln(p.w)
}

// progressLine is the text of the bar: [=====>    ] 1234/4000 31% 0 failed 412 files/s ETA 7s.
func progressLine(done, failed, total int, elapsed time.Duration) string {
	const width = 24
	frac := 0.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	filled := int(frac * width)
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	eta := "ETA --"
	switch {
	case done >= total:
		eta = "in " + elapsed.Round(100*time.Millisecond).String()
	case rate > 0:
		eta = "ETA " + time.Duration(float64(total-done)/rate*float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("[%s] %d/%d %3.0f%% %d failed %.0f files/s %s", bar, done, total, frac*100, failed, rate, eta)
}
