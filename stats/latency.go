// Package stats is the statistics a run reports: per-packet latency
// distributions with exact quantiles, kept without allocating per sample.
// The sinks and NICs that measure import it, not the testbench.
package stats

import (
	"encoding/binary"
	"math"
	"slices"
)

// Latency collects per-packet latencies in cycles. Quantiles are exact: a
// count per cycle value over the range seen, up to denseMax wide (no
// allocation per sample once the table spans the latencies seen), and a
// sorted list for what falls outside. The table starts at the first sample
// rather than at 0, since latencies sit above the zero-load latency, and
// counts in 8 bits until a count would overflow, then in 16, then in 32
// bits, a count that would overflow those going to the list: a sink's
// table is a few hundred bytes (docs/performance.md, "Memory follows what a block holds").
// The first listSamples samples are only listed: a table spans the range
// of its samples, and a few samples spread over thousands of cycles (a
// 65,536-node torus at 700 MHz: each sink gets a handful in a window,
// latencies of 2,000–20,000 cycles) would cost tens of KB per sink in a
// table against 8 bytes each in the list.
type Latency struct {
	tab    []byte // the counts, w bytes each, little-endian: tab[w*i:] counts samples of lo+i cycles
	w      uint8  // bytes per count: 1 while every count fits in 8 bits, then 2, then 4
	lo     uint64
	over   []uint64
	n, sum uint64
	max    uint64
}

const denseMax = 1 << 20

// Add records one latency.
func (l *Latency) Add(cycles uint64) {
	l.n++
	l.sum += cycles
	l.max = max(l.max, cycles)
	l.put(cycles)
}

// put counts a sample: in the list while there is no table and the list
// is short, else in the table if it can hold it, else in the list.
func (l *Latency) put(v uint64) {
	if l.w == 0 {
		if len(l.over) < listSamples {
			l.over = append(l.over, v)
			return
		}
		l.tabulate()
	}
	if !l.cover(v, l.budget()) || !l.inc(v-l.lo, 1) {
		l.over = append(l.over, v)
	}
}

// budget is the most counts a table may span: tableFree, or 8 a sample
// (at 8 bits a count, what the samples would cost listed) when more, at
// most denseMax. A sink's packets sit within a few thousand cycles of
// each other and fill a table densely; a collective's messages can
// spread over tens of millions of cycles at a few thousand a node
// (alltoall on 8,192 nodes), where a table spanning them would hold 1 MB
// of mostly empty counts a node (8 GB on 8,192 nodes) against 64 KB
// listed.
func (l *Latency) budget() uint64 { return min(denseMax, max(8*l.n, tableFree)) }

// tableFree is the span a table takes whatever its samples (4 KB at 8
// bits a count).
const tableFree = 4096

// listSamples is how many samples a Latency lists before it makes a
// table.
const listSamples = 32

// tabulate moves the listed samples into a table (those it cannot hold
// stay listed) and lets the list go when it is empty.
func (l *Latency) tabulate() {
	var buf [listSamples]uint64
	list := buf[:copy(buf[:], l.over)]
	l.over = l.over[:0]
	for _, v := range list {
		if !l.cover(v, l.budget()) || !l.inc(v-l.lo, 1) {
			l.over = append(l.over, v)
		}
	}
	if len(l.over) == 0 {
		l.over = nil
	}
}

// inc adds c to the count at table index i, widening the table as a count
// needs; false when it does not fit in 32 bits (the count is left full).
func (l *Latency) inc(i, c uint64) bool {
	s := l.count(int(i)) + c
	for s > maxCount(l.w) {
		if l.w == 4 {
			return false
		}
		l.widen(2 * l.w)
	}
	l.set(int(i), s)
	return true
}

func maxCount(w uint8) uint64 { return 1<<(8*uint(w)) - 1 }

// count is the table's count at index i; size is the table's length.
func (l *Latency) count(i int) uint64 {
	switch l.w {
	case 1:
		return uint64(l.tab[i])
	case 2:
		return uint64(binary.LittleEndian.Uint16(l.tab[2*i:]))
	}
	return uint64(binary.LittleEndian.Uint32(l.tab[4*i:]))
}

