package hub

import (
	"encoding/json"
	"time"

	"github.com/edihub/edihub/wire"
)

// emit announces ev (wire.Event) about d on its event subject.
func (h *Hub) emit(d *delivery, ev wire.Event) {
	ev.At = time.Now().UTC()
	ev.Stream, ev.Seq, ev.Partner, ev.Partition = d.origStream, d.origSeq, d.partner, d.partition
	ev.Delivered = d.meta.NumDelivered
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	_ = h.nc.Publish(wire.EventSubject(ev.Kind), b) // best effort: the streams are the record
}
