package hub

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A producer's x-kafka-* headers become x-producer-x-kafka-* on the way in
// (so a parsed output cannot carry another partner's Kafka key or origin
// to the bridge), unless the bridge signed them for the partner of the
// subject they were stored under.
func TestKafkaHeadersAreTheBridgesOnly(t *testing.T) {
	k := copyKeyring(t)
	url := jetstreamtest.StartServer(t, nil).URL
	carry := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		m.Emit(wire.ParsedSubject(m.Partner, "TEST"), m.CarriedHeaders(), m.Data)
		return nil
	}}
	env := startHub(t, url, "", fastConfig(), []Stage{carry}, func(o *Options) { o.Keyring = k })
	kafka := func(signFor string) nats.Header {
		h := nats.Header{}
		h.Set(wire.HdrKafkaKey, "GLOBEX")
		h.Set(wire.HdrKafkaTopic, "globex.in")
		h.Set(wire.HdrKafkaOffset, "7")
		if signFor != "" {
			wire.SignKafkaOrigin(k, signFor, h)
		}
		return h
	}
	jetstreamtest.PublishIngest(t, env.js, "ACME", "forged", kafka(""))
	jetstreamtest.PublishIngest(t, env.js, "ACME", "signed for GLOBEX", kafka("GLOBEX"))
	jetstreamtest.PublishIngest(t, env.js, "ACME", "signed for ACME", kafka("ACME"))
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 3 }, "3 outputs")
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "PARSED") {
		signed := string(m.Data) == "signed for ACME"
		if got := m.Header.Get(wire.HdrKafkaKey) != "" && m.Header.Get(wire.HdrKafkaMAC) != ""; got != signed {
			t.Errorf("%q: x-kafka-* kept %v, want %v: %v", m.Data, got, signed, m.Header)
		}
		if !signed && (m.Header.Get("x-producer-x-kafka-key") != "GLOBEX" || m.Header.Get(wire.HdrKafkaTopic) != "") {
			t.Errorf("%q: the producer's x-kafka-* not kept aside: %v", m.Data, m.Header)
		}
	}
}
