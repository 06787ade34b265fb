package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hwcoll/hwcoll/config"
)

// Manifest lists the experiments `hwcoll figures` (make figures) runs to
// compare the model with the papers (configs/figures.yaml). Every entry is
// a sweep as `hwcoll sweep` runs it: a config file, --set keys, an x axis,
// series, plus the paper's statement and the metrics that turn the sweep
// into the numbers docs/results.md puts beside it.
type Manifest struct {
	Experiments []Experiment `yaml:"experiments"`

	dir  string // the manifest's directory: config paths are relative to it
	path string // the manifest file, for the record
}

// Experiment is one entry of the manifest.
type Experiment struct {
	Name    string   `yaml:"name"`   // directory under the output (figures/NAME); [a-z0-9-]
	Title   string   `yaml:"title"`  // one line: what is run
	Source  string   `yaml:"source"` // where the paper says it: "the OQ-router paper §3.1"
	Paper   string   `yaml:"paper"`  // the paper's statement, in its words or close to them
	Config  string   `yaml:"config"` // YAML config, relative to the manifest
	Set     []string `yaml:"set"`    // key=value overrides, as --set
	X       string   `yaml:"x"`      // the x axis, as --x: KEY=V1,V2,... or KEY=FROM:TO:STEP
	Vary    []string `yaml:"vary"`   // series, as --vary (every combination)
	Series  []string `yaml:"series"` // or explicit series, as --series "KEY=V KEY=V"
	Metrics []Metric `yaml:"metrics"`
	Note    string   `yaml:"note"`    // a fact about the model that bears on the comparison
	Pending string   `yaml:"pending"` // not run (yet): why; delete the line to switch it on
}

// Metric turns an experiment's rows into one number per series.
type Metric struct {
	// Kind is one of:
	//   saturation: the highest accepted load over the sweep (x = load);
	//   throughput: the highest delivered load over the sweep (x = load):
	//     what reaches the destinations, which a window short against
	//     the network's buffers cannot inflate (accepted load counts
	//     packets that only fill buffers: a large network with deep
	//     buffers accepts far more than it delivers over a short window);
	//   knee: the highest offered load up to which every point is stable and
	//     its average latency at most Factor times that of the lowest load;
	//   completion: the completion time in cycles at x = At (default: the
	//     largest x); with Compare [A, B] also the x values where series A
	//     completes sooner than series B, and B/A at At;
	//   latency: the average latency in cycles at x = At (default: the
	//     smallest x); Compare as for completion;
	//   field: the JSON field Field of the results at x = At (default: the
	//     largest x): a number, a boolean (1 true, 0 false), or an object
	//     of numbers (messages_by_type: the sum, each entry listed in the
	//     report; NAME.KEY reads one entry); Compare as for completion;
	//   speedup: the completion time at the smallest x divided by that at
	//     x = At (default: the largest x).
	Kind    string             `yaml:"kind"`
	Factor  float64            `yaml:"factor"`  // knee: latency factor (default 3)
	At      float64            `yaml:"at"`      // completion, latency, field, speedup: the x value
	Compare []string           `yaml:"compare"` // completion, latency, field: two series selectors
	Field   string             `yaml:"field"`   // field: the JSON field (wall_seconds, miss_rate, messages_by_type.GetX)
	Paper   map[string]float64 `yaml:"paper"`   // the paper's numbers by series selector ("" or "*": every series)
	// Tolerance is how far ours may be from the paper's number for the
	// comment to say "within" (default 0.05 for loads, 10% for times,
	// fields and speedups; a boolean field must equal it).
	Tolerance float64 `yaml:"tolerance"`
}

// Metric kinds.
const (
	Saturation = "saturation"
	Throughput = "throughput"
	Knee       = "knee"
	Completion = "completion"
	Latency    = "latency"
	Field      = "field"
	Speedup    = "speedup"
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// LoadManifest reads and checks a manifest: unknown fields, names, metric
// kinds, and every experiment's config and sweep (so a pending entry is
// ready to run). Errors name the file and the entry.
func LoadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	m.path = path
	return m, nil
}

