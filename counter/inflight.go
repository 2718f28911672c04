package counter

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// InFlight is a table of the message each worker is running, kept in a
// memory-mapped file. Writing a slot is a store to memory: no system call,
// no fsync, so the happy path stays free of I/O. The kernel owns the
// mapped pages, so what was written survives the death of the process
// (SIGKILL, OOM killer, a panic that takes the runtime down) though not a
// crash of the machine. At start the hub reads the table left behind: the
// messages that were running when the last process died are the suspects.
//
// This does not depend on JetStream's delivery count, which an embedded
// server killed with the process may not have persisted.
type InFlight struct {
	f      *os.File
	data   []byte
	slots  int
	closed atomic.Bool
}

const (
	inflightMagic = 0x65646968_75620001 // "edihub" v1
	slotSize      = 16                  // stream sequence, then a running flag
	headerSize    = 16                  // magic, slot count
)

// Suspect is a message that was running when the last process died.
type Suspect struct {
	Slot int
	Seq  uint64
}

// OpenInFlight maps path with room for slots workers and returns the
// suspects the last process left behind (none after a clean stop, or when
// the slot count changed). The table is cleared for this process.
func OpenInFlight(path string, slots int) (*InFlight, []Suspect, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open in-flight table: %w", err)
	}
	size := headerSize + slots*slotSize
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("size in-flight table: %w", err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("map in-flight table: %w", err)
	}
	t := &InFlight{f: f, data: data, slots: slots}
	var suspects []Suspect
	if binary.LittleEndian.Uint64(data[0:8]) == inflightMagic && int(binary.LittleEndian.Uint64(data[8:16])) == slots {
		for i := 0; i < slots; i++ {
			if seq := t.seqWord(i).Load(); seq != 0 {
				suspects = append(suspects, Suspect{Slot: i, Seq: seq})
			}
		}
	}
	clear(data)
	binary.LittleEndian.PutUint64(data[0:8], inflightMagic)
	binary.LittleEndian.PutUint64(data[8:16], uint64(slots))
	return t, suspects, nil
}

func (t *InFlight) seqWord(slot int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&t.data[headerSize+slot*slotSize]))
}

// Start records that slot is running the message with stream sequence seq.
func (t *InFlight) Start(slot int, seq uint64) {
	if !t.closed.Load() {
		t.seqWord(slot).Store(seq)
	}
}

// Done records that slot finished the message seq. A handler abandoned
// after its deadline finishes late, after the slot moved on to the next
// message: then the slot is left alone.
func (t *InFlight) Done(slot int, seq uint64) {
	if !t.closed.Load() {
		t.seqWord(slot).CompareAndSwap(seq, 0)
	}
}

// Close clears the table (a clean stop leaves no suspects) and closes its
// file. The page stays mapped until the process ends: a handler abandoned
// past its deadline may still finish after the stop and call Done, which
// must not touch unmapped memory (it did: a fault at exit).
func (t *InFlight) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	clear(t.data[headerSize:])
	return t.f.Close()
}
