package jetstream

import (
	"fmt"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
)

// Sharing is how instances of an application share a stream's
// partitions on a NATS cluster (edihub's hub.cluster section): the
// replicas of the streams it provisions and the pinned priority group of
// each partition's consumer.
type Sharing struct {
	// Replicas of every stream the hub provisions; serve copies it from
	// nats.replicas (1 on one server, 3 on a cluster).
	Replicas int `yaml:"-"`
	// Pinned makes each partition's consumer a priority group with a
	// pinned client: several instances pull, the server delivers to one
	// of them at a time and moves the pin when that one stops pulling.
	// Needs nats-server 2.11 or newer. serve turns it on with nats.replicas
	// above 1.
	Pinned *bool `yaml:"pinned"`
	// PinnedTTL is how long the server keeps a pin on an instance that has
	// stopped pulling (died); the partition moves after that, and its
	// message in flight after attempts.ack_wait.
	PinnedTTL time.Duration `yaml:"pinned_ttl"`
}

// SetDefaults fills every unset field with its default.
func (c *Sharing) SetDefaults() {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.PinnedTTL == 0 {
		c.PinnedTTL = 5 * time.Second
	}
}

// OutputTimeout bounds the wait for the acks of an interchange's outputs.
// On a replicated cluster an ack that has not come in 10 s was most likely
// lost with a stream leader that died; publishing again is safe (the
// dedupe ids drop what was stored) and holds the partition up a third as
// long as the single-server 30 s.
func (c Sharing) OutputTimeout() time.Duration {
	if c.Replicas > 1 {
		return 10 * time.Second
	}
	return 30 * time.Second
}

// IsPinned reports whether partitions are owned through pinned clients.
func (c Sharing) IsPinned() bool { return c.Pinned != nil && *c.Pinned }

// Validate reports every setting that cannot work.
func (c *Sharing) Validate() []error {
	var errs []error
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("replicas: %d, want 1..5", c.Replicas))
	}
	if c.IsPinned() && c.PinnedTTL < time.Second {
		errs = append(errs, fmt.Errorf("cluster.pinned_ttl: %v, want at least 1s (the client pulls every few seconds)", c.PinnedTTL))
	}
	return errs
}

// Pin sets the consumer's priority group when partitions are pinned.
func (c Sharing) Pin(cc *js.ConsumerConfig, group string) {
	if !c.IsPinned() {
		return
	}
	cc.PriorityPolicy = js.PriorityPolicyPinned
	cc.PriorityGroups = []string{group}
	cc.PinnedTTL = c.PinnedTTL
}

// PullOptions are the pull options o of a partition's consumer; pinned
// consumers need the group named on every pull.
func (c Sharing) PullOptions(group string, o ...js.PullMessagesOpt) []js.PullMessagesOpt {
	if c.IsPinned() {
		o = append(o, js.PullPriorityGroup(group))
	}
	return o
}
