package experiment_test

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
)

// requireCaught checks a run the watchdog stopped: a deadlock with a
// closed wait-for cycle, stopped within 9/8 of the watchdog's period of
// the last move, nothing measured delivered.
func requireCaught(t *testing.T, r experiment.Result, cfg config.Config) {
	t.Helper()
	require.True(t, r.Deadlock, r.Error)
	require.False(t, r.Stable)
	require.GreaterOrEqual(t, len(r.WaitFor), 3)
	require.Equal(t, r.WaitFor[0], r.WaitFor[len(r.WaitFor)-1])
	require.Contains(t, r.Error, "deadlock: no flit has moved since cycle")
	period := uint64(cfg.Run.WatchdogCycles)
	require.Less(t, r.Cycles, uint64(cfg.Run.MaxCycles))
	require.Greater(t, r.Cycles, period, "a period of no move before the stall is declared")
	require.Zero(t, r.PacketsDelivered)
}

// The README's exit-3 example: dor on the 8×8 torus with one VC and no
// escape, load 0.9. It locks in the warm-up, long before the window; the
// sources then wait on credits and nothing in the simulation wakes but
// the window's two edges, both within a watchdog period of the last move,
// so one RunUntil skipped to run.max_cycles (5 M cycles, deadlock false,
// 0 packets injected). Sliced at the watchdog's looks, it stops a period
// and at most an eighth after the last move, at the same cycle with time
// skipping on or off.
func TestWatchdogCatchesReadmeDeadlock(t *testing.T) {
	cfg := configWith(t, "network.topology=torus", "router.escape=none", "router.vcs=1", "traffic.load=0.9")
	run := func(skipping bool) experiment.Result {
		n, err := experiment.Build(experiment.Torus, cfg)
		require.NoError(t, err)
		n.Sim.SetSkipping(skipping)
		return n.Run()
	}
	r := run(true)
	requireCaught(t, r, cfg)
	require.Less(t, r.Cycles, uint64(cfg.Run.WarmupCycles)+uint64(cfg.Run.WatchdogCycles)*9/8, "caught a period after a warm-up lock")
	require.Less(t, r.MaxQueue, 1<<16, "the watchdog, not the queue bound, ended it")
	require.Equal(t, wallFree(r, true), wallFree(run(false), true), "the same stop with time skipping off")
}

// noEscapeDuato is Duato's routing with its escape VC (VC 0, dimension
// order) taken away: fully adaptive minimal routing on the other VCs,
// whose channel dependencies form cycles on a mesh (torus'
// TestDuatoWithoutEscapeDeadlocks).
func noEscapeDuato(t *testing.T) *routing.Spec {
	duato, err := routing.Lookup("duato")
	require.NoError(t, err)
	s := duato
	s.Name, s.Check, s.Bubble = "duato-without-escape", nil, nil
	s.F = func(n *routing.Net, r routing.Request) routing.Choices {
		ch := duato.F(n, r)
		if r.Node == r.Dst {
			return ch
		}
		var out routing.Choices
		for ports := ch.Ports(); ports != 0; ports &= ports - 1 {
			o := routing.Port(bits.TrailingZeros8(ports))
			if vcs := ch.VCs(o) &^ 1; vcs != 0 {
				out = out.Add(o, vcs)
			}
		}
		return out
	}
	return &s
}

