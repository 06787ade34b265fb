package experiment

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
)

// notFromConfig are block parameters no config key sets (the experiment
// layer fills them in); their errors keep the Go name.
var notFromConfig = map[string]string{
	"combine.Params.Buffer":       "the unit buffer follows the crosspoint capacity",
	"router.Params.InjectPackets": "the injection FIFO is fixed by the experiment (4 packets)",
	"router.Params.Net":           "the routing network follows network.dims, whose 1..3 dimensions stay within the router's 8 ports",
	"dsm.Params.Nodes":            "a DSM machine has a node at every host of its network",
}

// Every parameter a block names in an error (param.Errorf, and {…}
// references in the messages) maps to a config key that exists, or is
// listed as not set from the config; and no mapping is stale.
func TestParamKeysCoverTheBlocks(t *testing.T) {
	keys := map[string]bool{}
	for _, k := range config.Keys() {
		keys[k.Key] = true
	}
	for p, k := range paramKeys {
		require.True(t, keys[k], "%s maps to %s, which is not a config key", p, k)
	}
	named := map[string]bool{}
	errf := regexp.MustCompile(`param\.Errorf\("([^"]+)"`)
	ref := regexp.MustCompile(`\{(([a-z]+)\.[A-Z][A-Za-z.()]*)\}`)
	files, err := filepath.Glob("../*/*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "../experiment/") || strings.HasPrefix(f, "../internal/") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range errf.FindAllStringSubmatch(string(src), -1) {
			named[m[1]] = true
		}
		for _, m := range ref.FindAllStringSubmatch(string(src), -1) {
			if _, err := os.Stat("../" + m[2]); err == nil { // a package's parameter, not a Go literal
				named[m[1]] = true
			}
		}
	}
	require.Greater(t, len(named), 15, "the scan finds the blocks' parameters")
	for p := range named {
		_, internal := notFromConfig[p]
		_, mapped := paramKeys[p]
		require.True(t, mapped || internal, "%s is named in a block's error but has no config key in paramKeys", p)
	}
	for p := range paramKeys {
		require.True(t, named[p], "paramKeys maps %s, which no block names", p)
	}
}

// Errors from inside the blocks reach the user with the config key first,
// the text the block wrote after it, and other parameters it names renamed.
func TestBlockErrorsNameKeys(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"network.ports=70"}, "network.ports: 70 is out of range for a crossbar; allowed 2..64"},
		{[]string{"network.topology=fattree", "network.ports=8", "network.nodes=100"},
			"network.nodes: 100 nodes cannot be a fat-tree of 8-port switches; allowed: (ports/2)^n = 4^n nodes, e.g. 64 or 256"},
		{[]string{"network.topology=fattree", "network.ports=2", "network.nodes=4"}, "use network.ports ≥ 4"},
		{[]string{"network.organization=voq", "network.credit_mode=per-crosspoint"},
			"network.credit_mode: per-crosspoint credits need crosspoint buffers, which voq has not; allowed with voq: min-free, per-link (or network.organization: oq-xp)"},
		{[]string{"traffic.pattern=multicast", "traffic.fanout=8"}, "traffic.fanout: 8 is out of range for 8 ports; allowed 1..7"},
		{[]string{"network.topology=fattree", "network.ports=8", "network.nodes=16", "traffic.pattern=multicast",
			"traffic.multicast=software", "traffic.message_bytes=1073741824", "packet.bytes=8"},
			"traffic.message_bytes: 1073741824 bytes are 134217728 packets of packet.bytes 8; allowed: at most 65536 packets a message"},
	} {
		cfg := config.Default()
		for _, s := range tc.sets {
			require.NoError(t, cfg.Set(s), s)
		}
		require.NoError(t, cfg.Validate(), "%v", tc.sets)
		_, err := Run(cfg, Options{})
		require.ErrorContains(t, err, tc.want, "%v", tc.sets)
		require.NotContains(t, err.Error(), "Params", "%v: a Go name reached the user", tc.sets)
	}
}

// Only the experiment layer, the runner and the command read the config:
// the blocks and networks take typed parameters.
func TestBlocksDoNotImportConfig(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/hwcoll/hwcoll/...").Output()
	require.NoError(t, err)
	readers := map[string]bool{"experiment": true, "config": true, "sweep": true, "cmd/hwcoll": true, "scenario": true}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], "github.com/hwcoll/hwcoll/")
		seen++
		if readers[pkg] {
			continue
		}
		for _, imp := range f[1:] {
			require.NotEqual(t, "github.com/hwcoll/hwcoll/config", imp, "%s imports config; give it typed parameters", pkg)
		}
	}
	require.Greater(t, seen, 15)
}
