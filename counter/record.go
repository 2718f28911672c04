package counter

import (
	"fmt"
	"time"
)

// Key names one message as one consumer sees it.
type Key struct {
	Stream   string
	Consumer string
	Seq      uint64
}

func (k Key) String() string { return fmt.Sprintf("%s/%s/%d", k.Stream, k.Consumer, k.Seq) }

// bytes encodes the key so that bbolt keeps one message's records together
// and in sequence order.
func (k Key) bytes() []byte {
	b := make([]byte, 0, len(k.Stream)+len(k.Consumer)+10)
	b = append(b, k.Stream...)
	b = append(b, 0)
	b = append(b, k.Consumer...)
	b = append(b, 0)
	for i := 7; i >= 0; i-- {
		b = append(b, byte(k.Seq>>(8*i)))
	}
	return b
}

// Kind says how an attempt failed.
type Kind string

const (
	KindError   Kind = "error"   // the handler returned an error
	KindPanic   Kind = "panic"   // the handler panicked; recovered
	KindTimeout Kind = "timeout" // the handler overran its deadline
)

// Failure is one explained outcome.
type Failure struct {
	Stage       string    `json:"stage,omitempty"`
	Kind        Kind      `json:"kind"`
	Class       string    `json:"class"` // transient, permanent, unclassified
	Cause       string    `json:"cause,omitempty"`
	Fingerprint string    `json:"fingerprint"`
	Message     string    `json:"message,omitempty"`
	Delivery    uint64    `json:"delivery"`       // JetStream's NumDelivered of that attempt
	Solo        bool      `json:"solo,omitempty"` // the attempt ran alone (see Record.SoloRuns)
	At          time.Time `json:"at"`
}

// maxKept bounds a record: only the most recent failures are kept, while
// Count keeps counting.
const maxKept = 16

// Record is what the store knows of one message.
type Record struct {
	Count    int       `json:"count"` // explained failures, all time
	FirstAt  time.Time `json:"first_at"`
	LastAt   time.Time `json:"last_at"`
	Failures []Failure `json:"failures"` // the latest maxKept
	// SoloRuns counts the runs that started alone, as a suspect after a
	// crash; SoloExplained those of them that ended with a recorded
	// failure. A solo run with no outcome ended with the process dying: that
	// death is this message's, not a neighbour's. Counted here rather than
	// by JetStream's delivery count, which a killed embedded server may not
	// have persisted.
	SoloRuns      int `json:"solo_runs,omitempty"`
	SoloExplained int `json:"solo_explained,omitempty"`
}

// Deaths counts the solo runs that recorded no outcome: the process died
// while this message ran alone.
func (r Record) Deaths() int { return r.SoloRuns - r.SoloExplained }

// Last returns the most recent failure, or false.
func (r Record) Last() (Failure, bool) {
	if len(r.Failures) == 0 {
		return Failure{}, false
	}
	return r.Failures[len(r.Failures)-1], true
}

// With returns r with f added, as the store would record it: the hub
// decides on the record it would have had when a write fails.
func (r Record) With(f Failure) Record {
	if r.Holds(f) {
		return r
	}
	r.Failures = append([]Failure(nil), r.Failures...)
	r.add(f)
	return r
}

// Holds reports whether r keeps f already: the same attempt (delivery),
// the same failure, at the same time. An outcome kept in memory while the
// store refused it is stamped when it is kept, so a second hub storing it
// after the first did (their announcements crossed) changes nothing.
func (r Record) Holds(f Failure) bool {
	if f.At.IsZero() {
		return false
	}
	for _, g := range r.Failures {
		if g.Delivery == f.Delivery && g.At.Equal(f.At) && g.Fingerprint == f.Fingerprint && g.Stage == f.Stage {
			return true
		}
	}
	return false
}

// SameFingerprint reports whether every kept failure has one fingerprint.
func (r Record) SameFingerprint() bool {
	for _, f := range r.Failures {
		if f.Fingerprint != r.Failures[0].Fingerprint {
			return false
		}
	}
	return len(r.Failures) > 0
}

func (r *Record) add(f Failure) {
	// A solo outcome explains a solo mark: never more of them than marks
	// (a mark whose write was refused has none), or Deaths would go below
	// zero and hide a death to come.
	if f.Solo && r.SoloExplained < r.SoloRuns {
		r.SoloExplained++
	}
	if r.Count == 0 {
		r.FirstAt = f.At
	}
	r.Count++
	r.LastAt = f.At
	r.Failures = append(r.Failures, f)
	if len(r.Failures) > maxKept {
		r.Failures = append(r.Failures[:0], r.Failures[len(r.Failures)-maxKept:]...)
	}
}

// updater is the read-modify-write each store provides: it applies change
// to k's record and stores the result.
type updater func(k Key, change func(*Record)) (Record, error)

// recordFailure and markSolo are the two changes a store makes; both
// stores share them, so the record means the same in either.
func recordFailure(update updater, now func() time.Time, k Key, f Failure) (Record, error) {
	if f.At.IsZero() {
		f.At = now()
	}
	r, err := update(k, func(r *Record) {
		if !r.Holds(f) {
			r.add(f)
		}
	})
	if err != nil {
		return Record{}, fmt.Errorf("record failure of %s: %w", k, err)
	}
	return r, nil
}

func markSolo(update updater, now func() time.Time, k Key) (Record, error) {
	r, err := update(k, func(r *Record) {
		r.SoloRuns++
		r.LastAt = now()
		if r.FirstAt.IsZero() {
			r.FirstAt = r.LastAt
		}
	})
	if err != nil {
		return Record{}, fmt.Errorf("mark solo run of %s: %w", k, err)
	}
	return r, nil
}

// RepeatsIdentically reports whether r's latest n failures all have this
// fingerprint and message, the first of them before storedAt (when
// others' work last succeeded): a failure repeated identically while
// others' work succeeds is the message's own.
func (r Record) RepeatsIdentically(fingerprint, message string, n int, storedAt time.Time) bool {
	k := 0
	var first time.Time
	for i := len(r.Failures) - 1; i >= 0 && k < n; i-- {
		f := r.Failures[i]
		if f.Fingerprint != fingerprint || f.Message != message {
			return false
		}
		k, first = k+1, f.At
	}
	return k == n && !first.IsZero() && storedAt.After(first)
}
