package crossbar

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/tb/tbtest"
	"github.com/hwcoll/hwcoll/traffic"
)

var allOrgs = []Organization{OQXP, IQFIFO, VOQ}

func TestNewRejectsWhatIsNotBuilt(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{})
	base := Params{Ports: 4, XPPackets: 2, SwitchDelay: 1}
	for _, org := range []Organization{IQFIFO, VOQ} {
		p := base
		p.Org, p.CreditMode = org, credit.PerCrosspoint
		_, err := New(sim.Top(), "a", p)
		require.ErrorContains(t, err, "crossbar.Params.CreditMode: ")
		require.ErrorContains(t, err, "per-link")
	}
	p := base
	p.Org = "shared"
	_, err := New(sim.Top(), "b", p)
	require.ErrorContains(t, err, "crossbar.Params.Org: ")
	require.ErrorContains(t, err, "oq-xp | iq-fifo | voq")
	p = base
	p.Org, p.Iterations = VOQ, 17
	_, err = New(sim.Top(), "c", p)
	require.ErrorContains(t, err, "crossbar.Params.Iterations: ")
	for _, org := range allOrgs {
		p := base
		p.Org = org
		sw, err := New(sim.Top(), "sw_"+string(org[:2]), p)
		require.NoError(t, err)
		require.Equal(t, 4, sw.Ports())
		require.Equal(t, 1, sw.P.Iterations)
	}
}

// oneShot is a process that gives birth once, at cycle at.
type oneShot struct{ at uint64 }

func (o *oneShot) Gap(*rand.Rand) uint64 {
	if o.at == 0 {
		return 1 << 60
	}
	g := o.at
	o.at = 0
	return g
}

// Zero-load latency is the same in every organization: channel delay, the
// switch delay, channel delay, then the packet's length (cut-through).
func TestZeroLoadLatencyIsTheSameInEveryOrganization(t *testing.T) {
	for _, org := range allOrgs {
		for _, mc := range []float64{0, 1} {
			n, err := buildNet(netCfg{org: org, ports: 4, buf: 2, split: true, seed: 3, mcast: mc, record: true, stopAt: 100, win: traffic.Window{End: 1000}})
			require.NoError(t, err)
			n.srcs[1].Proc = &oneShot{at: 10}
			res := tb.Exec(n.harness(), 10000)
			require.NoError(t, res.Err, "%s", org)
			require.Equal(t, uint64(1), n.srcs[1].Born)
			for _, s := range n.sinks {
				if s.Received > 0 {
					require.Equal(t, float64(5+23+5+52), s.Lat.Avg(), "%s multicast=%v", org, mc)
				}
			}
		}
	}
}

// A small network of every organization under random traffic: every copy
// exactly once, FIFO order, credit conservation every cycle, and it drains.
func TestDeliveryProperties(t *testing.T) {
	tbtest.Check(t, func(rt *rapid.T, env *tb.Env) {
		c := drawCfg(rt)
		n, err := buildNet(c)
		if err != nil {
			rt.Fatalf("%s: %v", c, err)
		}
		env.Run(rt, n.harness(), c.stopAt+200_000)
	})
}

func drawCfg(rt *rapid.T) netCfg {
	c := netCfg{
		org:    rapid.SampledFrom(allOrgs).Draw(rt, "org"),
		ports:  rapid.IntRange(2, 16).Draw(rt, "ports"),
		buf:    rapid.IntRange(1, 8).Draw(rt, "buf"),
		split:  rapid.Bool().Draw(rt, "split"),
		iters:  rapid.IntRange(1, 4).Draw(rt, "iters"),
		seed:   rapid.Uint64().Draw(rt, "seed"),
		load:   rapid.Float64Range(0.05, 1).Draw(rt, "load"),
		mcast:  rapid.SampledFrom([]float64{0, 0, 0.1, 0.5, 1}).Draw(rt, "mcast"),
		cycles: uint32(rapid.IntRange(1, 64).Draw(rt, "cycles")),
		delay:  uint64(rapid.IntRange(1, 8).Draw(rt, "delay")),
		swDel:  uint64(rapid.IntRange(1, 30).Draw(rt, "switch_delay")),
		record: true,
	}
	modes := []credit.Mode{credit.MinFree, credit.PerLink}
	if c.org == OQXP {
		modes = append(modes, credit.PerCrosspoint)
	}
	c.mode = rapid.SampledFrom(modes).Draw(rt, "credit_mode")
	// About 30 packets per source.
	c.stopAt = uint64(30*float64(c.cycles)/c.load) + 1
	return c
}

