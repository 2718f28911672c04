package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// --replicas 3: the parse bench on three embedded nodes in one cluster
// drains every interchange on every side (one output stored in PARSED per
// interchange, none not ok), every stream and bucket at R3, and says so.
// A rate is not asserted: the machine may be busy.
func TestParseBenchOnThreeNodes(t *testing.T) {
	defer func(s []string) { parseSides = s }(parseSides)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var progress, log bytes.Buffer
	const n = 100
	got, err := Bench(ctx, &BenchOptions{Stage: "parse", Replicas: 3, Classes: "1k", Messages: n, Rounds: 1, Partitions: 2, Partners: 4,
		Sides: "plain,ledger", Progress: &progress, Log: &log, Getenv: func(string) string { return "" }})
	t.Logf("progress:\n%s", progress.String())
	if err != nil && !errors.Is(err, ErrTargetMissed) { // a busy machine may miss the ratio; the drain is what is asserted
		t.Fatalf("bench: %v\nlog:\n%s", err, log.String())
	}
	rep, ok := got.(*ParseBenchReport)
	if !ok {
		t.Fatalf("report %T", got)
	}
	if rep.Replicas != 3 {
		t.Errorf("report says %d replicas, want 3", rep.Replicas)
	}
	if !strings.Contains(progress.String(), "3 embedded NATS nodes in one cluster, every stream and bucket R3") {
		t.Errorf("the progress lines do not say the cluster")
	}
	if len(rep.Classes) != 1 {
		t.Fatalf("%d classes, want 1", len(rep.Classes))
	}
	cr := rep.Classes[0]
	for _, name := range []string{"INGEST", "PARSED", "KV_edihub-ledger", "KV_edihub-attempts"} {
		if cr.StreamReplicas[name] != 3 {
			t.Errorf("stream %s: %d replicas, want 3 (all: %v)", name, cr.StreamReplicas[name], cr.StreamReplicas)
		}
	}
	for _, side := range []string{"plain", "ledger"} {
		sr := cr.Sides[side]
		if sr == nil || len(sr.MsgsPerSec) != 1 || sr.MsgsPerSec[0] <= 0 {
			t.Fatalf("%s: no drain measured: %+v", side, sr)
		}
		if len(sr.OutputsStored) != 1 || sr.OutputsStored[0] != n {
			t.Errorf("%s: PARSED stored %v outputs, want [%d]", side, sr.OutputsStored, n)
		}
		if sr.NonOK != 0 {
			t.Errorf("%s: %d interchanges not ok", side, sr.NonOK)
		}
	}
}

// --replicas takes 1 or 3, and 3 only with the parse stage.
func TestBenchReplicasAreChecked(t *testing.T) {
	for _, o := range []BenchOptions{
		{Stage: "parse", Replicas: 2},
		{Stage: "parse", Replicas: 5},
		{Stage: "noop", Replicas: 3},
	} {
		if _, err := Bench(context.Background(), &o); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "--replicas") {
			t.Errorf("%+v: %v, want a refusal naming --replicas", o, err)
		}
	}
}
