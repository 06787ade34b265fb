package msglayer_test

import (
	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/msglayer"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
)

// tb is what the helpers need of a test: testing.T, testing.B or rapid.T.
type tb interface {
	require.TestingT
	Helper()
	Fatalf(format string, args ...any)
}

// machine is a BlueGene/L torus (bgl routing: adaptive on VCs 0-1, the
// bubble escape on VC 2, VC 3 high priority; vct) with a message-layer
// endpoint at every node.
type machine struct {
	sim *rtl.Sim
	net *torus.Net
	eps []*msglayer.Endpoint
}

// bglParams is the torus of dims for endpoints of p: 8-chunk packets, VCs
// of two packets (the bubble rule), injection FIFOs of 4 packets.
func bglParams(dims []int, p *msglayer.Params, linkDelay, routerDelay uint64) torus.Params {
	flits := int(p.Shape.PacketBytes / p.Shape.ChunkBytes)
	return torus.Params{
		Dims: dims, Torus: true, Escape: routing.Bubble, Routing: "bgl", LinkDelay: linkDelay,
		Router: router.Params{VCs: 4, BufFlits: 2 * flits, Switching: router.VCT, FlitCycles: p.Shape.ChunkCycles,
			Delay: routerDelay, PacketFlits: flits, InjectPackets: 4},
	}
}

func newMachine(t tb, dims []int, p *msglayer.Params, seed uint64) *machine {
	t.Helper()
	return newMachineEval(t, dims, p, seed, false)
}

// newMachineEval is newMachine, with every component evaluated every cycle,
// no cycle skipped and injected packets delivered as they arrive when
// always is set (to check the sleep claims); else injection is deferred
// (torus.Net.DeferInjection), as in an untraced run.
func newMachineEval(t tb, dims []int, p *msglayer.Params, seed uint64, always bool) *machine {
	t.Helper()
	return newMachineWorkers(t, dims, p, seed, always, 1)
}

// newMachineWorkers is newMachineEval on workers goroutines.
func newMachineWorkers(t tb, dims []int, p *msglayer.Params, seed uint64, always bool, workers int) *machine {
	t.Helper()
	sim := rtl.NewSim(rtl.Options{Seed: seed})
	sim.SetAlwaysEval(always)
	sim.SetSkipping(!always)
	net, err := torus.New(sim.Top(), "net", bglParams(dims, p, 2, 2))
	require.NoError(t, err)
	m := &machine{sim: sim, net: net}
	for i := 0; i < net.Nodes(); i++ {
		e, err := msglayer.New(sim.Top(), rtl.Idx("ml", i), uint32(i), p, 4)
		require.NoError(t, err)
		net.ConnectNode(i, &e.Tx, &e.Rx)
		m.eps = append(m.eps, e)
	}
	if !always {
		net.DeferInjection() // as an untraced run does; the same timing
	}
	if workers > 1 {
		sim.SetParallel(workers)
		sim.SetParallelThreshold(1)
	}
	require.NoError(t, sim.Build())
	return m
}

func (m *machine) busy() bool {
	for _, e := range m.eps {
		if e.Busy() {
			return true
		}
	}
	return false
}

func (m *machine) delivered() uint64 {
	var n uint64
	for _, e := range m.eps {
		n += e.Delivered
	}
	return n
}

func (m *machine) packets() uint64 {
	var n uint64
	for _, e := range m.eps {
		n += e.PacketsReceived
	}
	return n
}

// total sums every endpoint's counters.
func (m *machine) total() msglayer.Counters {
	var c msglayer.Counters
	for _, e := range m.eps {
		c.Add(&e.Counters)
	}
	return c
}

// op is a host operation at a node: a send (recv false) or a receive.
type op struct {
	at   uint64
	node int
	recv bool
	req  msglayer.SendReq // send: the message; receive: Dst is the source, Tag the tag
	id   int              // the test's message number
}

// script runs ops (sorted by at) on m: the simulation is run to each op's
// cycle and the op posted there. It returns, per op, the message id Send
// returned or the receive id Recv returned.
func (m *machine) script(t tb, ops []op) []uint32 {
	t.Helper()
	ids := make([]uint32, len(ops))
	for k, o := range ops {
		if now := m.sim.Now(); o.at > now {
			m.sim.Run(o.at - now)
		}
		e := m.eps[o.node]
		if o.recv {
			ids[k] = e.Recv(o.req.Dst, o.req.Tag)
			continue
		}
		id, err := e.Send(o.req)
		require.NoError(t, err)
		ids[k] = id
	}
	return ids
}

// drain runs until no endpoint has work left and n messages have been
// delivered.
func (m *machine) drain(t tb, n uint64, limit uint64) {
	t.Helper()
	ok := m.sim.RunUntil(func() bool { return m.delivered() >= n && !m.busy() }, limit)
	if !ok {
		t.Fatalf("not drained within %d cycles: %d of %d messages delivered", limit, m.delivered(), n)
	}
	require.NoError(t, m.net.Err())
	require.NoError(t, m.net.CheckCredits())
	for _, e := range m.eps {
		require.NoError(t, e.Err())
	}
}
