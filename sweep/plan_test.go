package sweep

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
)

func TestParseAxis(t *testing.T) {
	ax, err := ParseAxis("traffic.load=0.1:0.3:0.1")
	require.NoError(t, err)
	require.Equal(t, Axis{"traffic.load", []string{"0.1", "0.2", "0.3"}}, ax)
	ax, err = ParseAxis(" network.organization = oq-xp, voq ")
	require.NoError(t, err)
	require.Equal(t, Axis{"network.organization", []string{"oq-xp", "voq"}}, ax)
	for _, bad := range []string{"", "=1,2", "network.ports", "network.ports=", "network.ports=8,,16", "traffic.load=1:0:0.1", "traffic.load=0:1:0", "traffic.load=0:1", "traffic.load=a:1:0.1", "traffic.load=0:1e9:1e-9"} {
		_, err := ParseAxis(bad)
		require.Error(t, err, bad)
	}
}

func TestProductAndSeries(t *testing.T) {
	require.Equal(t, []SeriesSpec{nil}, Product(nil))
	p := Product([]Axis{{"network.ports", []string{"8", "32"}}, {"network.organization", []string{"oq-xp", "voq"}}})
	var labels []string
	for _, s := range p {
		labels = append(labels, s.Label())
	}
	require.Equal(t, []string{
		"network.ports=8 network.organization=oq-xp", "network.ports=8 network.organization=voq",
		"network.ports=32 network.organization=oq-xp", "network.ports=32 network.organization=voq",
	}, labels)

	s, err := ParseSeries(" network.ports=32  network.combine_units=5 ")
	require.NoError(t, err)
	require.Equal(t, SeriesSpec{{"network.ports", "32"}, {"network.combine_units", "5"}}, s)
	for _, bad := range []string{"", "  ", "network.ports", "network.ports=", "=3"} {
		_, err := ParseSeries(bad)
		require.Error(t, err, bad)
	}
}

func TestPlan(t *testing.T) {
	base := config.Default()
	series := Product([]Axis{{"network.organization", []string{"voq", "oq-xp"}}})
	specs, err := Plan(base, Axis{"traffic.load", []string{"0.9", "0.1", "0.5"}}, series)
	require.NoError(t, err)
	require.Len(t, specs, 6)
	for i, s := range specs {
		require.Equal(t, i, s.Index)
		require.Equal(t, "traffic.load", s.XKey)
		require.Equal(t, s.X, s.Config.Traffic.Load)
		require.Equal(t, []float64{0.1, 0.5, 0.9}[i%3], s.X, "x increasing within a series")
		org := []string{"voq", "oq-xp"}[i/3]
		require.Equal(t, "network.organization="+org, s.Series)
		require.Equal(t, org, s.Config.Network.Organization)
	}

	// a single load and another key on the x axis
	specs, err = Plan(base, Axis{"traffic.message_bytes", []string{"4096", "64"}}, nil)
	require.NoError(t, err)
	require.Len(t, specs, 2)
	require.Equal(t, 64.0, specs[0].X)
	require.Equal(t, 64, specs[0].Config.Traffic.MessageBytes)
	require.Equal(t, "", specs[0].Series)
	require.Equal(t, base.Traffic.Load, specs[1].Config.Traffic.Load)

	// a list's x is the product of its entries: one number is that number
	// (the nodes of a line), 4x4 is 16 (the nodes of the mesh)
	torus := base
	require.NoError(t, torus.Set("network.topology=mesh"))
	specs, err = Plan(torus, Axis{"network.dims", []string{"16", "4"}}, nil)
	require.NoError(t, err)
	require.Equal(t, []float64{4, 16}, []float64{specs[0].X, specs[1].X})
	require.Equal(t, []int{16}, specs[1].Config.Network.Dims)
	specs, err = Plan(torus, Axis{"network.dims", []string{"8x8", "2", "4x4", "2x2x2"}}, nil)
	require.NoError(t, err)
	var xs []float64
	var dims [][]int
	for _, s := range specs {
		xs, dims = append(xs, s.X), append(dims, s.Config.Network.Dims)
	}
	require.Equal(t, []float64{2, 8, 16, 64}, xs)
	require.Equal(t, [][]int{{2}, {2, 2, 2}, {4, 4}, {8, 8}}, dims)
	_, err = Plan(torus, Axis{"network.dims", []string{"4x4", "16"}}, nil)
	require.ErrorContains(t, err, "network.dims: two values are both x = 16 (a list's x is the product of its entries)")

	// the ports key moves inputs along unless set (config's rule holds)
	specs, err = Plan(base, Axis{"network.ports", []string{"16"}}, nil)
	require.NoError(t, err)
	require.Equal(t, 16, specs[0].Config.Network.Inputs)

	for name, tc := range map[string]struct {
		x      Axis
		series []SeriesSpec
		want   string
	}{
		"non-numeric x":      {Axis{"network.organization", []string{"voq"}}, nil, "network.organization"},
		"bad x value":        {Axis{"traffic.load", []string{"1.5"}}, nil, "traffic.load"},
		"unknown x key":      {Axis{"traffic.bogus", []string{"1"}}, nil, "traffic.bogus"},
		"bad series value":   {Axis{"traffic.load", []string{"0.5"}}, []SeriesSpec{{{"network.organization", "crossbar"}}}, "network.organization"},
		"series is x":        {Axis{"traffic.load", []string{"0.5"}}, []SeriesSpec{{{"traffic.load", "0.1"}}}, "traffic.load"},
		"series twice":       {Axis{"traffic.load", []string{"0.5"}}, []SeriesSpec{{{"network.ports", "8"}}, {{"network.ports", "8"}}}, "twice"},
		"key twice":          {Axis{"traffic.load", []string{"0.5"}}, []SeriesSpec{{{"network.ports", "8"}, {"network.ports", "16"}}}, "twice"},
		"cross-key mismatch": {Axis{"traffic.load", []string{"0.5"}}, []SeriesSpec{{{"network.inputs", "8"}, {"network.ports", "4"}}}, "network.inputs"},
	} {
		_, err := Plan(base, tc.x, tc.series)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), tc.want, name)
	}
}

