package jetstream_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// fill writes zeros to path until the disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
}

// A data folder on a small disk (a real tmpfs) that another file fills:
// the file store stops answering publishes, the disk watch reports a
// storage fault (what /readyz and the StorageUnavailable alert read), and
// once the file is removed the watch restarts JetStream in process: the
// same server takes writes again, with what it stored before, and the
// fault clears.
func TestFullDiskIsAStorageFaultAndWritesResumeWhenFreed(t *testing.T) {
	dir := jetstreamtest.Tmpfs(t, "48m")
	s := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: filepath.Join(dir, "data")})
	_, j := jetstreamtest.Connect(t, s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: "FILL", Subjects: []string{"fill.>"}, Storage: js.FileStorage}); err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 256<<10)
	publish := func(i int) error {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		defer pcancel()
		_, err := ejs.Publish(pctx, j, &nats.Msg{Subject: "fill.x", Data: payload}, time.Now().String())
		return err
	}
	if err := publish(0); err != nil {
		t.Fatalf("before the disk fills: %v", err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	restarted := make(chan error, 1)
	go ejs.StoreFaults.WatchDisk(wctx, dir, 200*time.Millisecond, func() { restarted <- ejs.RestartJetStream(s.Server, false) })
	hog := filepath.Join(dir, "hog")
	fill(t, hog)
	// The file store answers no publish on a full disk (the publisher
	// gets a timeout, not an error); the disk watch says why.
	if err := publish(1); err == nil {
		t.Fatal("a 256 KiB publish went through on a full disk")
	}
	jetstreamtest.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		if u, last := ejs.StoreFaults.Unavailable(time.Now()); !u || !ejs.StorageFault(errors.New(last)) {
			return errors.New("the watch did not report the full disk")
		}
		return nil
	})
	if err := os.Remove(hog); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-restarted:
		if err != nil {
			t.Fatalf("restarting JetStream in process: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the disk watch did not restart JetStream once the disk had room")
	}
	jetstreamtest.CheckFor(t, 60*time.Second, 500*time.Millisecond, func() error { return publish(2) })
	jetstreamtest.CheckFor(t, 30*time.Second, 500*time.Millisecond, func() error {
		if u, _ := ejs.StoreFaults.Unavailable(time.Now()); u {
			return errors.New("still unavailable after the disk was freed")
		}
		return nil
	})
	// What was stored before the disk filled is still there.
	if n := jetstreamtest.CountMsgs(t, j, "FILL"); n < 2 {
		t.Fatalf("FILL holds %d messages after the recovery, want the first and the last", n)
	}
}
