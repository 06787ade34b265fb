package dsmprog

import (
	"testing"

	"github.com/hwcoll/hwcoll/dsm"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var kernelNames = []string{"false-sharing", "producer-consumer", "lock-contention", "migratory", "random"}

func TestKernelsVerify(t *testing.T) {
	for _, name := range kernelNames {
		for _, procs := range testProcs {
			for _, lw := range []int{1, 4, 8} {
				prog, err := New(name, 0, 5)
				require.NoError(t, err)
				_, refs, err := dsm.Functional(prog, procs, lw)
				require.NoError(t, err, "%s on %d processors, %d-word lines", name, procs, lw)
				require.NotZero(t, refs)
			}
		}
	}
}

// Each kernel's Verify catches one word of its answer changed.
func TestKernelsVerifyCatchesCorruption(t *testing.T) {
	for _, name := range kernelNames {
		prog, err := New(name, 0, 5)
		require.NoError(t, err)
		mem, _, err := dsm.Functional(prog, 4, 8)
		require.NoError(t, err)
		var target dsm.Addr
		switch k := prog.(type) {
		case *FalseSharing:
			target = k.base + 2
		case *ProducerConsumer:
			target = k.record(3, 7) + 1
		case *LockContention:
			target = k.counter
		case *Migratory:
			target = k.record
		case *Random:
			target = k.base + 1 // a fetch-and-add word
		}
		mem[target]++
		require.Error(t, prog.Verify(func(a dsm.Addr) uint64 { return mem[a] }), name)
		mem[target]--
		require.NoError(t, prog.Verify(func(a dsm.Addr) uint64 { return mem[a] }), name)
	}
	// A data word of random holding a value nobody wrote there.
	prog := &Random{Refs: 50, Seed: 9}
	mem, _, err := dsm.Functional(prog, 3, 4)
	require.NoError(t, err)
	mem[prog.base] = 1<<32 | 100 // processor 0's op 99: beyond its 50 draws
	require.Error(t, prog.Verify(func(a dsm.Addr) uint64 { return mem[a] }))
}

// The random kernel verifies for any seed, size, processor count and line.
func TestRandomKernelProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prog := &Random{
			Refs: rapid.IntRange(1, 300).Draw(t, "refs"),
			Seed: rapid.Uint64().Draw(t, "seed"),
		}
		procs := rapid.IntRange(1, 12).Draw(t, "procs")
		lw := rapid.IntRange(1, 16).Draw(t, "lineWords")
		_, _, err := dsm.Functional(prog, procs, lw)
		require.NoError(t, err)
	})
}
