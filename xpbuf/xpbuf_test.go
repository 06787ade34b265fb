package xpbuf

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// owner is the output port a bank belongs to: it shows the crosspoints'
// arrivals on their probes in every cycle, as crossbar's output does.
type owner struct {
	rtl.Module
	bank *Bank
}

func (o *owner) Eval() {
	for i := range int(o.bank.n) {
		o.bank.Show(i, o.Now())
	}
}

// The bank the switch uses, against a model of one slice per crosspoint:
// entries are pushed ahead of their arrival (At = now + a delay, as the
// input writes a copy that becomes visible after the switch delay), so Len
// counts them at once and Arrived only from At; Head and Pop are FIFO per
// crosspoint; a push into a full crosspoint is an error naming it; and the
// traced occupancy and head_pkt probes show, cycle by cycle, what has
// arrived.
func TestBankModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(rt, "crosspoints") // past nearXP: the heads apart
		capacity := rapid.IntRange(1, 5).Draw(rt, "capacity")
		delay := uint64(rapid.IntRange(0, 4).Draw(rt, "delay"))
		const periodPS = 4000 // a 4 ns clock: VCD time = 4 × the cycle
		sim := rtl.NewSim(rtl.Options{PeriodPS: periodPS})
		defer sim.Close()
		o := &owner{bank: new(Bank)}
		o.Init(sim.Top(), "out", o)
		InitBank(o.bank, &o.Module, n, capacity, "xp")
		require.NoError(rt, sim.Build())
		var trace bytes.Buffer
		vw, err := sim.NewTraceWriter(&trace)
		require.NoError(rt, err)
		require.NoError(rt, sim.Trace(vw, ""))
		b := o.bank

		model := make([][]Entry, n)
		var next uint32
		arrived := func(i int, c uint64) int {
			k := 0
			for _, e := range model[i] {
				if e.At <= c {
					k++
				}
			}
			return k
		}
		want := map[string][]string{} // probe path -> the values it must show, one per cycle
		rt.Repeat(map[string]func(*rapid.T){
			"push": func(rt *rapid.T) {
				i := rapid.IntRange(0, n-1).Draw(rt, "xp")
				next++
				e := Entry{At: sim.Now() + delay, Tag: next, Slot: uint16(next)}
				err := b.Push(i, e)
				if len(model[i]) == capacity {
					require.ErrorContains(rt, err, fmt.Sprintf("top.out.xp(%d): packet (tag %#x) written to a full crosspoint", i, next))
					return
				}
				require.NoError(rt, err)
				model[i] = append(model[i], e)
			},
			"pop": func(rt *rapid.T) {
				i := rapid.IntRange(0, n-1).Draw(rt, "xp")
				if len(model[i]) == 0 {
					require.Nil(rt, b.Head(i))
					return
				}
				h := *b.Head(i)
				h.next = 0 // the bank's list link
				require.Equal(rt, model[i][0], h)
				require.Equal(rt, model[i][0], b.Pop(i))
				model[i] = model[i][1:]
			},
			"step": func(rt *rapid.T) {
				sim.Step()
				now := sim.Now() - 1 // the cycle just evaluated
				for i := range model {
					head := uint32(0)
					if arrived(i, now) > 0 {
						head = model[i][0].Tag
					}
					p := fmt.Sprintf("top.out.xp(%d).", i)
					want[p+"occupancy"] = append(want[p+"occupancy"], strconv.FormatUint(uint64(arrived(i, now)), 2))
					want[p+"head_pkt"] = append(want[p+"head_pkt"], strconv.FormatUint(uint64(head), 2))
				}
			},
			"": func(rt *rapid.T) {
				for i := range model {
					require.Equal(rt, len(model[i]), b.Len(i))
					require.LessOrEqual(rt, b.Len(i), b.Cap())
					for c := sim.Now(); c <= sim.Now()+delay+1; c++ {
						require.Equal(rt, arrived(i, c), b.Arrived(i, c), "xp %d by cycle %d", i, c)
					}
				}
			},
		})
		sim.Step()
		require.NoError(rt, sim.EndTrace())
		f, err := vcd.Parse(&trace)
		require.NoError(rt, err)
		_, period := rtl.Timescale(periodPS)
		for path, vals := range want {
			for c, v := range vals {
				// Set in cycle c, shown from the clock edge that ends it.
				got, ok := f.ValueAt(path, uint64(c+1)*period)
				require.True(rt, ok, "%s at cycle %d", path, c+1)
				require.Equal(rt, v, got, "%s after cycle %d", path, c)
			}
		}
	})
}

