package app

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the exclusive lock a serve holds on its data folder.
const LockFile = "edihub.lock"

// dataLock is an flock(2) on <data>/edihub.lock with the holder's pid in
// it. The kernel drops it when the process dies, however it dies, so a
// crash never leaves a stale lock; the file itself stays.
type dataLock struct{ f *os.File }

// DataInUseError says another process holds the data folder.
type DataInUseError struct {
	dir, pid string
}

func (e *DataInUseError) Error() string {
	who := "another process"
	if e.pid != "" {
		who = "pid " + e.pid
	}
	return fmt.Sprintf("data folder %s in use by %s (another 'edihub serve'?); stop it or use another --data", e.dir, who)
}

// LockDataDir takes the data folder for this process or says, at once,
// who has it. It creates nothing but the folder and the lock file.
func LockDataDir(dir string) (io.Closer, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := io.ReadAll(io.LimitReader(f, 32))
			pid := strings.TrimSpace(string(b))
			if _, err := strconv.Atoi(pid); err != nil {
				pid = "" // being written, or not ours
			}
			return nil, &DataInUseError{dir: dir, pid: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return &dataLock{f: f}, nil
}

// Close releases the lock (closing the file drops the flock).
func (l *dataLock) Close() error { return l.f.Close() }

// checkPortFree says at once when addr (host:port) is taken, instead of
// letting a server find out later (the embedded NATS server only reports
// that it was not ready after its readiness timeout). Port 0 and -1 mean
// "any free port": nothing to check.
func checkPortFree(what, addr string) error {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, addr, err)
	}
	if p == "0" || p == "-1" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return portErr(what, addr, err)
	}
	return ln.Close()
}

// portErr names the port when the address is in use.
func portErr(what, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s %s: port in use (another edihub or another program listens there)", what, addr)
	}
	return fmt.Errorf("%s %s: %w", what, addr, err)
}