// The sleep claims of the switch are exact: with activity off (every
// component evaluated every cycle) the deliveries are the same, cycle for
// cycle.
func TestActivityDoesNotChangeResults(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := drawCfg(rt)
		c.stopAt = min(c.stopAt, 3000)
		var logs [2][][]traffic.Delivery
		for mode := range 2 {
			n, err := buildNet(c, func(s *rtl.Sim) { s.SetAlwaysEval(mode == 1) })
			if err != nil {
				rt.Fatalf("%v", err)
			}
			res := tb.Exec(n.harness(), c.stopAt+200_000)
			if res.Err != nil {
				rt.Fatalf("%s: %v", c, res.Err)
			}
			for _, s := range n.sinks {
				logs[mode] = append(logs[mode], s.Log)
			}
		}
		require.Equal(rt, logs[0], logs[1])
	})
}

// A case the property above found: 1-cycle multicast packets, where an
// output's notice wakes an input for the next cycle before the input is
// evaluated in this one, and another output then released a copy early
// on the input's behalf (which its own evaluation later in the cycle
// saw): the credit went a cycle late, and only with activity on.
func TestEarlyReleaseWaitsForAnInputStillToRun(t *testing.T) {
	c := netCfg{org: OQXP, ports: 4, buf: 2, iters: 1, seed: 0xe, load: 0.4375, mcast: 1,
		cycles: 1, delay: 2, swDel: 1, mode: credit.MinFree, record: true}
	c.stopAt = uint64(30*float64(c.cycles)/c.load) + 1
	var logs [2][][]traffic.Delivery
	for mode := range 2 {
		n, err := buildNet(c, func(s *rtl.Sim) { s.SetAlwaysEval(mode == 1) })
		require.NoError(t, err)
		res := tb.Exec(n.harness(), c.stopAt+200_000)
		require.NoError(t, res.Err)
		for _, s := range n.sinks {
			logs[mode] = append(logs[mode], s.Log)
		}
	}
	require.Equal(t, logs[0], logs[1])
}

// The waveform does not depend on skipping, activity or parallel
// evaluation, and shows the baselines' queues and grants.
func TestWaveformIsTheSameInEveryKernelMode(t *testing.T) {
	for _, c := range []netCfg{
		{org: OQXP, ports: 4, buf: 2},
		{org: IQFIFO, ports: 4, buf: 3, split: true},
		{org: IQFIFO, ports: 4, buf: 3, split: false},
		{org: VOQ, ports: 5, buf: 4, split: true, iters: 2},
		{org: VOQ, ports: 5, buf: 4, split: false},
	} {
		c.seed, c.load, c.mcast, c.stopAt, c.record = 11, 0.8, 0.3, 1500, true
		t.Run(fmt.Sprintf("%s_split_%v", c.org, c.split), func(t *testing.T) {
			trace := func(setup func(*rtl.Sim)) []byte {
				n, err := buildNet(c, setup)
				require.NoError(t, err)
				defer n.sim.Close()
				var buf bytes.Buffer
				w, err := n.sim.NewTraceWriter(&buf)
				require.NoError(t, err)
				require.NoError(t, n.sim.Trace(w, ""))
				res := tb.Exec(n.harness(), 100_000)
				require.NoError(t, n.sim.EndTrace())
				require.NoError(t, res.Err)
				return buf.Bytes()
			}
			ref := trace(func(*rtl.Sim) {})
			if c.org != OQXP {
				for _, sig := range []string{"occupancy", "xfer", "grant", "rr_ptr", "head_pkt"} {
					require.Contains(t, string(ref), " "+sig+" ", "signal %s is traced", sig)
				}
			}
			for name, setup := range map[string]func(*rtl.Sim){
				"no skipping": func(s *rtl.Sim) { s.SetSkipping(false) },
				"always eval": func(s *rtl.Sim) { s.SetAlwaysEval(true) },
				"parallel":    func(s *rtl.Sim) { s.SetParallel(2); s.SetParallelThreshold(1) },
			} {
				require.Equal(t, string(ref), string(trace(setup)), "%s changed the VCD", name)
			}
		})
	}
}

