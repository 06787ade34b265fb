package experiment_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
)

// The tour (hwcoll demo) is the registered topologies' Demos: every one
// is in it, in one section a paper, and every run it lists is a config
// the runner takes, so the demo never meets bad input of its own.
func TestDemoTourIsTheRegistry(t *testing.T) {
	tour := experiment.Tour()
	require.NotEmpty(t, tour)
	in := map[string]bool{}
	titles := map[string]bool{}
	for _, s := range tour {
		require.NotEmpty(t, s.Title)
		require.False(t, titles[s.Title], "section %q twice: its parts must be together", s.Title)
		titles[s.Title] = true
		require.NotEmpty(t, s.Parts, s.Title)
		for _, p := range s.Parts {
			in[p.Topology] = true
		}
	}
	with := 0
	for _, name := range experiment.Topologies() {
		top, err := experiment.TopologyOf(config.Config{Network: config.Network{Topology: name}})
		require.NoError(t, err)
		if top.Demo != nil {
			with++
			require.True(t, in[name], "%s has a Demo but is not in the tour", name)
			require.NotEmpty(t, top.Demo.Parts, name)
		} else {
			require.False(t, in[name], name)
		}
	}
	require.Equal(t, len(in), with)
	// Every network of the source papers contributes.
	require.Len(t, in, len(experiment.Topologies()), "a registered topology without a Demo")
}

func TestDemoPartsRun(t *testing.T) {
	files := map[string]string{}
	sweeps := 0
	for _, s := range experiment.Tour() {
		byTitle := map[string][]string{}
		for _, p := range s.Parts {
			require.NotEmpty(t, p.Title, "%s part in %q", p.Topology, s.Title)
			if len(p.Loads) > 0 {
				sweeps++
				cfg, err := p.RunConfig(-1)
				require.NoError(t, err)
				require.NoError(t, experiment.Check(cfg), p.Title)
				continue
			}
			require.NotEmpty(t, p.Runs, p.Title)
			require.NotEmpty(t, p.Columns, p.Title)
			var headers []string
			for _, c := range p.Columns {
				require.NotNil(t, c.Cell, "%s: column %q", p.Title, c.Header)
				headers = append(headers, c.Header)
			}
			headers = append(headers, p.RowHeader)
			if prev, ok := byTitle[p.Title]; ok {
				require.Equal(t, prev, headers, "parts titled %q share a table: their columns must match", p.Title)
			}
			byTitle[p.Title] = headers
			top, err := experiment.TopologyOf(config.Config{Network: config.Network{Topology: p.Topology}})
			require.NoError(t, err)
			for i, run := range p.Runs {
				require.NotEmpty(t, run.Label, p.Title)
				cfg, err := p.RunConfig(i)
				require.NoError(t, err)
				require.Equal(t, p.Topology, cfg.Network.Topology, "%s: the registration's topology", run.Label)
				require.NoError(t, experiment.Check(cfg), "%s: %s", p.Title, run.Label)
				if run.Versus != "" {
					n := 0
					for _, o := range p.Runs {
						if o.Label == run.Versus {
							n++
						}
					}
					require.Equal(t, 1, n, "%s: Versus %q names one row of its part", run.Label, run.Versus)
					require.NotEqual(t, run.Label, run.Versus)
					require.GreaterOrEqual(t, p.Versus(i), 0)
				} else {
					require.Equal(t, -1, p.Versus(i))
				}
				for _, f := range []string{fileOf(run.Trace), pcapOf(run.Pcap)} {
					if f == "" {
						continue
					}
					require.Equal(t, f, filepath.Base(f), "a file name in the demo's directory")
					require.Empty(t, files[f], "%s written by %s and %s", f, files[f], run.Label)
					files[f] = run.Label
				}
				if run.Trace != nil {
					require.Equal(t, ".vcd", filepath.Ext(run.Trace.File))
					require.NotEmpty(t, run.Trace.Glob)
				}
				if run.Pcap != nil {
					require.True(t, top.Abilities.Pcap, "%s captures on %s, which cannot", run.Label, p.Topology)
				}
			}
		}
	}
	require.LessOrEqual(t, sweeps, 1, "one load sweep: its results and plots have fixed names")
}

func fileOf(tr *experiment.DemoTrace) string {
	if tr == nil {
		return ""
	}
	return tr.File
}

func pcapOf(p *experiment.DemoPcap) string {
	if p == nil {
		return ""
	}
	return p.File
}

// A part that names a config file is that file: Base is what the file
// sets, so the command the demo prints (hwcoll run --config FILE with the
// part's and the run's sets) repeats the row.
func TestDemoBaseIsItsConfigFile(t *testing.T) {
	n := 0
	for _, s := range experiment.Tour() {
		for _, p := range s.Parts {
			if p.Config == "" {
				continue
			}
			n++
			file, err := config.Load(filepath.Join("..", "configs", p.Config))
			require.NoError(t, err)
			base := config.Default()
			for _, set := range append([]string{"network.topology=" + p.Topology}, p.Base...) {
				require.NoError(t, base.Set(set), p.Config)
			}
			require.Equal(t, file, base, "%s: Base must set what the file sets", p.Config)
			for i := range p.Runs {
				cfg, err := p.RunConfig(i)
				require.NoError(t, err)
				byHand := file
				args := p.Command(i)
				require.Equal(t, []string{"hwcoll", "run", "--config", "configs/" + p.Config}, args[:4])
				for k := 4; k < len(args); k += 2 {
					require.Equal(t, "--set", args[k])
					require.NoError(t, byHand.Set(args[k+1]))
				}
				require.Equal(t, cfg, byHand, "%s: the command repeats the row", p.Runs[i].Label)
			}
		}
	}
	require.Positive(t, n)
}

// Tour orders sections by their lowest Order and keeps a section's parts
// together, by Order.
func TestDemoTourOrder(t *testing.T) {
	tour := experiment.Tour()
	var names []string
	for _, s := range tour {
		for _, p := range s.Parts {
			if len(names) == 0 || names[len(names)-1] != p.Topology {
				names = append(names, p.Topology)
			}
		}
	}
	require.Equal(t, []string{"switch", "fattree", "bgltree", "torus", "ibmesh", "mesh", "min", "irregular"}, names)
}