// A mesh that deadlocks in a long warm-up is stopped in the warm-up (the
// watchdog judges the network, not measured deliveries), in load runs and
// in program runs, with time skipping on and off alike.
func TestWatchdogCatchesWarmupDeadlockOnMesh(t *testing.T) {
	spec := noEscapeDuato(t)
	mesh := func(cfg config.Config) (experiment.RouterNetlist, error) {
		return experiment.RouterNetlist{Make: func(sim *rtl.Sim, p routernet.Params) (*routernet.Net, error) {
			return torus.New(sim.Top(), "net", torus.Params{Dims: cfg.Network.Dims, Spec: spec, Router: p.Router, LinkDelay: p.LinkDelay})
		}}, nil
	}
	cfg := configWith(t, "network.topology=mesh", "network.dims=4,4", "router.vcs=2", "traffic.load=1",
		"run.warmup_cycles=1000000", "run.watchdog_cycles=20000")
	run := func(skipping bool) experiment.Result {
		n, err := experiment.Build(experiment.RoutedLoad(mesh), cfg)
		require.NoError(t, err)
		n.Sim.SetSkipping(skipping)
		return n.Run()
	}
	r := run(true)
	requireCaught(t, r, cfg)
	require.Less(t, r.Cycles, uint64(cfg.Run.WarmupCycles), "caught in the warm-up")
	require.Equal(t, wallFree(r, true), wallFree(run(false), true), "the same stop with time skipping off")

	prog := configWith(t, "network.topology=mesh", "network.dims=4,4", "router.vcs=2", "traffic.pattern=program",
		"traffic.program=alltoall", "traffic.message_bytes=4096", "run.watchdog_cycles=20000")
	p, err := experiment.Build(experiment.RoutedProgram(mesh), prog)
	require.NoError(t, err)
	pr := p.Run()
	require.True(t, pr.Deadlock, pr.Error)
	require.NotEmpty(t, pr.WaitFor)
	require.Less(t, pr.Cycles, uint64(200_000))
}

// A source whose queue reaches its bound stops generating, and the run
// says so: with the watchdog off, the README's deadlocking torus runs to
// run.max_cycles = 10^9 (skipping, since nothing moves) holding 2^16
// packets per source instead of the 10^8 a source would have generated
// (11 GB of RSS before the bound).
func TestSourceQueueBoundStopsADeadlockedRun(t *testing.T) {
	cfg := configWith(t, "network.topology=torus", "network.dims=4,4", "router.escape=none", "router.vcs=1",
		"traffic.load=0.9", "run.watchdog_cycles=0", "run.max_cycles=1000000000")
	n, err := experiment.Build(experiment.Torus, cfg)
	require.NoError(t, err)
	r := n.Run()
	require.False(t, r.Deadlock, "the watchdog is off")
	require.False(t, r.Stable)
	require.Equal(t, uint64(cfg.Run.MaxCycles), r.Cycles)
	require.Equal(t, 1<<16, r.MaxQueue, "max_source_queue is the bound")
	require.Contains(t, r.Error, "source queue bound: node ")
	require.Contains(t, r.Error, "reached 65536 packets")
	capped := 0
	for _, s := range n.Srcs {
		require.LessOrEqual(t, s.Queue(), 1<<16)
		if s.Capped {
			capped++
		}
	}
	require.Equal(t, len(n.Srcs), capped, "every source of a deadlocked network reaches its bound")
}

// flood is a process that gives a packet every cycle, more than any link
// takes (a packet holds it for several cycles).
type flood struct{}

func (flood) Gap(*rand.Rand) uint64 { return 1 }

// The bound is shared out over the sources: 2^16 each up to 64 of them,
// then 2^22 packets among them all, at least 2^10 each. On a single
// switch (open-loop sources like the fat-tree's) sources that flood their
// links fill their queues in a long warm-up: the run reports the bound
// (not "no packet was born in the window") and ends once the window has
// passed, with nothing measured to wait for.
func TestSourceQueueBoundOnASwitch(t *testing.T) {
	cfg := configWith(t, "network.ports=4", "run.warmup_cycles=200000", "run.measure_cycles=1000")
	n, err := experiment.Build(experiment.Switch, cfg)
	require.NoError(t, err)
	require.Greater(t, n.Timing.PacketCycles, uint64(1))
	for _, s := range n.Srcs {
		s.Proc = flood{}
	}
	r := n.Run()
	require.False(t, r.Stable)
	require.Contains(t, r.Error, "source queue bound")
	require.Equal(t, 1<<16, r.MaxQueue)
	require.Equal(t, n.Win.End+1, r.Cycles)
	for _, s := range n.Srcs {
		require.Equal(t, 1<<16, s.Bound())
		require.True(t, s.Capped)
		require.Less(t, s.CappedAt, n.Win.Start)
	}
	for nodes, want := range map[int]int{1: 1 << 16, 64: 1 << 16, 65: 1 << 15, 512: 1 << 13, 4096: 1 << 10, 65536: 1 << 10} {
		require.Equal(t, want, experiment.SourceQueue(nodes), "%d sources", nodes)
	}
}
