package traffic

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hwcoll/hwcoll/packet"
)

// Destinations written out by hand.
func TestNodePatterns(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		want []int
	}{
		{"transpose", 2, []int{0, 1}},
		{"transpose", 4, []int{0, 2, 1, 3}}, // 2 bits: b1b0 -> b0b1
		{"transpose", 8, []int{0, 4, 1, 5, 2, 6, 3, 7}},
		{"transpose", 16, []int{0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15}},
		{"bitrev", 2, []int{0, 1}},
		{"bitrev", 4, []int{0, 2, 1, 3}},
		{"bitrev", 8, []int{0, 4, 2, 6, 1, 5, 3, 7}},
		{"bitrev", 16, []int{0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15}},
		{"shuffle", 2, []int{0, 1}},
		{"shuffle", 4, []int{0, 2, 1, 3}},
		{"shuffle", 8, []int{0, 2, 4, 6, 1, 3, 5, 7}}, // the deck 0..7 cut and interleaved
		{"complement", 2, []int{1, 0}},
		{"complement", 8, []int{7, 6, 5, 4, 3, 2, 1, 0}},
		{"tornado", 2, []int{0, 1}},
		{"tornado", 8, []int{3, 4, 5, 6, 7, 0, 1, 2}},
		{"tornado", 9, []int{3, 4, 5, 6, 7, 8, 0, 1, 2}},
		{"neighbor", 4, []int{1, 2, 3, 0}},
		{"neighbor", 9, []int{1, 2, 3, 4, 5, 6, 7, 8, 0}},
	} {
		pat, err := NewNodePattern(c.name, c.n)
		if err != nil {
			t.Fatalf("%s n=%d: %v", c.name, c.n, err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		for i, w := range c.want {
			var p packet.Packet
			pat.Fill(r, uint32(i), &p)
			if p.Op != packet.Unicast || int(p.Dst) != w {
				t.Errorf("%s n=%d: node %d -> %d (%v), want %d", c.name, c.n, i, p.Dst, p.Op, w)
			}
		}
	}
}

// Shuffle against its definition bit by bit, and as a permutation, for
// every power of two up to 2^12.
func TestShuffleRotatesBits(t *testing.T) {
	for b := 1; b <= 12; b++ {
		n := 1 << b
		seen := make([]bool, n)
		for i := 0; i < n; i++ {
			want := 0
			for k := 0; k < b; k++ { // bit k of i goes to bit (k+1) mod b
				want |= (i >> k & 1) << ((k + 1) % b)
			}
			if got := Shuffle(n, i); got != want {
				t.Fatalf("n=%d: Shuffle(%d) = %d, want %d", n, i, got, want)
			}
			seen[want] = true
		}
		for d, ok := range seen {
			if !ok {
				t.Fatalf("n=%d: no node sends to %d", n, d)
			}
		}
	}
}

func TestNodePatternErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
	}{{"transpose", 9}, {"bitrev", 6}, {"complement", 27}, {"multicast", 16}, {"nope", 16}} {
		_, err := NewNodePattern(c.name, c.n)
		if err == nil || !strings.HasPrefix(err.Error(), "traffic.NewNodePattern(name): ") {
			t.Errorf("%s n=%d: %v, want an error naming the pattern", c.name, c.n, err)
		}
	}
}

// Hotspot: about HotspotFraction of the packets plus a uniform share go to
// node 0; the rest spread over every node.
func TestHotspot(t *testing.T) {
	const n, draws = 16, 100000
	pat, err := NewNodePattern("hotspot", n)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var count [n]int
	for j := 0; j < draws; j++ {
		var p packet.Packet
		pat.Fill(r, uint32(j%n), &p)
		count[p.Dst]++
	}
	want0 := HotspotFraction + (1-HotspotFraction)/n
	if got := float64(count[0]) / draws; got < want0-0.01 || got > want0+0.01 {
		t.Errorf("node 0 got %.3f of the packets, want %.3f", got, want0)
	}
	for d := 1; d < n; d++ {
		want := (1 - HotspotFraction) / n
		if got := float64(count[d]) / draws; got < want-0.01 || got > want+0.01 {
			t.Errorf("node %d got %.3f, want %.3f", d, got, want)
		}
	}
}
