package rtl_test

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
)

// spray sends its cycle number on a random subset of its lines each cycle.
type spray struct {
	rtl.Module
	Tx   []rtl.LineOut[uint64]
	left int
}

func (s *spray) Eval() {
	if s.left == 0 {
		s.Sleep()
		return
	}
	s.left--
	for i := range s.Tx {
		if s.Rand().IntN(3) == 0 {
			s.Tx[i].Send(s.Now())
		}
	}
}

// gather reads its lines either all of them every time, or only those the
// kernel marks ready; a sub-block owns the lines, so arrivals must wake the
// component above it.
type gather struct {
	rtl.Module
	sub   *lines
	ready *rtl.ReadySet
	log   strings.Builder
}

type lines struct {
	rtl.Module
	Rx []rtl.LineIn[uint64]
}

func (g *gather) Eval() {
	if g.ready == nil {
		for i := range g.sub.Rx {
			g.drain(i)
		}
	} else {
		for w := 0; w < g.ready.Words(); w++ {
			for m := g.ready.Word(w); m != 0; m &= m - 1 {
				g.drain(64*w + trailing(m))
			}
		}
	}
	g.Sleep()
}

func (g *gather) drain(i int) {
	for {
		v, ok := g.sub.Rx[i].Recv()
		if !ok {
			return
		}
		fmt.Fprintf(&g.log, "%d:%d:%d ", g.Now(), i, v)
	}
}

func trailing(m uint64) int {
	n := 0
	for m&1 == 0 {
		m >>= 1
		n++
	}
	return n
}

func TestReadySetSeesEveryArrival(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 130).Draw(rt, "lines")
		seed := rapid.Uint64().Draw(rt, "seed")
		lat := make([]uint64, n)
		for i := range lat {
			lat[i] = rapid.Uint64Range(1, 9).Draw(rt, "latency")
		}
		run := func(useSet bool) string {
			sim := rtl.NewSim(rtl.Options{Seed: seed})
			s := &spray{Tx: make([]rtl.LineOut[uint64], n), left: 50}
			s.Init(sim.Top(), "spray", s)
			g := &gather{}
			g.Init(sim.Top(), "gather", g)
			g.sub = &lines{Rx: make([]rtl.LineIn[uint64], n)}
			g.sub.Init(&g.Module, "rx", g.sub)
			for i := 0; i < n; i++ {
				s.Tx[i].Init(&s.Module, rtl.Idx("tx", i))
				g.sub.Rx[i].Init(&g.sub.Module, rtl.Idx("rx", i))
				rtl.ConnectLine(&s.Tx[i], &g.sub.Rx[i], lat[i])
			}
			if useSet {
				g.ready = rtl.NewReadySet(n)
				for i := range g.sub.Rx {
					g.sub.Rx[i].Notify(g.ready, i)
				}
			}
			require.NoError(rt, sim.Build())
			sim.Run(100)
			return g.log.String()
		}
		all := run(false)
		require.NotEmpty(rt, all)
		require.Equal(rt, all, run(true))
	})
}

// TestReadySetIsFourWords keeps the set at 32 bytes: the records that
// embed it (a router's, a NIC lane set's) are laid out around that size.
func TestReadySetIsFourWords(t *testing.T) {
	require.EqualValues(t, 32, unsafe.Sizeof(rtl.ReadySet{}), "ReadySet must stay 32 bytes: shrink its padding when adding a field")
}
