package nic

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

func timing(t require.TestingT, sets ...string) config.Timing {
	cfg := config.Default()
	for _, s := range sets {
		require.NoError(t, cfg.Set(s), s)
	}
	require.NoError(t, cfg.Validate())
	return cfg.Timing()
}

// 1000 bytes in 256-byte packets at 5 bytes a cycle: three full packets of
// 52 cycles and a last one of 232 bytes, 47 cycles.
func TestShapeExample(t *testing.T) {
	sh, err := NewShape(1000, 256, timing(t).BytesCycles)
	require.NoError(t, err)
	require.Equal(t, Shape{MessageBytes: 1000, PacketBytes: 256, Packets: 4, LastBytes: 232, FullCycles: 52, LastCycles: 47}, sh)
	require.Equal(t, []uint32{256, 256, 256, 232}, []uint32{sh.Bytes(0), sh.Bytes(1), sh.Bytes(2), sh.Bytes(3)})
	require.Equal(t, uint64(3*52+47), sh.LinkCycles())
	_, err = NewShape(1<<30, 8, timing(t).BytesCycles)
	require.ErrorContains(t, err, "nic.NewShape(msgBytes): ")
}

// Packetization for random sizes and link rates: ceil(M/B) packets, all
// full but the last, bytes add up to M, cycles from the bytes.
func TestShapeRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := rapid.IntRange(1, 200000).Draw(rt, "message")
		b := rapid.IntRange(8, 4096).Draw(rt, "packet")
		gbps := rapid.SampledFrom([]string{"10", "2.5", "40", "7"}).Draw(rt, "gbps")
		tm := timing(rt, "link.gbps="+gbps)
		sh, err := NewShape(m, b, tm.BytesCycles)
		require.NoError(rt, err)
		require.Equal(rt, uint32((m+b-1)/b), sh.Packets)
		var sum, cyc uint64
		for i := uint32(0); i < sh.Packets; i++ {
			by := sh.Bytes(i)
			if i+1 < sh.Packets {
				require.Equal(rt, uint32(b), by)
			} else {
				require.True(rt, by >= 1 && by <= uint32(b), "last %d", by)
			}
			require.Equal(rt, tm.BytesCycles(uint64(by)), uint64(sh.Cycles(i)))
			sum += uint64(by)
			cyc += uint64(sh.Cycles(i))
		}
		require.Equal(rt, uint64(m), sum)
		require.Equal(rt, cyc, sh.LinkCycles())
	})
}

// Messages from several sources arrive interleaved and each in a random
// packet order, some packets twice: each message completes exactly once,
// when its last packet arrived, at max(tail+1, previous completion) + o_r;
// duplicates are counted and ignored.
func TestReassemblyOutOfOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := rapid.IntRange(1, 20000).Draw(rt, "message")
		b := rapid.IntRange(8, 512).Draw(rt, "packet")
		sh, err := NewShape(m, b, timing(rt).BytesCycles)
		require.NoError(rt, err)
		ov := rapid.Uint64Range(0, 400).Draw(rt, "overhead")
		sim := rtl.NewSim(rtl.Options{Seed: 1})
		r := NewReceiver(sim.Top(), "rx", 7, sh, ov)
		r.Record = true
		msgs := rapid.IntRange(1, 6).Draw(rt, "messages")
		type key struct{ src, msg uint32 }
		var all []packet.Packet
		for i := 0; i < msgs; i++ {
			src := uint32(rapid.IntRange(0, 3).Draw(rt, "src"))
			for s := uint32(0); s < sh.Packets; s++ {
				all = append(all, packet.Packet{Src: src, Dst: 7, Msg: uint32(i), Seq: uint16(s), Cycles: sh.Cycles(s), Born: uint64(i), Measured: true})
			}
		}
		order := rapid.Permutation(all).Draw(rt, "order")
		dups := rapid.IntRange(0, 3).Draw(rt, "dups")
		left := map[key]uint32{}
		for _, p := range all {
			left[key{p.Src, p.Msg}]++
		}
		var tail, hostc uint64
		want := map[key]uint64{}
		for i, p := range order {
			tail += uint64(p.Cycles)
			r.take(&p, tail)
			k := key{p.Src, p.Msg}
			left[k]--
			if left[k] == 0 {
				hostc = max(tail+1, hostc) + ov
				want[k] = hostc
			}
			if i < dups && left[k] > 0 { // a second copy of a packet still open
				tail += uint64(p.Cycles)
				r.take(&p, tail)
			}
		}
		require.Equal(rt, uint64(msgs), r.Completed)
		require.Equal(rt, 0, r.Open())
		require.Len(rt, r.Log, msgs)
		for _, c := range r.Log {
			k := key{c.Src, c.Msg}
			require.Equal(rt, want[k], c.At, "message %v", k)
			delete(want, k)
		}
		require.Empty(rt, want)
		require.Equal(rt, uint64(min(dups, len(order))), r.Duplicates+countClosed(order, dups))
		require.Zero(rt, r.Misrouted+r.BadSeq)
		p := packet.Packet{Src: 1, Dst: 3, Cycles: 1}
		r.take(&p, tail+1)
		require.Equal(rt, uint64(1), r.Misrouted)
		require.Error(rt, r.Err())
	})
}

// countClosed counts the first dups packets of order whose message was
// complete by then (no duplicate was sent for them).
func countClosed(order []packet.Packet, dups int) uint64 {
	type key struct{ src, msg uint32 }
	left := map[key]int{}
	for _, p := range order {
		left[key{p.Src, p.Msg}]++
	}
	var n uint64
	for i, p := range order {
		k := key{p.Src, p.Msg}
		left[k]--
		if i < dups && left[k] == 0 {
			n++
		}
	}
	return n
}
