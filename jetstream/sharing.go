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

// OutputTimeout bounds the wait for the acks of an interchange's outputs
// and its ledger records, all tries together (OutputAttempt). After it
// the message is handed back (nak) and tried again later: on one server
// a publish unanswered for 30 s means the server is gone; on a
// replicated cluster, 10 s covers a stream's election several times over.
func (c Sharing) OutputTimeout() time.Duration {
	if c.Replicas > 1 {
		return 10 * time.Second
	}
	return 30 * time.Second
}

// OutputAttempt bounds one try of that wait on a replicated cluster
// (jetstream.Retry): a publish sent while a stream elects a leader is never
// answered, and is sent again under the same dedupe id after this long,
// so the partition resumes within OutputAttempt of the new leader instead
// of after the whole OutputTimeout. 1 s is several hundred times an R3
// ack on an idle machine and still well above one on a loaded 2-core
// one; a try that was only slow costs a second publish the dedupe id
// drops. One server elects no leaders: 0, one try for the whole timeout.
func (c Sharing) OutputAttempt() time.Duration {
	if c.Replicas > 1 {
		return OutputAttempt
	}
	return 0
}

// OutputAttempt is Sharing.OutputAttempt on a replicated cluster; serve
// gives the ledger's commits and the attempt store's calls the same tries.
const OutputAttempt = time.Second

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
