package rtl_test

import (
	"bytes"
	"fmt"

	"github.com/hwcoll/hwcoll/rtl"
)

// node is a test component whose every behaviour is visible: registered
// outputs, a delay line, a timer and a random stream. Its sleep claims are
// exact, so any mode of the kernel (skipping, always-eval, parallel, shuffled
// order) must produce the same history.
type node struct {
	rtl.Module
	ins    []rtl.In[uint32]
	Out    rtl.Out[uint32]
	Tx     rtl.LineOut[uint32]
	Rx     rtl.LineIn[uint32]
	state  rtl.Reg[uint32]
	seen   []rtl.Reg[uint32]
	next   rtl.Reg[uint64] // cycle of the next timed action
	period uint64
	log    *bytes.Buffer // what this node observed, cycle by cycle
}

func newNode(parent *rtl.Module, name string, nIn int, period uint64) *node {
	n := &node{period: period, log: &bytes.Buffer{}}
	n.Init(parent, name, n)
	n.ins = make([]rtl.In[uint32], nIn)
	n.seen = make([]rtl.Reg[uint32], nIn)
	for i := range n.ins {
		n.ins[i].Init(&n.Module, rtl.Idx("in", i))
		n.seen[i].Init(&n.Module, rtl.Idx("seen", i))
	}
	n.Out.Init(&n.Module, "out", rtl.Width(12))
	n.Tx.Init(&n.Module, "tx")
	n.Rx.Init(&n.Module, "rx")
	n.state.Init(&n.Module, "state")
	n.next.Init(&n.Module, "next", rtl.NoTrace()).Reset(period)
	return n
}

func mix(a, b uint32) uint32 {
	x := uint64(a)<<32 | uint64(b)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return uint32(x)
}

func (n *node) Eval() {
	now := n.Now()
	st := n.state.Q()
	for i := range n.ins {
		if v := n.ins[i].Get(); v != n.seen[i].Q() {
			n.seen[i].Set(v)
			st = mix(st, v)
			fmt.Fprintf(n.log, "%d in%d=%d\n", now, i, v)
		}
	}
	for {
		v, ok := n.Rx.Recv()
		if !ok {
			break
		}
		st = mix(st, v^0x55)
		fmt.Fprintf(n.log, "%d rx=%d\n", now, v)
	}
	if now == n.next.Q() {
		r := n.Rand().Uint32()
		st = mix(st, r)
		n.Tx.Send(st)
		n.next.Set(now + n.period)
		fmt.Fprintf(n.log, "%d act r=%d\n", now, r)
	}
	n.state.Set(st)
	n.Out.Set(st & 0xfff)
	n.SleepUntil(n.next.D())
}

type netSpec struct {
	N       int
	Edges   [][2]int // out of a, into b
	Lines   []int    // node i sends to Lines[i]
	Latency []uint64
	Period  []uint64
}

// buildNet builds the netlist of a spec in a new Sim.
func buildNet(spec netSpec, seed uint64) (*rtl.Sim, []*node) {
	s := rtl.NewSim(rtl.Options{Seed: seed})
	grp := &group{}
	grp.Init(s.Top(), "grp", grp)
	nIn := make([]int, spec.N)
	for _, e := range spec.Edges {
		nIn[e[1]]++
	}
	nodes := make([]*node, spec.N)
	for i := range nodes {
		nodes[i] = newNode(&grp.Module, rtl.Idx("n", i), nIn[i], spec.Period[i])
	}
	used := make([]int, spec.N)
	for _, e := range spec.Edges {
		rtl.Connect(&nodes[e[0]].Out, &nodes[e[1]].ins[used[e[1]]])
		used[e[1]]++
	}
	for i, n := range nodes {
		rtl.ConnectLine(&n.Tx, &nodes[spec.Lines[i]].Rx, spec.Latency[i])
		n.Out.TieOff() // not every node drives another
	}
	return s, nodes
}

type group struct{ rtl.Module }