// Without fanout splitting a multicast goes in one crossbar pass: every
// copy of it leaves the switch in the same cycle.
func TestNoSplittingSendsAllCopiesAtOnce(t *testing.T) {
	for _, org := range []Organization{IQFIFO, VOQ} {
		n, err := buildNet(netCfg{org: org, ports: 6, buf: 4, split: false, seed: 5, load: 0.9, mcast: 0.5, stopAt: 20_000, record: true})
		require.NoError(t, err)
		tb.Run(t, n.harness(), 2_000_000)
		tails := map[uint64]uint64{}
		multi := 0
		for _, s := range n.sinks {
			for _, d := range s.Log {
				if n.pats[d.Src].log[d.ID].op == packet.Unicast {
					continue
				}
				multi++
				if t0, ok := tails[d.ID]; ok {
					require.Equal(t, t0, d.Tail, "%s: copies of %#x left at different cycles", org, d.ID)
				}
				tails[d.ID] = d.Tail
			}
		}
		require.Greater(t, multi, 1000)
	}
}

// An adaptive unicast route (a set of outputs) delivers each packet once,
// through one of the candidates, and spreads the load over them.
func TestAdaptiveUnicastGoesToOneCandidate(t *testing.T) {
	for _, org := range allOrgs {
		// Three inputs at full load towards two outputs: they must share.
		n, err := buildNet(netCfg{org: org, ports: 4, inputs: 3, buf: 4, split: true, seed: 2, load: 1, stopAt: 30_000, record: true})
		require.NoError(t, err)
		// Every node is reached through output 2 or 3.
		for d := 0; d < 4; d++ {
			n.sw.Table.SetUnicast(uint32(d), 1<<2|1<<3)
		}
		for _, s := range n.sinks {
			s.Accept = nil
		}
		h := n.harness()
		h.Check = nil
		tb.Run(t, h, 1_000_000)
		require.NoError(t, n.sw.Err())
		seen := map[uint64]int{}
		for d, s := range n.sinks {
			if d < 2 {
				require.Zero(t, s.Received, "%s: output %d is not a candidate", org, d)
			}
			for _, dl := range s.Log {
				seen[dl.ID]++
			}
		}
		require.Len(t, seen, int(n.srcs[0].Born+n.srcs[1].Born+n.srcs[2].Born), org)
		for id, c := range seen {
			require.Equal(t, 1, c, "%s: packet %#x", org, id)
		}
		a, b := n.sinks[2].Received, n.sinks[3].Received
		t.Logf("%s: outputs 2 and 3 carried %d and %d packets", org, a, b)
		require.InDelta(t, 0.5, float64(a)/float64(a+b), 0.2, "%s: %d and %d", org, a, b)
	}
}