func (l *Latency) set(i int, v uint64) {
	switch l.w {
	case 1:
		l.tab[i] = uint8(v)
	case 2:
		binary.LittleEndian.PutUint16(l.tab[2*i:], uint16(v))
	default:
		binary.LittleEndian.PutUint32(l.tab[4*i:], uint32(v))
	}
}

func (l *Latency) size() int {
	if l.w == 0 {
		return 0
	}
	return len(l.tab) / int(l.w)
}

// widen re-encodes the table in w bytes per count.
func (l *Latency) widen(w uint8) {
	old := *l
	l.tab, l.w = make([]byte, old.size()*int(w)), w
	for i := range old.size() {
		l.set(i, old.count(i))
	}
}

// reshape puts front empty counts before the table and lengthens it to n.
func (l *Latency) reshape(front, n uint64) {
	w := uint64(l.w)
	r := make([]byte, n*w)
	copy(r[front*w:], l.tab)
	l.tab = r
}

// cover extends the table to v when that keeps it within most counts
// (at most denseMax); false when it cannot.
func (l *Latency) cover(v, most uint64) bool {
	size := uint64(l.size())
	if size == 0 {
		l.lo = v
		l.tab, l.w = make([]byte, 64), 1
		return true
	}
	switch {
	case v < l.lo:
		hi := l.lo + size
		if hi-v > most {
			return false
		}
		grow := min(max(l.lo-v, size), l.lo, most-size)
		l.reshape(grow, grow+size)
		l.lo -= grow
	case v >= l.lo+size:
		if v-l.lo >= most {
			return false
		}
		l.reshape(0, min(max(v-l.lo+1, 2*size), most))
	}
	return true
}

// N is the number of samples.
func (l *Latency) N() uint64 { return l.n }

// Avg is the mean, 0 without samples.
func (l *Latency) Avg() float64 {
	if l.n == 0 {
		return 0
	}
	return float64(l.sum) / float64(l.n)
}

// Max is the largest sample.
func (l *Latency) Max() uint64 { return l.max }

// Quantile returns the nearest-rank q-quantile (q in [0,1]).
func (l *Latency) Quantile(q float64) float64 {
	if l.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(l.n)))
	rank = max(1, min(rank, l.n))
	// Merge the table and the sorted list in value order.
	slices.Sort(l.over)
	var seen uint64
	j := 0
	for i := range l.size() {
		v := l.lo + uint64(i)
		for ; j < len(l.over) && l.over[j] < v; j++ {
			if seen++; seen >= rank {
				return float64(l.over[j])
			}
		}
		if seen += l.count(i); seen >= rank {
			return float64(v)
		}
	}
	return float64(l.over[j+int(rank-seen)-1])
}

// Summary is what a result reports of a latency distribution, in cycles
// and (the average) in ns.
type Summary struct {
	AvgCycles, P50Cycles, P99Cycles, MaxCycles, AvgNS float64
}

// Summary returns l's summary; periodPS converts to ns.
func (l *Latency) Summary(periodPS uint64) Summary {
	avg := l.Avg()
	return Summary{AvgCycles: avg, P50Cycles: l.Quantile(0.5), P99Cycles: l.Quantile(0.99),
		MaxCycles: float64(l.max), AvgNS: avg * float64(periodPS) / 1000}
}

// Merge adds the samples of o to l.
func (l *Latency) Merge(o *Latency) {
	for i := range o.size() {
		v, c := o.lo+uint64(i), o.count(i)
		if c == 0 {
			continue
		}
		if !l.cover(v, denseMax) {
			for ; c > 0; c-- {
				l.over = append(l.over, v)
			}
			continue
		}
		k := v - l.lo
		if !l.inc(k, c) {
			room := math.MaxUint32 - l.count(int(k))
			l.inc(k, room)
			for c -= room; c > 0; c-- {
				l.over = append(l.over, v)
			}
		}
	}
	l.n += o.n // first: the listed samples' budget counts them
	l.sum += o.sum
	l.max = max(l.max, o.max)
	for _, v := range o.over {
		l.put(v)
	}
}
