package bridge

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// A second bridge on the same registry (a restart in one process) shares
// the first one's series instead of failing to register.
func TestMetricsShareARegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	m1, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m1.records.WithLabelValues("in", "r").Add(2)
	m2.records.WithLabelValues("in", "r").Add(3)
	if v, _ := metricValue(t, reg, "edihub_bridge_records_total", "route", "r"); v != 5 {
		t.Fatalf("records_total %v, want 5", v)
	}
	if _, err := newMetrics(nil); err != nil {
		t.Fatalf("nil registerer: %v", err)
	}
}