// The compact unicast table answers as a plain slice of port sets would,
// also past 255 distinct sets (where it switches to the sets themselves).
func TestUnicastTable(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tab := NewTable(64)
		model := map[uint32]uint64{}
		distinct := rapid.IntRange(1, 600).Draw(rt, "distinct")
		n := rapid.IntRange(1, 1000).Draw(rt, "entries")
		for k := 0; k < n; k++ {
			dst := uint32(rapid.IntRange(0, 700).Draw(rt, "dst"))
			m := uint64(rapid.IntRange(0, distinct).Draw(rt, "set"))*0x9e3779b97f4a7c15 | 1
			tab.SetUnicast(dst, m)
			model[dst] = m
		}
		for dst := uint32(0); dst <= 701; dst++ {
			got, err := tab.Lookup(&packet.Packet{Op: packet.Unicast, Dst: dst}, 0)
			if want, ok := model[dst]; ok {
				require.NoError(rt, err)
				require.Equal(rt, want, got)
			} else {
				require.EqualError(rt, err, fmt.Sprintf("no route to node %d", dst))
			}
		}
	})
}

// Grants counts nothing until asked (a network's outputs carry no
// per-input counters), and once TrackGrants has been called before the
// run, output o's count for input i is the copies sink o got from source
// i, in every organization.
func TestGrantsCountWhatTheSinksGot(t *testing.T) {
	for _, org := range allOrgs {
		n, err := buildNet(netCfg{org: org, ports: 4, buf: 2, split: true, seed: 5, load: 0.6, mcast: 0.3, record: true, stopAt: 3000, win: traffic.Window{End: 1 << 40}})
		require.NoError(t, err)
		require.PanicsWithValue(t, "crossbar: Grants of top.sw without TrackGrants before the run", func() { n.sw.Grants(0) }, "%s", org)
		n.sw.TrackGrants()
		res := tb.Exec(n.harness(), 20000)
		require.NoError(t, res.Err, "%s", org)
		total := 0
		for o, s := range n.sinks {
			want := make([]uint64, 4)
			for _, d := range s.Log {
				want[d.Src]++
				total++
			}
			require.Equal(t, want, n.sw.Grants(o), "%s output %d", org, o)
		}
		require.Greater(t, total, 100, "%s: too few packets to tell", org)
	}
}

// A min-free input's done notices are taken early, on its behalf, by the
// output that sends the copy (releaseEarly), and a per-link packet's last
// one at once when its credit is scheduled (takeNow), unless a waveform is
// written: the deliveries, cycle for cycle, and the credit checks every
// cycle are the same with and without, and min-free inputs are evaluated
// less often.
func TestEarlyReleaseMatchesTheInputs(t *testing.T) {
	var cfgs []netCfg
	for _, mode := range []credit.Mode{credit.MinFree, credit.PerLink} {
		for _, c := range []netCfg{
			{org: OQXP, ports: 4, buf: 2, load: 0.8, mcast: 0.3, cycles: 1, delay: 3, swDel: 2},
			{org: OQXP, ports: 8, buf: 4, load: 0.5, cycles: 4, delay: 2, swDel: 1},
			{org: OQXP, ports: 5, buf: 1, load: 0.9, mcast: 1, cycles: 2, delay: 5, swDel: 3},
		} {
			c.mode = mode
			cfgs = append(cfgs, c)
		}
	}
	for _, c := range cfgs {
		c.seed, c.stopAt, c.record = 3, 3000, true
		t.Run(c.mode.String()+"/"+c.String(), func(t *testing.T) {
			var logs [2][][]traffic.Delivery
			var evals [2]uint64
			for traced := range 2 {
				n, err := buildNet(c)
				require.NoError(t, err)
				if traced == 1 {
					w, err := n.sim.NewTraceWriter(io.Discard)
					require.NoError(t, err)
					require.NoError(t, n.sim.Trace(w, "top.nothing"))
				}
				res := tb.Exec(n.harness(), c.stopAt+200_000)
				require.NoError(t, res.Err)
				for _, s := range n.sinks {
					logs[traced] = append(logs[traced], s.Log)
				}
				evals[traced] = n.sim.Stats().Evals
				n.sim.Close()
			}
			delivered := 0
			for _, l := range logs[0] {
				delivered += len(l)
			}
			require.Greater(t, delivered, 100)
			require.Equal(t, logs[1], logs[0])
			if c.mode == credit.MinFree {
				require.Less(t, evals[0], evals[1], "no done notice was taken early")
			}
		})
	}
}
