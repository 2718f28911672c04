package jetstream

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	js "github.com/nats-io/nats.go/jetstream"
)

// Change says what EnsureStream did.
type Change string

const (
	Created   Change = "created"
	Updated   Change = "updated"
	Unchanged Change = "unchanged"
)

// managedFields are the stream settings the hub owns. Everything else (for
// example settings an operator added with the nats CLI) is left as it is.
var managedFields = []string{
	"Subjects", "SubjectTransform", "Retention", "Storage", "MaxAge", "MaxBytes",
	"MaxMsgs", "MaxMsgSize", "Duplicates", "DenyDelete", "DenyPurge",
	"AllowMsgSchedules", "AllowMsgTTL", "AllowDirect", "Discard", "Replicas",
	"MaxMsgsPerSubject", "DiscardNewPerSubject", "AllowAtomicPublish", "AllowBatchPublish",
}

// immutableFields cannot be changed on an existing stream by JetStream.
var immutableFields = map[string]bool{"Storage": true, "Retention": true}

// EnsureStream creates the stream or brings its managed settings to want.
// A change JetStream refuses is reported with the settings that differ and
// what to do, and the stream is left untouched.
//
// It never sends CreateOrUpdate: several hubs starting at once on a fresh
// cluster each send a create, one wins, the others get "already in use",
// bind and compare (an update is sent only for a real difference).
// CreateOrUpdate's update-first requests racing on a new replicated stream
// hung most of the callers on a cluster (issue 25). Transient cluster
// answers (no meta leader yet, no peers yet, a request timeout) are tried
// again every 250 ms until ctx ends.
func EnsureStream(ctx context.Context, j js.JetStream, want js.StreamConfig) (Change, error) {
	var ch Change
	err := retryTransient(ctx, func(actx context.Context) error {
		var err error
		ch, err = ensureStreamOnce(actx, j, want)
		return err
	})
	return ch, err
}

func ensureStreamOnce(ctx context.Context, j js.JetStream, want js.StreamConfig) (Change, error) {
	s, err := j.Stream(ctx, want.Name)
	if errors.Is(err, js.ErrStreamNotFound) {
		_, err = j.CreateStream(ctx, want)
		if err == nil {
			return Created, nil
		}
		if !errors.Is(err, js.ErrStreamNameAlreadyInUse) {
			return "", fmt.Errorf("create stream %s: %w", want.Name, err)
		}
		// Another hub created it in between: bind and compare.
		s, err = j.Stream(ctx, want.Name)
	}
	if err != nil {
		return "", fmt.Errorf("look up stream %s: %w", want.Name, err)
	}
	have := s.CachedInfo().Config
	diff := differingFields(have, want)
	if len(diff) == 0 {
		return Unchanged, nil
	}
	var refused []string
	for _, f := range diff {
		if immutableFields[f] {
			refused = append(refused, fmt.Sprintf("%s (%v → %v)", f, field(have, f), field(want, f)))
		}
	}
	// A lower MaxBytes than the stream holds makes JetStream drop its
	// oldest messages (dead letters, evidence): refused, never done.
	if held := s.CachedInfo().State.Bytes; want.MaxBytes > 0 && want.MaxBytes < have.MaxBytes && uint64(want.MaxBytes) < held {
		refused = append(refused, fmt.Sprintf("MaxBytes (%d → %d, below the %d bytes it holds: JetStream would drop its oldest messages; raise the setting or drain the stream first)", have.MaxBytes, want.MaxBytes, held))
	}
	if len(refused) > 0 {
		return "", permanent(fmt.Errorf("stream %s: cannot change %s on the existing stream; keep the old setting in the config, or back up and delete the stream to re-create it",
			want.Name, strings.Join(refused, ", ")))
	}
	next := have
	for _, f := range diff {
		reflect.ValueOf(&next).Elem().FieldByName(f).Set(reflect.ValueOf(want).FieldByName(f))
	}
	if _, err := j.UpdateStream(ctx, next); err != nil {
		return "", fmt.Errorf("stream %s: JetStream refused to change %s: %w", want.Name, strings.Join(diff, ", "), err)
	}
	return Updated, nil
}

func field(c js.StreamConfig, name string) any {
	return reflect.ValueOf(c).FieldByName(name).Interface()
}

// differingFields lists the managed fields where want differs from have.
// Zero values in want mean "server default" and are not compared, except for
// booleans, which the hub always states.
func differingFields(have, want js.StreamConfig) []string {
	var out []string
	for _, f := range managedFields {
		w := reflect.ValueOf(want).FieldByName(f)
		h := reflect.ValueOf(have).FieldByName(f)
		if w.Kind() != reflect.Bool && w.IsZero() {
			continue
		}
		if !reflect.DeepEqual(w.Interface(), h.Interface()) {
			out = append(out, f)
		}
	}
	return out
}
