package scenario

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
	"github.com/hwcoll/hwcoll/tree"
	"github.com/hwcoll/hwcoll/vcd"
)

// treeAllreduce is a BlueGene/L collective tree of 7 compute nodes (two
// levels below the root) and its I/O node: every compute node enters an
// int64 sum allreduce of 3 tree packets at a cycle drawn from the seed,
// while every compute node also sends point-to-point packets to the I/O
// node on the system VC. The waveform opens on the root's ALU: alu_state
// (0 idle, 1 waiting for its sources, 2 combining), alu_op (the header's
// opcode: 5 = uadd), the first word of each source's operand (alu_in a(q),
// q the port: 0 client, 2 and 3 the children) and of the result (alu_out),
// then the class routes (Src<<4 | Dst per class) and every VC's occupancy
// and credits. Every cycle the harness checks credit conservation per link
// and VC; at the end, every node's result against the functional fold, and
// that no result arrived before the last node entered.
func treeAllreduce(p Params) (*tb.Harness, error) {
	sim := rtl.NewSim(rtl.Options{Seed: p.Seed})
	if p.PeriodPS != 0 {
		sim.SetPeriodPS(p.PeriodPS)
	}
	s, err := tree.NewShape(7, true)
	if err != nil {
		return nil, err
	}
	net, err := tree.New(sim.Top(), "net", s, tree.Params{Cycles: 16, Delay: 3, BufPackets: 2, LinkDelay: 2})
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x7ee))
	skews := make([]uint64, s.N)
	for i := range skews {
		skews[i] = rng.Uint64N(120)
	}
	data := rng.Uint64()
	coll, err := tree.NewCollective(net, tree.Allreduce, alu.Spec{Op: alu.Sum, Type: alu.Int64}, 96,
		func(node, e int) uint64 { return (data ^ uint64(node)<<20 ^ uint64(e)) % 1000 },
		func(i int) uint64 { return skews[i] })
	if err != nil {
		return nil, err
	}
	io, err := traffic.NewProcess("bernoulli", 0.02)
	if err != nil {
		return nil, err
	}
	for i := range s.N {
		c := net.Clients[i]
		c.Proc, c.IODst, c.IOStop = io, s.IONode(i), 200
	}
	ioDone := func() bool { // every I/O packet born has arrived
		var sent uint64
		for i := range s.N {
			sent += net.Clients[i].IOSent + uint64(net.Clients[i].Queued())
		}
		return sim.Now() >= 200 && net.Clients[s.N].Received[tree.VCSys] == sent
	}
	return &tb.Harness{
		Sim:      sim,
		Done:     func() bool { return coll.Done() && ioDone() },
		Monitors: []tb.Monitor{{Name: "credit conservation per link and VC", Check: net.CheckCredits}},
		Check: func() error {
			if err := coll.Err(); err != nil {
				return err
			}
			if coll.Early() > 0 {
				return fmt.Errorf("%d results arrived before the last node entered", coll.Early())
			}
			if net.Errors() > 0 {
				return fmt.Errorf("%d combines or routes went wrong", net.Errors())
			}
			return nil
		},
		Status: func() string { return fmt.Sprintf("allreduce of %d packets not complete", coll.Packets()) },
		Report: func(r *tb.Report) {
			for _, c := range net.Clients {
				r.PacketsInjected += uint64(c.Tx.Sent())
				r.PacketsDelivered += c.Received[tree.VCColl] + c.Received[tree.VCSys]
			}
		},
		Groups: treeGroups,
	}, nil
}

// treeGroups opens the waveform on the root's ALU, then one collapsed
// group per router with its client.
func treeGroups(sigs []rtl.TracedSignal) []vcd.Group {
	used := make([]bool, len(sigs))
	sig := func(s rtl.TracedSignal) vcd.Signal {
		return vcd.Signal{Name: s.Path, Width: s.Width, Kind: s.Kind, Alias: strings.ReplaceAll(strings.TrimPrefix(s.Path, "top.net."), ".", "/")}
	}
	pick := func(name string, collapsed bool, match func(s rtl.TracedSignal) bool) []vcd.Group {
		g := vcd.Group{Name: name, Collapsed: collapsed}
		for j, s := range sigs {
			if !used[j] && match(s) {
				used[j] = true
				g.Signals = append(g.Signals, sig(s))
			}
		}
		if len(g.Signals) == 0 {
			return nil
		}
		return []vcd.Group{g}
	}
	root := "top.net.r(0)"
	out := pick("r(0) ALU", false, func(s rtl.TracedSignal) bool {
		return strings.HasPrefix(s.Path, root+".alu")
	})
	for i := 0; ; i++ {
		r, c := rtl.Idx("top.net.r", i), rtl.Idx("top.net.c", i)
		g := pick(strings.TrimPrefix(r, "top.net."), i > 0, func(s rtl.TracedSignal) bool {
			return strings.HasPrefix(s.Module, r) || strings.HasPrefix(s.Module, c)
		})
		if g == nil {
			break
		}
		out = append(out, g...)
	}
	return append(out, pick("other", true, func(rtl.TracedSignal) bool { return true })...)
}

func init() {
	register(Scenario{
		Name:          "tree-allreduce",
		Desc:          "BG/L collective tree, 7 compute nodes + 1 I/O node: int64 sum allreduce of 3 packets with skewed entries, I/O traffic on the system VC; opens on the root's ALU",
		DefaultCycles: 20000,
		Build:         treeAllreduce,
	})
}
