package jetstreamtest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricSum sums a counter or gauge metric across its labels.
func MetricSum(tb testing.TB, reg prometheus.Gatherer, name string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			}
			if g := m.GetGauge(); g != nil {
				sum += g.GetValue()
			}
		}
	}
	return sum
}
