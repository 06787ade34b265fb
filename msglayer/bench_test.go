package msglayer_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/msglayer"
)

// closedLoop keeps every node of a torus busy with MPI traffic: each node
// starts inFlight messages and, for every message delivered to it, sends
// a new one to a node drawn from its own stream, of 100, 700 or 3000 bytes
// (single packet, eager, mid-size by the default table); every node keeps
// one receive posted per source (tag 0), re-posted as it is taken, so most
// messages match a posted receive and the rest wait a little in the
// unexpected queue.
func closedLoop(t tb, dims []int, p *msglayer.Params, inFlight, workers int) *machine {
	t.Helper()
	m := newMachineWorkers(t, dims, p, 1, false, workers)
	n := uint32(len(m.eps))
	sizes := [...]uint32{100, 700, 3000}
	for i, e := range m.eps {
		x := uint64(i)*0x9e3779b97f4a7c15 | 1
		draw := func() uint64 { // xorshift: the node's own stream
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			return x
		}
		for s := uint32(0); s < n; s++ {
			e.Recv(s, 0)
		}
		_, err := e.Attach(msglayer.Host{Deliver: func(p msglayer.Port, d msglayer.Delivery) {
			p.Recv(d.Src, 0)
			r := draw()
			if _, err := p.Send(msglayer.SendReq{Dst: uint32(r % uint64(n)), Bytes: sizes[r>>32%3]}); err != nil {
				panic(err)
			}
		}})
		require.NoError(t, err)
		for k := 0; k < inFlight; k++ {
			r := draw()
			_, err := e.Send(msglayer.SendReq{Dst: uint32(r % uint64(n)), Bytes: sizes[r>>32%3]})
			require.NoError(t, err)
		}
	}
	return m
}

// Nothing is allocated per packet: once a 4×4×4 torus of endpoints (the
// default BG/L parameters) has run its closed loop long enough for its
// queues and record pools to reach their high-water marks, a window of a
// million cycles moves tens of thousands of packets and allocates at most
// one object per 50 of them.
func TestAllocationsAreNotPerPacket(t *testing.T) {
	p := msglayer.DefaultParams()
	m := closedLoop(t, []int{4, 4, 4}, &p, 2, 1)
	m.sim.Run(2_000_000)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p0, d0 := m.packets(), m.delivered()
	m.sim.Run(1_000_000)
	runtime.ReadMemStats(&m1)
	pkts, allocs := m.packets()-p0, m1.Mallocs-m0.Mallocs
	t.Logf("%d packets (%d messages), %d allocations", pkts, m.delivered()-d0, allocs)
	require.Greater(t, pkts, uint64(10_000))
	require.LessOrEqual(t, allocs*50, pkts, "%d allocations for %d packets", allocs, pkts)
	require.Zero(t, m.total().Errors)
}

// BenchmarkClosedLoop4x4x4 runs the closed loop on the 4×4×4 BG/L torus
// (bgl routing, bubble escape, 4 VCs, vct; the default 700 MHz parameters)
// and reports wall ns and allocations per packet received (acks included)
// and per message delivered.
func BenchmarkClosedLoop4x4x4(b *testing.B) {
	p := msglayer.DefaultParams()
	m := closedLoop(b, []int{4, 4, 4}, &p, 2, 1)
	m.sim.Run(1_000_000)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p0, d0 := m.packets(), m.delivered()
	start := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.sim.Run(200_000)
	}
	b.StopTimer()
	wall := time.Since(start)
	runtime.ReadMemStats(&m1)
	pkts, msgs := m.packets()-p0, m.delivered()-d0
	b.ReportMetric(float64(wall.Nanoseconds())/float64(pkts), "ns/packet")
	b.ReportMetric(float64(wall.Nanoseconds())/float64(msgs), "ns/message")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(pkts), "allocs/packet")
	b.ReportMetric(float64(pkts)/float64(b.N), "packets/op")
}

// The closed loop gives the same counts and latencies on one goroutine and
// on two (the kernel's parallel evaluation): an endpoint shares nothing
// with another but its links.
func TestSameOnTwoWorkers(t *testing.T) {
	p := msglayer.DefaultParams()
	res := func(workers int) []msglayer.Counters {
		m := closedLoop(t, []int{4, 4, 4}, &p, 2, workers)
		m.sim.Run(500_000)
		if workers > 1 {
			require.Positive(t, m.sim.Stats().Parallel, "no cycle was evaluated in parallel")
		}
		var out []msglayer.Counters
		for _, e := range m.eps {
			out = append(out, e.Counters)
		}
		return out
	}
	one, two := res(1), res(2)
	require.Positive(t, one[0].Delivered)
	require.Equal(t, one, two)
}
