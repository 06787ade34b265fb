package routing

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is a kind of network that routing functions serve.
type Kind uint8

const (
	// Direct: k-ary n-cubes and n-meshes, routed by the library's
	// functions on a Net of coordinates.
	Direct Kind = iota
	// MIN: the multistage networks (package multistage).
	MIN
	// Irregular: the irregular switch-based networks (package irregular).
	Irregular
	numKinds
)

// Kinds are every kind, in order.
var Kinds = []Kind{Direct, MIN, Irregular}

var kindNames = [numKinds]struct{ name, phrase string }{
	Direct:    {"torus, mesh", "a torus or mesh"},
	MIN:       {"min", "a MIN"},
	Irregular: {"irregular", "an irregular network"},
}

// String is the network.topology values of the kind's networks.
func (k Kind) String() string { return kindNames[k].name }

// Entry is a routing function of the registry: its name (router.routing),
// a one-line description for the config reference, and the kinds of
// network it serves, in Kind order.
type Entry struct {
	Name  string
	Doc   string
	Kinds []Kind
}

// Switched is a switch-based network that routing functions are made for
// (multistage.Network, irregular.Network): Make builds a function's Spec
// for it with what its package registered for its kind.
type Switched interface {
	RoutingKind() Kind
}

// Maker makes a routing function's Spec for a network of the kind it was
// registered for (the network's package may assert nw to its own type).
type Maker func(nw Switched) (Spec, error)

type entry struct {
	Entry
	makers [numKinds]Maker
}

// registry holds every routing function, one entry per name, in the order
// of the config reference: the library's functions of the direct networks
// first, then the switch-based networks' functions, whose packages
// register a Maker for each kind they build (Register).
var registry = []*entry{
	library(Spec{Name: "dor", F: DOR, Check: checkDOR, Bubble: allVCs, Minimal: true},
		"dimension order"),
	library(Spec{Name: "west-first", F: WestFirst, Check: checkMesh2D("west-first"), Adaptive: true, Minimal: true},
		"the turn model, 2-D meshes"),
	library(Spec{Name: "north-last", F: NorthLast, Check: checkMesh2D("north-last"), Adaptive: true, Minimal: true},
		"the turn model, 2-D meshes"),
	library(Spec{Name: "negative-first", F: NegativeFirst, Check: checkMesh("negative-first"), Adaptive: true, Minimal: true},
		"the turn model, meshes"),
	library(Spec{Name: "planar-adaptive", F: PlanarAdaptive, Check: checkPlanar, Adaptive: true, Minimal: true},
		"meshes, 3 VCs"),
	library(Spec{Name: "duato", F: Duato, Check: checkDuato, Adaptive: true, Bubble: vcMask(0), Minimal: true},
		"adaptive + a dimension-order escape VC"),
	library(Spec{Name: "bgl", F: BGL, Check: checkBGL, Adaptive: true, Bubble: bglBubble, Priority: bglPriority, Minimal: true},
		"BlueGene/L minimal adaptive on VCs 0-1 + bubble escape VC 2"),
	switched("updown", "up*/down*: adaptive among the legal shortest routes, a bmin's turnaround routing", MIN, Irregular),
	switched("table", "the same routes fixed per switch and destination", MIN, Irregular),
	switched("source", "the table's routes, carried in the header", MIN, Irregular),
}

// library is the entry of a function of the direct networks' library.
func library(s Spec, doc string) *entry {
	e := &entry{Entry: Entry{Name: s.Name, Doc: doc, Kinds: []Kind{Direct}}}
	e.makers[Direct] = func(Switched) (Spec, error) { return s, nil }
	return e
}

// switched is the entry of a function of switch-based networks, made by
// the Makers their packages register.
func switched(name, doc string, kinds ...Kind) *entry {
	return &entry{Entry: Entry{Name: name, Doc: doc, Kinds: kinds}}
}

// Register registers how the package that builds networks of kind k makes
// the named function's Spec for them; it is called from that package's
// init. The name must be an entry that serves k (a switch-based kind),
// and not yet registered for k.
func Register(name string, k Kind, m Maker) {
	e := find(name)
	switch {
	case e == nil:
		panic(fmt.Sprintf("routing: Register(%q): no such routing function", name))
	case k == Direct:
		panic(fmt.Sprintf("routing: Register(%q, %v): the direct networks' functions are the library's", name, k))
	case !slices.Contains(e.Kinds, k):
		panic(fmt.Sprintf("routing: Register(%q, %v): it does not serve %s", name, k, kindNames[k].phrase))
	case e.makers[k] != nil:
		panic(fmt.Sprintf("routing: Register(%q, %v): registered twice", name, k))
	}
	e.makers[k] = m
}

func find(name string) *entry {
	for _, e := range registry {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Entries lists every routing function, in the config reference's order.
func Entries() []Entry {
	out := make([]Entry, len(registry))
	for i, e := range registry {
		out[i] = e.Entry
		out[i].Kinds = slices.Clone(e.Kinds)
	}
	return out
}

// NamesFor lists the functions that serve networks of kind k.
func NamesFor(k Kind) []string {
	var out []string
	for _, e := range registry {
		if slices.Contains(e.Kinds, k) {
			out = append(out, e.Name)
		}
	}
	return out
}

// Names lists the library's functions (of the direct networks).
func Names() []string { return NamesFor(Direct) }

// Lookup returns the named function of the library (a direct network's;
// its Check says whether it routes a given Net).
func Lookup(name string) (Spec, error) { return build(name, Direct, nil) }

// Make returns the named function's Spec for the switch-based network nw,
// made by what nw's package registered for its kind.
func Make(name string, nw Switched) (Spec, error) { return build(name, nw.RoutingKind(), nw) }

// build is the named function's Spec for network nw of kind k; a name that
// does not serve k is an error of one line that names the ones that do.
func build(name string, k Kind, nw Switched) (Spec, error) {
	e := find(name)
	if e == nil || !slices.Contains(e.Kinds, k) {
		return Spec{}, fmt.Errorf("%q does not route %s; allowed: %s", name, kindNames[k].phrase, strings.Join(NamesFor(k), " | "))
	}
	m := e.makers[k]
	if m == nil {
		panic(fmt.Sprintf("routing: %s serves %s, and no package registered how to make it", name, kindNames[k].phrase))
	}
	s, err := m(nw)
	if err != nil {
		return Spec{}, err
	}
	s.Name = name
	return s, nil
}
