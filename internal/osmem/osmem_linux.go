package osmem

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"unsafe"
)

const thpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled"

// THPMode reads the kernel's transparent huge page mode: the bracketed word
// of thpEnabled ("always [madvise] never" is madvise).
func THPMode() string {
	b, err := os.ReadFile(thpEnabled)
	if err != nil {
		return ""
	}
	return parseMode(b)
}

func parseMode(b []byte) string {
	i, j := bytes.IndexByte(b, '['), bytes.IndexByte(b, ']')
	if i < 0 || j < i {
		return ""
	}
	return string(b[i+1 : j])
}

// Reserve readies n bytes of heap for huge pages before a network is built
// into them. It grows the heap by n bytes that it never touches, marks
// them MADV_HUGEPAGE and frees them: the network's allocations then land in
// that address range, and each first touch of a 2 MiB range faults in one
// huge page. Nothing is copied and nothing stays resident here. The
// advice stays with the address range when Go later returns free pages
// to the system. Only a "madvise" kernel needs this ("always" gives huge
// pages anyway, "never" none); elsewhere it does nothing.
//
// Call it before building, with the network's estimated peak: the range
// is virtual until used. Free pages the heap holds are given back to the
// system first; memory in use is left as it is.
func Reserve(n uint64) (Advice, error) {
	a := Advice{Mode: THPMode()}
	if a.Mode != "madvise" || n < HugePageSize || strictCommit() {
		return a, nil
	}
	// Virtual, but a mapping larger than the machine's memory may be
	// refused, which the runtime would not survive.
	if avail, ok := MemAvailable(); ok {
		n = min(n, avail/2)
	}
	// Give back the free pages first: in a process that had held a
	// network (a sweep, the figures, a benchmark's second run) 6 GiB
	// reserved after 2 GiB freed took 12 s and 4 GB of resident memory,
	// against 5 ms and none after this (TestReserveTouchesNothing).
	debug.FreeOSMemory()
	// In pieces, because the runtime zeroes a new object whole when any
	// heap arena it spans held objects before, and zeroing touches every
	// page: after a 32-port input-queued switch's run (a 15 MB heap), a
	// 3 GiB reservation in one slice started in such an arena and became
	// resident whole, in 5.7 s (TestReserveAfterASwitchStaysVirtual in
	// experiment). A piece is zeroed only where the heap was used; the
	// pieces after it are fresh.
	pieces := make([][]byte, 0, n/reservePiece+1)
	var lo, hi uintptr // contiguous pieces, advised as one range
	var err error
	for left := n; left > 0; {
		b := make([]byte, min(left, reservePiece))
		pieces = append(pieces, b)
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if p != hi {
			err = errors.Join(err, a.advise(lo, hi))
			lo = p
		}
		hi = p + uintptr(len(b))
		left -= uint64(len(b))
	}
	err = errors.Join(err, a.advise(lo, hi))
	runtime.KeepAlive(pieces)
	pieces = nil
	// Free the range now, while the heap is small and the collection
	// cheap: left to the pacer, the next collection would wait for the
	// heap to double past the reservation, and the network would be
	// built beyond it. The pieces that were zeroed go back to the system.
	debug.FreeOSMemory()
	return a, err
}

// reservePiece is the size of Reserve's allocations.
const reservePiece = 16 << 20

// advise marks the whole huge pages of [lo, hi) MADV_HUGEPAGE and counts
// them in a (At: the first range's start).
func (a *Advice) advise(lo, hi uintptr) error {
	beg := (lo + HugePageSize - 1) &^ (HugePageSize - 1)
	end := hi &^ (HugePageSize - 1)
	if end <= beg {
		return nil
	}
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, madvHugepage); e != 0 {
		return fmt.Errorf("osmem: madvise(MADV_HUGEPAGE) of %d bytes: %w", end-beg, e)
	}
	if a.Advised == 0 {
		a.At = beg
	}
	a.Advised += uint64(end - beg)
	return nil
}

// include/uapi/asm-generic/mman-common.h
const (
	madvHugepage   = 14 // MADV_HUGEPAGE
	madvNoHugepage = 15 // MADV_NOHUGEPAGE
)

// PeakRSS is the process's peak resident set (VmHWM) in bytes since it
// started or since the last ResetPeakRSS.
func PeakRSS() (uint64, error) { return procKB("/proc/self/status", "VmHWM:") }

// ResetPeakRSS starts PeakRSS over from the current resident set (Linux
// 4.0 on: "5" to /proc/self/clear_refs), so that a benchmark can report
// the peak of one run among several in one process.
func ResetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// Pages maps n bytes of anonymous memory outside the Go heap on pages of
// one kind: huge (MADV_HUGEPAGE; 2 MiB pages where the kernel has them to
// give) or base (MADV_NOHUGEPAGE; 4 KiB pages even where the kernel's mode
// is always). For measuring what the page size costs; free unmaps it.
func Pages(n int, huge bool) (mem []byte, free func(), err error) {
	raw, err := syscall.Mmap(-1, 0, n+HugePageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("osmem: mmap of %d bytes: %w", n, err)
	}
	off := (HugePageSize - int(uintptr(unsafe.Pointer(&raw[0])))%HugePageSize) % HugePageSize
	mem = raw[off : off+n : off+n]
	advice := madvNoHugepage
	if huge {
		advice = madvHugepage
	}
	if err := syscall.Madvise(mem, advice); err != nil {
		syscall.Munmap(raw)
		return nil, nil, fmt.Errorf("osmem: madvise of %d bytes: %w", n, err)
	}
	return mem, func() { syscall.Munmap(raw) }, nil
}

// strictCommit says whether the kernel charges address space as it is
// mapped (vm.overcommit_memory 2): a reservation would then take from what
// the run may use.
func strictCommit() bool {
	b, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && bytes.Equal(bytes.TrimSpace(b), []byte("2"))
}

// MemAvailable is the kernel's estimate of the memory available to new
// work (MemAvailable in /proc/meminfo); false when it does not say.
func MemAvailable() (uint64, bool) {
	n, err := procKB("/proc/meminfo", "MemAvailable:")
	return n, err == nil
}

// procKB reads the line "key N kB" of a /proc file, in bytes.
func procKB(path, key string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte(key)); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("osmem: no %s in %s", key, path)
}
