package jetstreamtest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func TestServerStoresAndRestartsOnSameData(t *testing.T) {
	s := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, s.URL)
	ctx := context.Background()
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: js.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Publish(ctx, "t.a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	s.Stop()

	s2 := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: s.DataDir})
	_, j2 := jetstreamtest.Connect(t, s2.URL)
	jetstreamtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		st, err := j2.Stream(ctx, "T")
		if err != nil {
			return err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if info.State.Msgs != 1 {
			return errors.New("message not recovered")
		}
		return nil
	})
}

func TestCheckForFailsWithLastError(t *testing.T) {
	ft := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		jetstreamtest.CheckFor(ft, 30*time.Millisecond, 5*time.Millisecond, func() error { return errors.New("still red") })
	}()
	<-done
	if ft.msg != "not within 30ms: still red" {
		t.Fatalf("message %q", ft.msg)
	}
}

// fakeTB records Fatalf instead of failing the real test.
type fakeTB struct {
	testing.TB
	msg string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}
