package osmem

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestParseMode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"always [madvise] never\n", "madvise"},
		{"[always] madvise never\n", "always"},
		{"always madvise [never]\n", "never"},
		{"always madvise never\n", ""},
		{"", ""},
	} {
		require.Equal(t, c.want, parseMode([]byte(c.in)), "%q", c.in)
	}
}

// smaps returns the VmFlags and AnonHugePages (kB) of the mapping that
// holds addr.
func smaps(t *testing.T, addr uintptr) (flags string, hugeKB uint64) {
	b, err := os.ReadFile("/proc/self/smaps")
	require.NoError(t, err)
	in := false
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := bytes.Cut(f[0], []byte("-")); ok && len(f) >= 5 && !bytes.HasSuffix(f[0], []byte(":")) {
			a, err1 := strconv.ParseUint(string(lo), 16, 64)
			z, err2 := strconv.ParseUint(string(hi), 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < z
			continue
		}
		if !in {
			continue
		}
		switch string(f[0]) {
		case "AnonHugePages:":
			hugeKB, err = strconv.ParseUint(string(f[1]), 10, 64)
			require.NoError(t, err)
		case "VmFlags:":
			return string(bytes.Join(f[1:], []byte(" "))), hugeKB
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return "", 0
}

// On a "madvise" kernel the reserved range is marked (VmFlags hg) and what
// the heap puts there afterwards is faulted in as huge pages; on any
// other, Reserve does nothing.
func TestReserveGivesTheNextAllocationsHugePages(t *testing.T) {
	const n = 64 << 20
	a, err := Reserve(n)
	require.NoError(t, err)
	require.Equal(t, THPMode(), a.Mode)
	if a.Mode != "madvise" {
		require.Zero(t, a.Advised, "mode %q needs no advice", a.Mode)
		return
	}
	require.GreaterOrEqual(t, a.Advised, uint64(n-2*HugePageSize))
	flags, _ := smaps(t, a.At)
	require.Contains(t, " "+flags+" ", " hg ", "the reserved range is not marked MADV_HUGEPAGE: %s", flags)

	// Small objects, as a network is made of: the first to land in the
	// range fault its 2 MiB pieces in whole.
	objs := make([]*[64]byte, 0, n/2/64)
	for range cap(objs) {
		o := new([64]byte)
		o[0] = 1
		objs = append(objs, o)
	}
	_, huge := smaps(t, a.At)
	require.GreaterOrEqual(t, huge, uint64(8<<10), "the heap filled the reserved range with %d kB of huge pages", huge)
	runtime.KeepAlive(objs)
}

func TestPeakRSSFollowsWhatIsTouched(t *testing.T) {
	require.NoError(t, ResetPeakRSS())
	p0, err := PeakRSS()
	require.NoError(t, err)
	b := make([]byte, 128<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	p1, err := PeakRSS()
	require.NoError(t, err)
	require.GreaterOrEqual(t, p1, p0+120<<20, fmt.Sprintf("peak %d -> %d after touching 128 MiB", p0, p1))
	runtime.KeepAlive(b)
}

func TestPagesAreOfTheKindAsked(t *testing.T) {
	for _, huge := range []bool{false, true} {
		mem, free, err := Pages(8<<20, huge)
		require.NoError(t, err)
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = 1
		}
		addr := uintptr(unsafe.Pointer(&mem[0]))
		flags, hugeKB := smaps(t, addr)
		flags = " " + flags + " "
		if huge {
			require.Contains(t, flags, " hg ")
			if THPMode() != "never" {
				require.Positive(t, hugeKB, "8 MiB touched on huge pages")
			}
		} else {
			require.Contains(t, flags, " nh ")
			require.Zero(t, hugeKB, "8 MiB touched on base pages")
		}
		free()
	}
}

func TestMemAvailableIsBelowTotal(t *testing.T) {
	avail, ok := MemAvailable()
	require.True(t, ok)
	total, err := procKB("/proc/meminfo", "MemTotal:")
	require.NoError(t, err)
	require.Positive(t, avail)
	require.LessOrEqual(t, avail, total)
	_, err = procKB("/proc/meminfo", "NoSuchKey:")
	require.ErrorContains(t, err, "no NoSuchKey: in /proc/meminfo")
}

var reserveSink []byte

// Reserve leaves the range virtual even in a process whose heap has held
// and freed memory before (a sweep's second network): a slice over pages
// the heap used before is zeroed by the runtime, which would make the
// whole reservation resident. The process is a fresh one (this test run
// again with OSMEM_RESERVE_CHILD set), so that what it asserts follows
// from its own steps, not from the heap the other tests left.
func TestReserveTouchesNothing(t *testing.T) {
	if os.Getenv("OSMEM_RESERVE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestReserveTouchesNothing$", "-test.v")
		cmd.Env = append(os.Environ(), "OSMEM_RESERVE_CHILD=1")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		require.NoError(t, err)
		return
	}
	b := make([]byte, 256<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	reserveSink = b
	reserveSink = nil
	runtime.GC()
	require.NoError(t, ResetPeakRSS())
	before, err := PeakRSS()
	require.NoError(t, err)
	a, err := Reserve(1 << 30)
	require.NoError(t, err)
	peak, err := PeakRSS() // what Reserve touched, even if it gave it back
	require.NoError(t, err)
	t.Logf("THP mode %q, %d bytes advised; peak resident %d → %d MB", a.Mode, a.Advised, before>>20, peak>>20)
	require.Less(t, peak, before+128<<20, "Reserve touched %d MB", (peak-min(before, peak))>>20)
}
