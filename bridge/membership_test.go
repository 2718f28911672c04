package bridge

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// The derived id names the host and the folder: the same folder gives the
// same id (a restart is the same member), another folder another; a set
// id is kept; no folder, or "none", is dynamic membership.
func TestDefaultInstanceIDNamesTheFolder(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	id := func(set, dataDir string) string {
		c := &Config{GroupInstanceID: set}
		c.DefaultInstanceID(dataDir)
		return c.instanceID("in")
	}
	a, b := id("", dir), id("", dir)
	if a == "" || a != b || !consumerRE.MatchString(a) {
		t.Fatalf("derived ids %q and %q: want one valid id for one folder", a, b)
	}
	if c := id("", other); c == a {
		t.Fatalf("two folders share the id %q", c)
	}
	if got := id("host-1", dir); got != "host-1-in" {
		t.Fatalf("a set id became %q", got)
	}
	if got := id("", ""); got != "" {
		t.Fatalf("no folder: %q, want dynamic membership", got)
	}
	if got := id(NoInstanceID, dir); got != "" {
		t.Fatalf(`"none": %q, want dynamic membership`, got)
	}
	c := &Config{}
	c.setDefaults()
	if c.SessionTimeout != 6*time.Second || c.HeartbeatInterval != 2*time.Second {
		t.Fatalf("defaults: session %v, heartbeat %v; want 6s and 2s", c.SessionTimeout, c.HeartbeatInterval)
	}
}

// A bridge restarted on the same folder, with no group_instance_id set,
// is the same static member: it takes its partitions back well inside
// the dead member's session instead of after it (the session is set long
// here so that only static membership can make it on a loaded machine).
func TestDerivedInstanceIDResumesAtOnce(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	restartResumesAtOnce(t, func(cfg *Config) { cfg.DefaultInstanceID(dataDir) })
}

// restartResumesAtOnce: a bridge dies without leaving the group (its
// LeaveGroup is lost, as after a kill -9) and is started again with the
// same configuration, its group instance set by instance; it consumes
// again within 10 s, well inside the dead member's 20 s session: only
// static membership can make that.
func restartResumesAtOnce(t *testing.T, instance func(*Config)) {
	h := startNATS(t, 0)
	kc, brokers := startKafka(t, "partners.in")
	newCfg := func() *Config {
		cfg := testConfig(brokers)
		instance(cfg)
		cfg.SessionTimeout = 20 * time.Second
		cfg.HeartbeatInterval = time.Second
		cfg.Inbound = []InRoute{{Topic: "partners.in"}}
		return cfg
	}
	cl := kafkaClient(t, brokers)
	a := startBridge(t, h, newCfg(), nil)
	produce(t, cl, &kgo.Record{Topic: "partners.in", Key: []byte("ACME"), Value: []byte("1")})
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return h.count(t, "INGEST") == 1 }, "first bridge consumes")
	kc.ControlKey(kmsg.LeaveGroup.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		return nil, errors.New("the member died before its leave arrived"), true
	})
	a.stop(t)

	b := startBridge(t, h, newCfg(), nil)
	var recs []*kgo.Record
	for i := range 9 {
		recs = append(recs, &kgo.Record{Topic: "partners.in", Key: []byte(partners[i%3]), Value: []byte(valueOf(i))})
	}
	produce(t, cl, recs...)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return h.count(t, "INGEST") == 10 }, "the restarted bridge consumes before the old session ends")
	b.stop(t)
}
