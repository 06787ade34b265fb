package rtl

import "github.com/hwcoll/hwcoll/vcd"

// Enum names the values of an enumerated signal (a VC's state, an ALU's
// operation) for the waveform viewer: the VCD keeps the numbers, and the
// GTKWave save file shows the names through a translate filter file
// (vcd.Enum). Declare one per kind of value, once, beside the constants it
// names, and give it to the probes that hold them with Named.
type Enum = vcd.Enum

// NewEnum names values 0, 1, … ("" leaves a value a number); name is the
// filter file's stem (letters, digits, '_', '-'), so it says what kind of
// value it is: vc_state, tree_alu_op.
func NewEnum(name string, values ...string) *Enum { return vcd.NewEnum(name, values...) }

// Named declares that a probe's (register's, port's) values are e's. It
// changes nothing in the VCD; TracedSignal.Enum carries it to the save
// file. The Opt holds only the pointer, so declaring millions of probes
// with it allocates nothing, and e must be one value shared by all of
// them (a package variable), not made per declaration.
func Named(e *Enum) Opt { return Opt{enum: e} }

// NameValues gives each signal of groups that is one of sigs and has an
// Enum that Enum, for the save file's translate filters: the groups come
// from code that knows the topology but not the declarations.
func NameValues(groups []vcd.Group, sigs []TracedSignal) {
	enums := map[string]*Enum{}
	for _, s := range sigs {
		if s.Enum != nil {
			enums[s.Path] = s.Enum
		}
	}
	if len(enums) == 0 {
		return
	}
	for i := range groups {
		for j := range groups[i].Signals {
			if e, ok := enums[groups[i].Signals[j].Name]; ok {
				groups[i].Signals[j].Enum = e
			}
		}
	}
}
