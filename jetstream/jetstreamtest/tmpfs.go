package jetstreamtest

import (
	"os"
	"syscall"
	"testing"
)

// Tmpfs mounts a kernel tmpfs of size bytes on a new temporary folder and
// unmounts it when the test ends: a small disk of its own, which the test
// may fill. It skips the test where mounting is not allowed (not root).
func Tmpfs(tb testing.TB, size string) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "edihub-tmpfs-")
	if err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		_ = os.Remove(dir)
		tb.Skipf("cannot mount a tmpfs (%v): this test needs root", err)
	}
	tb.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			tb.Errorf("unmount %s: %v", dir, err)
		}
		_ = os.Remove(dir)
	})
	return dir
}