// A list-valued key (network.dims) varies with x between a value's
// entries, since the comma separates the values; the label keeps the x.
func TestPlanVariesAListKey(t *testing.T) {
	base := config.Default()
	require.NoError(t, base.Set("network.topology=torus"))
	ax, err := ParseAxis("network.dims=4x4, 8x8,16,4x4x4")
	require.NoError(t, err)
	specs, err := Plan(base, Axis{LoadKey, []string{"0.2"}}, Product([]Axis{ax}))
	require.NoError(t, err)
	var dims [][]int
	var labels []string
	for _, s := range specs {
		dims = append(dims, s.Config.Network.Dims)
		labels = append(labels, s.Series)
	}
	require.Equal(t, [][]int{{4, 4}, {8, 8}, {16}, {4, 4, 4}}, dims)
	require.Equal(t, []string{"network.dims=4x4", "network.dims=8x8", "network.dims=16", "network.dims=4x4x4"}, labels)

	series, err := ParseSeries("network.dims=8x4 router.vcs=4")
	require.NoError(t, err)
	specs, err = Plan(base, Axis{LoadKey, []string{"0.2"}}, []SeriesSpec{series})
	require.NoError(t, err)
	require.Equal(t, []int{8, 4}, specs[0].Config.Network.Dims)

	// Not a list key: x is a value like any other, refused by the key.
	_, err = Plan(base, Axis{LoadKey, []string{"0.2"}}, []SeriesSpec{{{"network.ports", "4x4"}}})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "4x4,8x8")
	// The comma form of one list is two values; the error says how to
	// write a list.
	ax, err = ParseAxis("network.dims=8,8")
	require.NoError(t, err)
	_, err = Plan(base, Axis{LoadKey, []string{"0.2"}}, Product([]Axis{ax}))
	require.ErrorContains(t, err, `series "network.dims=8" is given twice (a sweep writes a list value with x between the entries: network.dims=4x4,8x8)`)
	_, err = Plan(base, Axis{LoadKey, []string{"0.2"}}, []SeriesSpec{{{"network.dims", "[4"}}})
	require.ErrorContains(t, err, "network.dims=4x4,8x8")
}
