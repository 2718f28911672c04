package bridge

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The dedupe id of an inbound record must name that record and no other
// for the length of the server's duplicate window. topic/partition/offset
// alone repeats when a topic is deleted and re-created (offsets restart at
// 0) or when two clusters have a topic of the same name, and the server
// would then drop a new record as a duplicate of an old one. So the id
// also carries the cluster id and the topic id (Kafka 2.8 and later; a
// broker without topic ids leaves that part empty):
//
//	kafka:<cluster>:<topic id>:<topic>/<partition>/<offset>
//
// The ids are looked up when the route first sees a partition and again
// whenever a partition's offsets go backwards, which is what a re-created
// topic looks like to a consumer.
type topicIdentity struct {
	prefix string          // "<cluster>:<topic id>", "" until known
	last   map[int32]int64 // last offset seen per partition
}

// refresh makes sure prefix names the topic the records come from.
func (ti *topicIdentity) refresh(ctx context.Context, adm *kadm.Client, topic string, recs []*kgo.Record) (changed bool, err error) {
	need := ti.prefix == ""
	for _, r := range recs {
		if last, ok := ti.last[r.Partition]; !ok || r.Offset <= last {
			need = true
			break
		}
	}
	if need {
		if adm == nil {
			return false, errors.New("no Kafka admin client")
		}
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return false, fmt.Errorf("look up the id of topic %s: %w", topic, err)
		}
		td, ok := md.Topics[topic]
		if !ok {
			return false, fmt.Errorf("topic %s: not in the metadata", topic)
		}
		if td.Err != nil {
			return false, fmt.Errorf("topic %s: %w", topic, td.Err)
		}
		p := idToken(md.Cluster) + ":"
		if td.ID != (kadm.TopicID{}) {
			p += base64.RawURLEncoding.EncodeToString(td.ID[:])
		}
		changed = ti.prefix != "" && ti.prefix != p
		ti.prefix = p
	}
	if ti.last == nil {
		ti.last = map[int32]int64{}
	}
	for _, r := range recs {
		ti.last[r.Partition] = r.Offset
	}
	return changed, nil
}

// recordID is the Nats-Msg-Id of rec (suffix "" or ":poison").
func (ti *topicIdentity) recordID(rec *kgo.Record, suffix string) string {
	return fmt.Sprintf("kafka:%s:%s/%d/%d%s", ti.prefix, rec.Topic, rec.Partition, rec.Offset, suffix)
}

// idToken keeps a cluster id (free text to Kafka) legal in a header value.
func idToken(s string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r >= 0x7f || r == ':' {
			return '_'
		}
		return r
	}, s)
}
