package dsm

import "github.com/hwcoll/hwcoll/rtl"

// LineState is a cache line's state: MSI, plus Pending for a way that
// waits for its fill (its miss is in a transaction buffer).
type LineState uint8

const (
	Invalid LineState = iota
	Shared
	Modified
	Pending
)

// cacheStates names a cache line's state in waveforms.
var cacheStates = rtl.NewEnum("dsm_cache_state", "I", "S", "M", "P")

// Cache is a node's set-associative cache (seed 001 §5.1: "caches
// lines/tags ... are implemented as arrays"): tags, states, LRU stamps
// and data in flat arrays indexed by set × ways + way. It belongs to the
// processor, whose hits read it in the cycle they are made.
type Cache struct {
	ways, lw int
	setMask  uint64
	tag      []uint64 // line + 1; 0: empty
	state    []LineState
	used     []uint64 // LRU stamp of the last reference
	data     []uint64
	clock    uint64
}

func (c *Cache) init(p *Params) {
	c.ways, c.lw = p.Ways, p.LineWords
	c.setMask = uint64(p.CacheLines/p.Ways - 1)
	c.tag = make([]uint64, p.CacheLines)
	c.state = make([]LineState, p.CacheLines)
	c.used = make([]uint64, p.CacheLines)
	c.data = make([]uint64, p.CacheLines*p.LineWords)
}

// find is the way (index into the arrays) holding line, or −1.
func (c *Cache) find(line uint64) int {
	base := int(line&c.setMask) * c.ways
	for i := base; i < base+c.ways; i++ {
		if c.tag[i] == line+1 {
			return i
		}
	}
	return -1
}

// touch marks way i as just used.
func (c *Cache) touch(i int) {
	c.clock++
	c.used[i] = c.clock
}

// victim is the way of line's set a fill takes: an empty one, else the
// least recently used that pinned does not hold (a way with a miss or
// upgrade outstanding); −1 when every way is pinned.
func (c *Cache) victim(line uint64, pinned func(i int) bool) int {
	base := int(line&c.setMask) * c.ways
	best := -1
	for i := base; i < base+c.ways; i++ {
		if c.tag[i] == 0 {
			return i
		}
		if c.state[i] == Pending || pinned(i) {
			continue
		}
		if best < 0 || c.used[i] < c.used[best] {
			best = i
		}
	}
	return best
}

// words is way i's data.
func (c *Cache) words(i int) []uint64 { return c.data[i*c.lw : (i+1)*c.lw] }

// drop empties way i.
func (c *Cache) drop(i int) { c.tag[i], c.state[i] = 0, Invalid }
