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
//
// A slot also says how many solo runs of its message ended with an outcome
// the attempt store refused (a full disk, no quorum): SetUnstored. Those
// runs did not end with the process dying, so the next start must not
// charge them as deaths; unlike the running word, this survives a clean
// stop too, until the hub stores the outcomes or the slot moves on.
type InFlight struct {
	f      *os.File
	data   []byte
	slots  int
	closed atomic.Bool
}

const (
	inflightMagic   = 0x65646968_75620002 // "edihub" v2
	inflightMagicV1 = 0x65646968_75620001 // v1: 16-byte slots, the running sequence only
	// A slot is three words: the stream sequence running (0: none), the
	// stream sequence with outcomes not stored, and how many of its solo
	// runs those are.
	slotSize   = 24
	slotSizeV1 = 16
	headerSize = 16 // magic, slot count
)

// Suspect is a message that was running when the last process died.
type Suspect struct {
	Slot int
	Seq  uint64
}

// OpenInFlight maps path with room for slots workers and returns the
// suspects the last process left behind (none after a clean stop, or when
// the slot count changed). The running words are cleared for this process;
// the unstored outcomes are kept (see SetUnstored).
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
	magic, same := binary.LittleEndian.Uint64(data[0:8]), int(binary.LittleEndian.Uint64(data[8:16])) == slots
	switch {
	case magic == inflightMagic && same:
		for i := 0; i < slots; i++ {
			if seq := t.word(i, 0).Swap(0); seq != 0 {
				suspects = append(suspects, Suspect{Slot: i, Seq: seq})
			}
		}
	case magic == inflightMagicV1 && same: // written by the release before: running words only
		for i := 0; i < slots; i++ {
			if seq := binary.LittleEndian.Uint64(data[headerSize+i*slotSizeV1:]); seq != 0 {
				suspects = append(suspects, Suspect{Slot: i, Seq: seq})
			}
		}
		clear(data)
	default:
		clear(data)
	}
	binary.LittleEndian.PutUint64(data[0:8], inflightMagic)
	binary.LittleEndian.PutUint64(data[8:16], uint64(slots))
	return t, suspects, nil
}

// word is the slot's i-th word (0 running, 1 unstored sequence, 2 unstored
// solo runs).
func (t *InFlight) word(slot, i int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&t.data[headerSize+slot*slotSize+i*8]))
}

func (t *InFlight) seqWord(slot int) *atomic.Uint64 { return t.word(slot, 0) }

// SetUnstored records that soloRuns solo runs of the message seq in slot
// ended with an outcome the attempt store refused; soloRuns 0 (or seq 0)
// clears it. The sequence is written last when set and first when
// cleared, so that a death between the two writes leaves no count under a
// wrong message.
func (t *InFlight) SetUnstored(slot int, seq uint64, soloRuns int) {
	if t.closed.Load() {
		return
	}
	if seq == 0 || soloRuns <= 0 {
		t.word(slot, 1).Store(0)
		t.word(slot, 2).Store(0)
		return
	}
	if t.word(slot, 1).Load() != seq {
		t.word(slot, 1).Store(0)
	}
	t.word(slot, 2).Store(uint64(soloRuns))
	t.word(slot, 1).Store(seq)
}

// Unstored returns what SetUnstored last recorded for slot (this process
// or the one before): the message and how many of its solo runs' outcomes
// are not in the store.
func (t *InFlight) Unstored(slot int) (seq uint64, soloRuns int) {
	if t.closed.Load() {
		return 0, 0
	}
	seq = t.word(slot, 1).Load()
	if seq == 0 {
		return 0, 0
	}
	return seq, int(t.word(slot, 2).Load())
}

// FindUnstored returns the slot whose unstored count is for seq, and the
// count (-1, 0: none). A message may run on any worker's slot of its
// partition, so its count is looked up by message, not by slot.
func (t *InFlight) FindUnstored(seq uint64) (slot, soloRuns int) {
	if seq == 0 || t.closed.Load() {
		return -1, 0
	}
	for i := 0; i < t.slots; i++ {
		if t.word(i, 1).Load() == seq {
			return i, int(t.word(i, 2).Load())
		}
	}
	return -1, 0
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

// Close clears the running words (a clean stop leaves no suspects; the
// unstored outcomes stay, still not stored) and closes its file. The page stays mapped until the process ends: a handler abandoned
// past its deadline may still finish after the stop and call Done, which
// must not touch unmapped memory (it did: a fault at exit).
func (t *InFlight) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	for i := 0; i < t.slots; i++ {
		t.seqWord(i).Store(0)
	}
	return t.f.Close()
}