// ParseManifest is LoadManifest on bytes; dir is where config paths start.
func ParseManifest(data []byte, dir string) (*Manifest, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	m := &Manifest{dir: dir}
	if err := dec.Decode(m); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty manifest; expected experiments: [...]")
		}
		return nil, fmt.Errorf("%s", strings.Join(strings.Fields(err.Error()), " "))
	}
	if len(m.Experiments) == 0 {
		return nil, errors.New("experiments: none listed")
	}
	seen := map[string]bool{}
	for i := range m.Experiments {
		e := &m.Experiments[i]
		where := fmt.Sprintf("experiments[%d]", i)
		if e.Name != "" {
			where += " (" + e.Name + ")"
		}
		if !nameRE.MatchString(e.Name) {
			return nil, fmt.Errorf("%s: name %q: lower-case letters, digits and '-', starting with a letter or digit", where, e.Name)
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("%s: name %q is used twice", where, e.Name)
		}
		seen[e.Name] = true
		if e.Config == "" {
			return nil, fmt.Errorf("%s: config: missing (a YAML file relative to the manifest)", where)
		}
		if e.X == "" {
			return nil, fmt.Errorf("%s: x: missing (KEY=V1,V2,... or KEY=FROM:TO:STEP)", where)
		}
		if len(e.Vary) > 0 && len(e.Series) > 0 {
			return nil, fmt.Errorf("%s: vary and series both name the series; use one", where)
		}
		for j, mt := range e.Metrics {
			switch mt.Kind {
			case Saturation, Throughput, Knee, Completion, Latency, Field, Speedup:
			default:
				return nil, fmt.Errorf("%s: metrics[%d].kind %q: allowed: %s | %s | %s | %s | %s | %s | %s", where, j, mt.Kind, Saturation, Throughput, Knee, Completion, Latency, Field, Speedup)
			}
			if err := mt.check(); err != nil {
				return nil, fmt.Errorf("%s: metrics[%d].%v", where, j, err)
			}
			if mt.Factor < 0 || mt.Tolerance < 0 {
				return nil, fmt.Errorf("%s: metrics[%d]: factor and tolerance must not be negative", where, j)
			}
		}
		if _, err := m.Plan(*e); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
	}
	return m, nil
}

// check reports a metric's options that its kind does not take or needs.
func (mt Metric) check() error {
	switch {
	case mt.Kind == Field && mt.Field == "":
		return fmt.Errorf("field: missing; a field metric names the JSON field of the results it reports (wall_seconds, miss_rate, messages_by_type, ...)")
	case mt.Kind == Field:
		if _, err := lookupField(mt.Field); err != nil {
			return err
		}
	case mt.Field != "":
		return fmt.Errorf("field: only a metric of kind %s reads a field, not %s", Field, mt.Kind)
	}
	switch mt.Kind {
	case Completion, Latency, Field:
		if len(mt.Compare) != 0 && len(mt.Compare) != 2 {
			return fmt.Errorf("compare: two series selectors, got %d", len(mt.Compare))
		}
	default:
		if len(mt.Compare) != 0 {
			return fmt.Errorf("compare: only %s, %s and %s metrics compare two series, not %s", Completion, Latency, Field, mt.Kind)
		}
	}
	return nil
}

// Path is the manifest file ("" when parsed from bytes).
func (m *Manifest) Path() string { return m.path }

// ConfigPath is the experiment's config file as a path from the current
// directory.
func (m *Manifest) ConfigPath(e Experiment) string {
	if filepath.IsAbs(e.Config) {
		return e.Config
	}
	return filepath.Join(m.dir, e.Config)
}

// Plan lists the experiment's points.
func (m *Manifest) Plan(e Experiment) ([]Spec, error) {
	cfg, err := config.Load(m.ConfigPath(e))
	if err != nil {
		return nil, err
	}
	for _, s := range e.Set {
		if err := cfg.Set(s); err != nil {
			return nil, fmt.Errorf("set: %v", err)
		}
	}
	x, err := ParseAxis(e.X)
	if err != nil {
		return nil, fmt.Errorf("x %q: %v", e.X, err)
	}
	series, err := e.seriesSpecs()
	if err != nil {
		return nil, err
	}
	return Plan(cfg, x, series)
}

func (e Experiment) seriesSpecs() ([]SeriesSpec, error) {
	if len(e.Vary) > 0 {
		var axes []Axis
		for _, v := range e.Vary {
			ax, err := ParseAxis(v)
			if err != nil {
				return nil, fmt.Errorf("vary %q: %v", v, err)
			}
			axes = append(axes, ax)
		}
		return Product(axes), nil
	}
	var out []SeriesSpec
	for _, s := range e.Series {
		sp, err := ParseSeries(s)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

// Command is the `hwcoll sweep` command line that runs the experiment into
// dir (for the record in docs/results.md).
func (m *Manifest) Command(e Experiment, dir string) string {
	q := func(s string) string {
		if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:,@%") == "" {
			return s
		}
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	parts := []string{"hwcoll sweep --config", q(m.ConfigPath(e))}
	for _, s := range e.Set {
		parts = append(parts, "--set", q(s))
	}
	parts = append(parts, "--x", q(e.X))
	for _, v := range e.Vary {
		parts = append(parts, "--vary", q(v))
	}
	for _, s := range e.Series {
		parts = append(parts, "--series", q(s))
	}
	parts = append(parts, "--out", q(dir))
	return strings.Join(parts, " ")
}
