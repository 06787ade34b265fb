package dsmprog

import (
	"fmt"
	"strings"

	"github.com/hwcoll/hwcoll/dsm"
)

// entry is one program of the registry: what its size means, its
// default and its largest size.
type entry struct {
	name  string
	size  string // what size counts
	def   int
	max   int
	build func(size int, seed uint64) dsm.Program
}

var registry = []entry{
	{"radix", "keys", RadixDefaultKeys, RadixMaxKeys,
		func(n int, seed uint64) dsm.Program { return NewRadix(n, seed) }},
	{"barnes", "bodies", BarnesDefaultBodies, BarnesMaxBodies,
		func(n int, seed uint64) dsm.Program { return NewBarnes(n, seed) }},
	{"false-sharing", "increments per processor", 64, KernelMaxSize,
		func(n int, _ uint64) dsm.Program { return &FalseSharing{Iters: n} }},
	{"producer-consumer", "records handed down the chain", 16, KernelMaxSize,
		func(n int, seed uint64) dsm.Program { return &ProducerConsumer{Rounds: n, Seed: seed} }},
	{"lock-contention", "locked increments per processor", 16, KernelMaxSize,
		func(n int, _ uint64) dsm.Program { return &LockContention{Iters: n} }},
	{"migratory", "rounds of the record through every processor", 8, KernelMaxSize,
		func(n int, _ uint64) dsm.Program { return &Migratory{Rounds: n} }},
	{"random", "references per processor", 200, KernelMaxSize,
		func(n int, seed uint64) dsm.Program { return &Random{Refs: n, Seed: seed} }},
}

// minSize is the smallest size a program takes (barnes needs two bodies).
func (e entry) minSize() int {
	if e.name == "barnes" {
		return 2
	}
	return 1
}

// Names lists the programs New knows, applications first.
func Names() []string {
	n := make([]string, len(registry))
	for i, e := range registry {
		n[i] = e.name
	}
	return n
}

// SizeDoc says what a program's size counts and its default, e.g.
// "keys (default 1048576, 1..67108864)"; "" for an unknown name.
func SizeDoc(name string) string {
	for _, e := range registry {
		if e.name == name {
			return fmt.Sprintf("%s (default %d, %d..%d)", e.size, e.def, e.minSize(), e.max)
		}
	}
	return ""
}

// New is the program name of the given size (0: its default; see
// SizeDoc), its data drawn from seed. An unknown name or a size out of
// range is an error that says what is allowed.
func New(name string, size int, seed uint64) (dsm.Program, error) {
	for _, e := range registry {
		if e.name != name {
			continue
		}
		if size == 0 {
			size = e.def
		}
		if size < e.minSize() || size > e.max {
			return nil, fmt.Errorf("%s: size %d: the size is %s, allowed %d..%d (0 for the default %d)",
				name, size, e.size, e.minSize(), e.max, e.def)
		}
		return e.build(size, seed), nil
	}
	return nil, fmt.Errorf("unknown program %q (allowed: %s)", name, strings.Join(Names(), " | "))
}
