package routing_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/irregular"
	"github.com/hwcoll/hwcoll/multistage"
	"github.com/hwcoll/hwcoll/routing"
)

// Every registered name resolves for each kind of network it serves, made
// by the package that builds that kind, and is refused for the others
// with one line naming the functions that kind allows; a name in no entry
// is refused by every kind.
func TestRegistryResolvesByKind(t *testing.T) {
	m, err := multistage.New(multistage.Omega, 2, 8, 1)
	require.NoError(t, err)
	g, err := irregular.Parse(strings.NewReader("switches 3\nhosts 1\n0 1\n1 2\n"))
	require.NoError(t, err)
	irr, err := irregular.NewNetwork(g, 1)
	require.NoError(t, err)
	kinds := []struct {
		kind    routing.Kind
		phrase  string
		allowed string
		spec    func(name string) (routing.Spec, error)
	}{
		{routing.Direct, "a torus or mesh", "dor | west-first | north-last | negative-first | planar-adaptive | duato | bgl", routing.Lookup},
		{routing.MIN, "a MIN", "updown | table | source", m.Spec},
		{routing.Irregular, "an irregular network", "updown | table | source", irr.Spec},
	}
	require.Len(t, kinds, len(routing.Kinds))
	names := []string{"bogus"}
	for _, e := range routing.Entries() {
		names = append(names, e.Name)
		require.NotEmpty(t, e.Doc, e.Name)
		require.NotContains(t, e.Doc, "\n", e.Name)
		require.NotEmpty(t, e.Kinds, e.Name)
	}
	for _, k := range kinds {
		require.Equal(t, k.allowed, strings.Join(routing.NamesFor(k.kind), " | "), "%v", k.kind)
		for _, name := range names {
			t.Run(fmt.Sprintf("%v/%s", k.kind, name), func(t *testing.T) {
				s, err := k.spec(name)
				if !slices.Contains(routing.NamesFor(k.kind), name) {
					require.EqualError(t, err, fmt.Sprintf("%q does not route %s; allowed: %s", name, k.phrase, k.allowed))
					return
				}
				require.NoError(t, err)
				require.Equal(t, name, s.Name)
				require.NotNil(t, s.F)
			})
		}
	}
}

// NamesFor and Entries agree: a kind's names are the entries that list it.
func TestRegistryEntriesAndNames(t *testing.T) {
	for _, k := range routing.Kinds {
		var want []string
		for _, e := range routing.Entries() {
			if slices.Contains(e.Kinds, k) {
				want = append(want, e.Name)
			}
		}
		require.Equal(t, want, routing.NamesFor(k), "%v", k)
	}
	require.Equal(t, routing.NamesFor(routing.Direct), routing.Names())
}

// Register refuses a name with no entry, a kind the entry does not serve
// (the library's own functions included) and a second registration.
func TestRegisterRefuses(t *testing.T) {
	none := func(routing.Switched) (routing.Spec, error) { return routing.Spec{}, nil }
	for _, c := range []struct {
		name string
		kind routing.Kind
		want string
	}{
		{"bogus", routing.MIN, `routing: Register("bogus"): no such routing function`},
		{"dor", routing.MIN, `routing: Register("dor", min): it does not serve a MIN`},
		{"updown", routing.Direct, `routing: Register("updown", torus, mesh): the direct networks' functions are the library's`},
		{"dor", routing.Direct, `routing: Register("dor", torus, mesh): the direct networks' functions are the library's`},
		{"table", routing.Irregular, `routing: Register("table", irregular): registered twice`},
	} {
		require.PanicsWithValue(t, c.want, func() { routing.Register(c.name, c.kind, none) }, "%s %v", c.name, c.kind)
	}
}
