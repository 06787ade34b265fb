package msglayer_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/internal/heapcensus"
	"github.com/hwcoll/hwcoll/msglayer"
)

// The heap per node of an 8×8×8 BG/L torus of endpoints after every node
// has sent 8 messages (single, eager, mid-size) to peers drawn at random
// and received its share: the router is most of it; the endpoint is its
// record plus what its queues and pools grew to.
func TestHeapPerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a 512-node network with every allocation sampled")
	}
	const nodes = 512
	var delivered uint64
	per, report := heapcensus.Measure(nodes, func() any {
		p := msglayer.DefaultParams()
		m := newMachine(t, []int{8, 8, 8}, &p, 1)
		var ops []op
		x := uint64(12345)
		for i := 0; i < nodes; i++ {
			for k := 0; k < 8; k++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				dst := int(x % nodes)
				req := msglayer.SendReq{Dst: uint32(dst), Bytes: [...]uint32{100, 700, 3000}[x>>40%3]}
				ops = append(ops, op{node: i, req: req}, op{node: dst, recv: true, req: msglayer.SendReq{Dst: uint32(i)}})
			}
		}
		m.script(t, ops)
		m.drain(t, 8*nodes, 10_000_000)
		delivered = m.delivered()
		return m
	})
	t.Logf("Endpoint record %d B; heap per node, 8×8×8 torus after %d messages: %.0f B%s",
		unsafe.Sizeof(msglayer.Endpoint{}), delivered, per, report)
	require.Equal(t, uint64(8*nodes), delivered)
	// the torus's own budget is 20 KB a node (package torus); the
	// endpoints, after this traffic, about 5 KB more (their records, the
	// connections and pools, the reception queue's ring)
	require.Less(t, per, float64(28<<10),
		"heap per node is %.0f B, past its 28 KiB budget (the torus's 20 KiB a node and about 5 KiB of endpoint: "+
			"its record, %d B now, the connections, pools and the reception queue's ring). To fix: find what grew "+
			"with the report above (a record, a pool that no longer shrinks, a ring sized to its peak) and move "+
			"what is per message out of what is per node or per connection; if the growth is measured and wanted, "+
			"raise the budget here with this figure.", per, unsafe.Sizeof(msglayer.Endpoint{}))
}
