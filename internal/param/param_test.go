package param

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrorAndRename(t *testing.T) {
	for _, tc := range []struct {
		err        error
		plain, key string
	}{
		{Errorf("crossbar.Params.Ports", "%d is out of range; allowed 2..64", 70),
			"crossbar.Params.Ports: 70 is out of range; allowed 2..64", "network.ports: 70 is out of range; allowed 2..64"},
		{Errorf("crossbar.Params.CombineUnits", "allowed with voq: 0 (or {crossbar.Params.Org}: oq-xp)"),
			"crossbar.Params.CombineUnits: allowed with voq: 0 (or crossbar.Params.Org: oq-xp)",
			"network.combine_units: allowed with voq: 0 (or network.organization: oq-xp)"},
		{fmt.Errorf("leaf(3): %w", Errorf("x.Unknown", "bad {y.Unknown}")),
			"leaf(3): x.Unknown: bad y.Unknown", "leaf(3): x.Unknown: bad y.Unknown"},
		{fmt.Errorf("no param here"), "no param here", "no param here"},
		{Errorf("crossbar.Params.Ports", "unclosed {brace"), "crossbar.Params.Ports: unclosed {brace", "network.ports: unclosed {brace"},
	} {
		keys := map[string]string{"crossbar.Params.Ports": "network.ports", "crossbar.Params.CombineUnits": "network.combine_units",
			"crossbar.Params.Org": "network.organization"}
		require.EqualError(t, tc.err, tc.plain)
		renamed := Rename(tc.err, func(p string) (string, bool) { k, ok := keys[p]; return k, ok })
		require.EqualError(t, renamed, tc.key)
	}
}
