package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/routing"
)

// router.routing's reference is the routing registry's: its allowed values
// are exactly the registry's names, in its order, its description gives
// every function with its doc under the networks it serves, and Set takes
// every name and refuses any other in one line naming them all.
func TestRoutingReferenceIsTheRegistry(t *testing.T) {
	var info KeyInfo
	for _, k := range Keys() {
		if k.Key == "router.routing" {
			info = k
		}
	}
	require.Equal(t, "router.routing", info.Key)
	require.NotContains(t, info.Doc, "\n")
	groups := map[string]string{} // "for torus, mesh" → its functions
	const auto = "routing function; auto = the topology's own (dor on torus and mesh, updown on min and irregular); "
	require.True(t, strings.HasPrefix(info.Doc, auto), info.Doc)
	for _, g := range strings.Split(strings.TrimPrefix(info.Doc, auto), "; for ") {
		on, fs, ok := strings.Cut(strings.TrimPrefix(g, "for "), ": ")
		require.True(t, ok, g)
		groups[on] = fs
	}
	names := []string{Auto}
	for _, e := range routing.Entries() {
		names = append(names, e.Name)
		var on []string
		for _, k := range e.Kinds {
			on = append(on, k.String())
		}
		require.Contains(t, groups[strings.Join(on, ", ")], e.Name+" ("+e.Doc+")")
	}
	require.Equal(t, strings.Join(names, " | "), info.Allowed)
	for _, name := range names {
		c := Default()
		require.NoError(t, c.Set("router.routing="+name))
		require.NoError(t, c.Validate())
	}
	c := Default()
	require.EqualError(t, c.Set("router.routing=bogus"), `router.routing: "bogus" is not allowed; allowed: `+strings.Join(names, " | "))
}