// The pool follows what the bank holds: it grows to at most twice the most
// packets held at once (from one crosspoint's worth) and never past every
// crosspoint full, and every crosspoint can still fill to its capacity.
func TestBankPoolFollowsOccupancy(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{})
	defer sim.Close()
	o := &owner{bank: new(Bank)}
	o.Init(sim.Top(), "out", o)
	const n, capacity = 8, 4
	InitBank(o.bank, &o.Module, n, capacity, "xp")
	require.NoError(t, sim.Build())
	b := o.bank
	// Two packets at a time, spread over the crosspoints, for a while.
	for r := range 100 {
		i, j := r%n, (r+3)%n
		require.NoError(t, b.Push(i, Entry{Tag: uint32(2 * r), Slot: 1}))
		require.NoError(t, b.Push(j, Entry{Tag: uint32(2*r + 1), Slot: 2}))
		require.Equal(t, uint32(2*r), b.Pop(i).Tag)
		require.Equal(t, uint32(2*r+1), b.Pop(j).Tag)
	}
	require.Equal(t, capacity, int(b.poolN), "two at a time fit in the first crosspoint's worth")
	// Every crosspoint full: the pool is n × capacity, and no more fits.
	for i := range n {
		for s := range capacity {
			require.NoError(t, b.Push(i, Entry{Tag: uint32(i*capacity + s)}))
		}
	}
	require.Equal(t, n*capacity, int(b.poolN))
	require.Error(t, b.Push(3, Entry{Tag: 99}))
	for i := range n {
		for s := range capacity {
			require.Equal(t, uint32(i*capacity+s), b.Pop(i).Tag, "FIFO per crosspoint")
		}
		require.Nil(t, b.Head(i))
	}
}

// A crosspoint entry is 16 bytes, four to a line, its list link in its
// padding (the first layout pass): a push or a pop touches one line of
// the pool; a crosspoint's list head is 6 bytes, a bank's first eight
// inside it (TestBankLayout). At 24 bytes an entry would straddle lines.
func TestEntryLayout(t *testing.T) {
	fix := "To fix: keep what the output reads at every send (At, Slot) and the list link in 16 bytes; " +
		"put what only the waveform reads (the probes) in Probes, which the bank keeps apart; if an " +
		"entry must grow, grow it to 32 bytes (two to a line) and update this test with the benchmark figure."
	require.Equal(t, uintptr(16), unsafe.Sizeof(Entry{}), "xpbuf.Entry is %d bytes, not 16. %s", unsafe.Sizeof(Entry{}), fix)
	require.Equal(t, uintptr(6), unsafe.Sizeof(xpFIFO{}), "xpFIFO is %d bytes, not 6. %s", unsafe.Sizeof(xpFIFO{}), fix)
}

// A bank is what a push, a pop and a look at a head read, the list heads
// of up to nearXP crosspoints among them, then the probes' pointer: 104
// bytes, so that an output port can keep its first HotBytes (90) on the
// lines a copy's arrival and a send read (crossbar TestOutPortLines).
// A bank of more crosspoints keeps their heads apart and answers the
// same (TestBankModel draws up to 12).
func TestBankLayout(t *testing.T) {
	var b Bank
	fix := "To fix: put a field that only tracing, errors or construction read after near (with pr), narrow a field, " +
		"or reorder to close padding; if the growth is measured and wanted, update this test and the output port's " +
		"layout (crossbar TestOutPortLines) with the benchmark figure."
	require.Equal(t, uintptr(104), unsafe.Sizeof(b), "xpbuf.Bank is %d bytes, not 104. %s", unsafe.Sizeof(b), fix)
	require.Equal(t, uintptr(90), HotBytes, "the hot part of xpbuf.Bank (up to the end of near) is %d bytes, not 90. %s", HotBytes, fix)
	require.Greater(t, unsafe.Offsetof(b.pr), HotBytes-1, "Bank.pr, which only the waveform reads, is at byte %d, inside the hot part. %s", unsafe.Offsetof(b.pr), fix)
}
