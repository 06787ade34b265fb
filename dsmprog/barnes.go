package dsmprog

import (
	"fmt"
	"math"
	"slices"

	"github.com/hwcoll/hwcoll/dsm"
)

// Barnes is the SPLASH-2 Barnes–Hut N-body simulation (the paper's
// Barnes, 8K bodies): 3-D gravitation with the force on a body taken
// from a shared octree of monopole cells, opening angle Theta.
//
// The bodies are a Plummer model (SPLASH-2's testdata generator), drawn
// from Seed and numbered in Morton (Z-curve) order of their initial
// positions. Each processor owns a zone, a contiguous range of bodies in
// that order, hence a compact region of space: in the first step equal
// blocks ([i·N/P, (i+1)·N/P)), then SPLASH-2's costzones, cut so each
// zone's walks cost the same in the step before (see zoneEdge). A time
// step is five phases separated by barriers:
//
//  1. bounds: each processor publishes its row: the bounding box of its
//     bodies, its zone's first body and the zone's cost (done at the end
//     of the previous step's update, or once at the start); processor 0
//     empties the root cell and the cell pool;
//  2. tree build: every processor reads the P rows into the root cube and
//     its new zone, and inserts its bodies into the shared octree. A
//     descent reads child words without locks; a slot is changed only
//     under its cell's lock (hashed into a lock array, as SPLASH-2's
//     CellLock), re-read under the lock; a body in the way is pushed down
//     into new cells taken from the pool by FetchAdd, filled in privately
//     and published by one store of the slot after a release fence;
//  3. centre of mass, bottom up without waiting: the cells are dealt out
//     in index ranges; a processor starts at each of its cells that has
//     only bodies below it, and after finishing a cell FetchAdds its
//     parent's arrival count; the arrival that completes the parent goes
//     on to finish the parent, so every cell is finished once, after its
//     children, and the last to finish is the root;
//  4. forces: each processor walks the tree for each of its bodies,
//     opening a cell when size/distance > Theta or the body lies inside
//     it, and stores the body's acceleration and cost (nodes visited);
//  5. update: velocity and position of its bodies (kick, drift), then the
//     row of the next step. In the last step the positions the forces
//     were computed from are kept, so Verify can recompute the forces.
//
// Any processor count works; zones may be empty.
type Barnes struct {
	N     int     // bodies (size)
	Steps int     // time steps (default 2)
	Theta float64 // opening angle (default 1.0, as SPLASH-2's tol)
	Eps   float64 // softening (SPLASH-2: 0.05)
	Dt    float64 // time step (SPLASH-2: 0.025)
	Seed  uint64

	procs    int
	bodies   dsm.Addr
	cells    dsm.Addr
	maxCells int
	pool     dsm.Addr // next free cell
	bounds   dsm.Addr // per processor a row: min xyz, max xyz, zone start, zone cost
	bStride  uint64
	locks    LockArray
	bar      *Barrier
	walks    [][]walkItem // per processor: its private walk stack
	cells0   int          // cells of the first step's tree, built serially in Setup

	// Verify's bound on |a_tree − a_direct| / S_i, S_i = Σ_j |a_ij|.
	Tol float64

	bug string // test hook: "nolock" inserts without locks, "com" halves octant 7's mass in centres of mass
}

// Barnes defaults.
const (
	BarnesDefaultBodies = 8192
	BarnesMaxBodies     = 1 << 18
	BarnesCheckAll      = 512 // Verify checks every body up to this many
	BarnesSample        = 64  // and this many spread over them above it
)

// Body and cell records, 16 words each. Both start with mass and
// position, so a walk reads a node the same way whatever it is.
const (
	nMass = 0
	nPos  = 1 // 1..3

	bVel  = 4  // 4..6
	bAcc  = 8  // 8..10
	bCost = 7  // nodes the body's last walk took (costzones)
	bPos0 = 12 // 12..14: position of the last step's force computation

	cChild  = 4  // 4..11: octant k's child
	cNCells = 12 // how many children are cells
	cArrive = 13 // children whose centre of mass is done
	cParent = 14 // parent cell (noParent for the root)
	cMask   = 15 // bit k: octant k is occupied (set with the centre of mass)

	nodeWords = 16
	noParent  = math.MaxUint64
	maxDepth  = 200
)

// A child word is 0 (empty), 2b+1 for body b or 2c+2 for cell c.
func encBody(b int) uint64 { return 2*uint64(b) + 1 }
func encCell(c int) uint64 { return 2*uint64(c) + 2 }

// NewBarnes is n bodies (0: BarnesDefaultBodies), SPLASH-2's parameters,
// 2 steps.
func NewBarnes(n int, seed uint64) *Barnes {
	if n == 0 {
		n = BarnesDefaultBodies
	}
	return &Barnes{N: n, Steps: 2, Theta: 1.0, Eps: 0.05, Dt: 0.025, Seed: seed, Tol: barnesTol}
}

func (b *Barnes) Name() string { return "barnes" }

func (b *Barnes) body(i int) dsm.Addr { return b.bodies + uint64(i)*nodeWords }
func (b *Barnes) cell(c int) dsm.Addr { return b.cells + uint64(c)*nodeWords }
func (b *Barnes) node(v uint64) dsm.Addr {
	if v&1 == 1 {
		return b.body(int(v >> 1))
	}
	return b.cell(int(v>>1) - 1)
}

type vec [3]float64

func (a vec) sub(b vec) vec { return vec{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a vec) dot(b vec) float64 {
	return a[0]*b[0] + a[1]*b[1] + a[2]*b[2]
}

// plummer draws n bodies of a Plummer model as SPLASH-2's testdata does
// (Aarseth, Hénon & Wielen 1974): radius from the cumulative mass,
// velocity by rejection, scaled to standard units, moved to the centre
// of mass frame; then numbered in Morton order.
func plummer(n int, seed uint64) (pos, vel []vec) {
	x := seed
	rnd := func() float64 { return float64(splitmix64(&x)>>11) / (1 << 53) }
	shell := func(r float64) vec {
		for {
			v := vec{2*rnd() - 1, 2*rnd() - 1, 2*rnd() - 1}
			if s := v.dot(v); s > 0 && s <= 1 {
				k := r / math.Sqrt(s)
				return vec{v[0] * k, v[1] * k, v[2] * k}
			}
		}
	}
	const rsc = 3 * math.Pi / 16
	vsc := math.Sqrt(1 / rsc)
	pos, vel = make([]vec, n), make([]vec, n)
	var cp, cv vec
	for i := range n {
		var r float64
		for {
			r = 1 / math.Sqrt(math.Pow(rnd()*0.999, -2.0/3)-1)
			if r <= 9 {
				break
			}
		}
		pos[i] = shell(rsc * r)
		var q float64
		for {
			q = rnd()
			if 0.1*rnd() <= q*q*math.Pow(1-q*q, 3.5) {
				break
			}
		}
		vel[i] = shell(vsc * math.Sqrt2 * q / math.Pow(1+r*r, 0.25))
		for d := range 3 {
			cp[d] += pos[i][d] / float64(n)
			cv[d] += vel[i][d] / float64(n)
		}
	}
	for i := range n {
		pos[i], vel[i] = pos[i].sub(cp), vel[i].sub(cv)
	}
	// Morton order over the bounding box, 21 bits a dimension.
	lo, hi := bbox(pos)
	key := make([]uint64, n)
	for i, p := range pos {
		var k uint64
		for d := range 3 {
			q := uint64((p[d] - lo[d]) / (hi[d] - lo[d] + 1e-300) * (1<<21 - 1))
			k |= spread3(q) << d
		}
		key[i] = k
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case key[i] < key[j]:
			return -1
		case key[i] > key[j]:
			return 1
		}
		return 0
	})
	p2, v2 := make([]vec, n), make([]vec, n)
	for i, j := range idx {
		p2[i], v2[i] = pos[j], vel[j]
	}
	return p2, v2
}

// spread3 moves bit i of x (21 bits) to bit 3i.
func spread3(x uint64) uint64 {
	x &= 1<<21 - 1
	x = (x | x<<32) & 0x1f00000000ffff
	x = (x | x<<16) & 0x1f0000ff0000ff
	x = (x | x<<8) & 0x100f00f00f00f00f
	x = (x | x<<4) & 0x10c30c30c30c30c3
	x = (x | x<<2) & 0x1249249249249249
	return x
}

func bbox(pos []vec) (lo, hi vec) {
	lo = vec{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi = vec{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for _, p := range pos {
		for d := range 3 {
			lo[d], hi[d] = min(lo[d], p[d]), max(hi[d], p[d])
		}
	}
	return lo, hi
}

// rootCube is the cube the tree covers: centred on the box, its side the
// box's largest side with a small margin (every processor computes it
// from the same published boxes, so all get the same cube).
func rootCube(lo, hi vec) (centre vec, size float64) {
	for d := range 3 {
		centre[d] = (lo[d] + hi[d]) / 2
		size = max(size, hi[d]-lo[d])
	}
	return centre, size*1.000001 + 1e-12
}

// octant is the child of a cell centred at c that position x falls in.
func octant(x, c vec) int {
	k := 0
	for d := range 3 {
		if x[d] >= c[d] {
			k |= 1 << d
		}
	}
	return k
}

// childCentre is the centre of octant k of a cell centred at c of side size.
func childCentre(c vec, size float64, k int) vec {
	q := size / 4
	for d := range 3 {
		if k>>d&1 == 1 {
			c[d] += q
		} else {
			c[d] -= q
		}
	}
	return c
}

// bhTree is a serial Barnes–Hut octree: the tree the parallel build
// makes from the same positions (an octree with one body a leaf is unique
// for its point set and root cube), its centres of mass summed in the
// same order, walked in the same order. Verify recomputes the forces with
// it; Setup sizes the cell pool from it.
type bhTree struct {
	pos    []vec
	mass   []float64
	centre vec
	size   float64
	cells  []bhCell
}

type bhCell struct {
	child [8]int // 0 empty, -1-b body b, c+1 cell c
	mass  float64
	cm    vec
}

func newBHTree(pos []vec, mass []float64) *bhTree {
	t := &bhTree{pos: pos, mass: mass, cells: []bhCell{{}}}
	t.centre, t.size = rootCube(bbox(pos))
	for i, x := range pos {
		c, cc, sz := 0, t.centre, t.size
		for depth := 0; ; depth++ {
			if depth > maxDepth {
				panic("barnes: bodies coincide")
			}
			k := octant(x, cc)
			switch v := t.cells[c].child[k]; {
			case v > 0:
				c, cc, sz = v-1, childCentre(cc, sz, k), sz/2
				continue
			case v == 0:
				t.cells[c].child[k] = -1 - i
			default:
				t.cells = append(t.cells, bhCell{})
				n := len(t.cells) - 1
				t.cells[c].child[k] = n + 1
				nc := childCentre(cc, sz, k)
				t.cells[n].child[octant(pos[-1-v], nc)] = v
				c, cc, sz = n, nc, sz/2
				continue
			}
			break
		}
	}
	if mass != nil {
		t.moments(0)
	}
	return t
}

// moments fills in cell c's mass and centre of mass, children first.
func (t *bhTree) moments(c int) {
	var m float64
	var cm vec
	for _, v := range t.cells[c].child {
		var mk float64
		var x vec
		switch {
		case v == 0:
			continue
		case v > 0:
			t.moments(v - 1)
			mk, x = t.cells[v-1].mass, t.cells[v-1].cm
		default:
			mk, x = t.mass[-1-v], t.pos[-1-v]
		}
		addMoment(&m, &cm, mk, x)
	}
	t.cells[c].mass, t.cells[c].cm = m, centreOfMass(m, cm)
}

// force is the walk of Barnes.force on the serial tree.
func (t *bhTree) force(i int, theta, eps float64) vec {
	type item struct {
		v      int
		centre vec
		size   float64
	}
	stack := []item{{1, t.centre, t.size}}
	x := t.pos[i]
	eps2, th2 := eps*eps, theta*theta
	var acc vec
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.v == -1-i {
			continue
		}
		var y vec
		var m float64
		if it.v > 0 {
			c := &t.cells[it.v-1]
			y, m = c.cm, c.mass
			dr := y.sub(x)
			if opens(x, dr, it.centre, it.size, th2) {
				for k, v := range c.child {
					if v != 0 {
						stack = append(stack, item{v, childCentre(it.centre, it.size, k), it.size / 2})
					}
				}
				continue
			}
		} else {
			y, m = t.pos[-1-it.v], t.mass[-1-it.v]
		}
		interact(&acc, y.sub(x), m, eps2)
	}
	return acc
}

// addMoment adds a child of mass mk at x to a cell's mass and first moment.
func addMoment(m *float64, cm *vec, mk float64, x vec) {
	*m += mk
	for d := range 3 {
		cm[d] += mk * x[d]
	}
}

// centreOfMass divides the first moment by the mass.
func centreOfMass(m float64, cm vec) vec {
	for d := range 3 {
		cm[d] /= m
	}
	return cm
}

// opens is the opening test of a cell (geometric centre and side) whose
// centre of mass is dr from the body at x: size/distance > theta, or the
// body inside the cell (a cell's centre of mass can lie more than its
// side away from a body inside it; SPLASH-2's test alone would accept
// such a cell).
func opens(x, dr, centre vec, size, th2 float64) bool {
	h := size / 2
	in := math.Abs(x[0]-centre[0]) <= h && math.Abs(x[1]-centre[1]) <= h && math.Abs(x[2]-centre[2]) <= h
	return in || size*size > th2*dr.dot(dr)
}

// interact adds the softened pull of mass m at dr.
func interact(acc *vec, dr vec, m, eps2 float64) {
	r2 := dr.dot(dr) + eps2
	f := m / (r2 * math.Sqrt(r2))
	for d := range 3 {
		acc[d] += f * dr[d]
	}
}

func (b *Barnes) Setup(s *dsm.Space, procs int) error {
	switch {
	case b.N < 2 || b.N > BarnesMaxBodies:
		return fmt.Errorf("barnes: %d bodies: allowed 2..%d", b.N, BarnesMaxBodies)
	case b.Steps < 1:
		return fmt.Errorf("barnes: %d steps: need at least 1", b.Steps)
	case !(b.Theta > 0):
		return fmt.Errorf("barnes: opening angle %g: must be positive", b.Theta)
	case procs < 1:
		return fmt.Errorf("barnes: %d processors: need at least 1", procs)
	}
	b.procs = procs
	pos, vel := plummer(b.N, b.Seed)
	b.cells0 = len(newBHTree(pos, nil).cells)
	// The tree changes little in a few steps; twice the first step's
	// cells (and at least one a body) is room to spare. Run panics
	// naming the pool if it is ever exhausted.
	b.maxCells = max(2*b.cells0, b.N) + 64
	b.bodies = s.Alloc(b.N * nodeWords)
	b.cells = s.Alloc(b.maxCells * nodeWords)
	b.pool = s.Alloc(1)
	lw := s.LineWords
	b.bStride = uint64((8 + lw - 1) / lw * lw)
	b.bounds = s.Alloc(procs * int(b.bStride))
	b.locks = NewLockArray(s, min(2048, b.maxCells))
	b.bar = NewBarrier(s, procs)
	b.walks = make([][]walkItem, procs)
	for i := range b.N {
		a := b.body(i)
		s.Set(a+nMass, math.Float64bits(1/float64(b.N)))
		for d := range 3 {
			s.Set(a+nPos+uint64(d), math.Float64bits(pos[i][d]))
			s.Set(a+bVel+uint64(d), math.Float64bits(vel[i][d]))
		}
	}
	return nil
}

// Proc helpers for float words.
func loadF(p dsm.Proc, a dsm.Addr) float64     { return math.Float64frombits(p.Load(a)) }
func storeF(p dsm.Proc, a dsm.Addr, v float64) { p.Store(a, math.Float64bits(v)) }
func loadV(p dsm.Proc, a dsm.Addr) (v vec) {
	for d := range 3 {
		p.Compute(2) // address, move
		v[d] = loadF(p, a+uint64(d))
	}
	return v
}
func storeV(p dsm.Proc, a dsm.Addr, v vec) {
	for d := range 3 {
		p.Compute(2)
		storeF(p, a+uint64(d), v[d])
	}
}

type walkItem struct {
	v      uint64 // child word
	centre vec
	size   float64
}

func (b *Barnes) Run(p dsm.Proc) {
	id, np := p.ID(), p.Procs()
	lo, hi := id*b.N/np, (id+1)*b.N/np
	var cost uint64 // my zone's cost in the last force phase
	starts, costs := make([]uint64, np+1), make([]uint64, np)
	if id == 0 {
		b.resetTree(p)
	}
	// Phase 1 of the first step: the bounds of my bodies. ≈ 14
	// instructions a body (6 compare-and-moves, loop).
	box := boxAcc()
	for i := lo; i < hi; i++ {
		p.Compute(4)
		box.add(loadV(p, b.body(i)+nPos))
		p.Compute(8)
	}
	b.publishBounds(p, id, box, lo, 0)
	b.bar.Wait(p)
	for step := range b.Steps {
		last := step == b.Steps-1
		// Phase 2: the tree.
		var blo, bhi vec
		for q := range np {
			row := b.bounds + uint64(q)*b.bStride
			p.Compute(4)
			bl := loadV(p, row)
			bh := loadV(p, row+3)
			p.Compute(2)
			starts[q] = p.Load(row + 6)
			p.Compute(2)
			costs[q] = p.Load(row + 7)
			p.Compute(12) // 6 compare-and-moves
			if q == 0 {
				blo, bhi = bl, bh
				continue
			}
			for d := range 3 {
				blo[d], bhi[d] = min(blo[d], bl[d]), max(bhi[d], bh[d])
			}
		}
		centre, size := rootCube(blo, bhi)
		starts[np] = uint64(b.N)
		lo, hi = b.zoneEdge(p, id, starts, costs), b.zoneEdge(p, id+1, starts, costs)
		for i := lo; i < hi; i++ {
			p.Compute(4)
			b.insert(p, i, loadV(p, b.body(i)+nPos), centre, size)
		}
		b.bar.Wait(p)

		// Phase 3: centres of mass.
		p.Compute(4)
		k := int(p.Load(b.pool))
		for c := id * k / np; c < (id+1)*k/np; c++ {
			p.Compute(4)
			if p.Load(b.cell(c)+cNCells) == 0 {
				b.finish(p, c)
			}
		}
		b.bar.Wait(p)

		// Phase 4: forces, and each body's cost (nodes its walk took).
		cost = 0
		for i := lo; i < hi; i++ {
			p.Compute(4)
			a, c := b.force(p, id, i, loadV(p, b.body(i)+nPos), centre, size)
			storeV(p, b.body(i)+bAcc, a)
			p.Compute(3)
			p.Store(b.body(i)+bCost, c)
			cost += c
		}
		b.bar.Wait(p)

		// Phase 5: update my bodies, and the next step's bounds. Kick
		// then drift: ≈ 12 instructions (6 multiply-adds) each, loads
		// and stores apart.
		if id == 0 && !last {
			b.resetTree(p)
		}
		box = boxAcc()
		for i := lo; i < hi; i++ {
			a := b.body(i)
			p.Compute(4)
			x := loadV(p, a+nPos)
			v := loadV(p, a+bVel)
			acc := loadV(p, a+bAcc)
			x0 := x
			for d := range 3 {
				v[d] += acc[d] * b.Dt
				x[d] += v[d] * b.Dt
			}
			p.Compute(12)
			if last {
				storeV(p, a+bPos0, x0)
			}
			storeV(p, a+bVel, v)
			storeV(p, a+nPos, x)
			if !last {
				box.add(x)
				p.Compute(8)
			}
		}
		if !last {
			b.publishBounds(p, id, box, lo, cost)
			b.bar.Wait(p)
		}
	}
}

type boxAccum struct{ lo, hi vec }

func boxAcc() boxAccum {
	return boxAccum{
		lo: vec{math.Inf(1), math.Inf(1), math.Inf(1)},
		hi: vec{math.Inf(-1), math.Inf(-1), math.Inf(-1)},
	}
}

func (x *boxAccum) add(v vec) {
	for d := range 3 {
		x.lo[d], x.hi[d] = min(x.lo[d], v[d]), max(x.hi[d], v[d])
	}
}

// publishBounds stores my row: my bodies' box (a processor without
// bodies publishes an empty box, +Inf to −Inf, which no min or max
// keeps), my zone's first body and its cost.
func (b *Barnes) publishBounds(p dsm.Proc, id int, box boxAccum, lo int, cost uint64) {
	row := b.bounds + uint64(id)*b.bStride
	storeV(p, row, box.lo)
	storeV(p, row+3, box.hi)
	p.Compute(2)
	p.Store(row+6, uint64(lo))
	p.Compute(2)
	p.Store(row+7, cost)
}

// zoneEdge is where zone t starts (costzones, SPLASH-2's partition, over
// the bodies' Morton order): the first body i with
// P·Σ_{j<i} cost_j ≥ t·T, T the total cost of the last force phase,
// found from the published zones (first body and cost each) and a scan of
// the body costs inside the zone it falls in (≈ 6 instructions a body).
// Before any force phase the zones are equal blocks of bodies. Both
// processors next to an edge compute it, from the same words, alike.
func (b *Barnes) zoneEdge(p dsm.Proc, t int, starts, costs []uint64) int {
	np := len(costs)
	var total uint64
	for _, c := range costs {
		total += c
	}
	p.Compute(2 * uint64(np))
	switch {
	case t == 0:
		return 0
	case t == np:
		return b.N
	case total == 0:
		return t * b.N / np
	}
	target := uint64(t) * total
	// The last zone that starts below the target.
	q, pre := 0, uint64(0)
	for q+1 < np && (pre+costs[q])*uint64(np) < target {
		pre += costs[q]
		q++
	}
	p.Compute(4 * uint64(q+1))
	i := int(starts[q])
	for pre*uint64(np) < target && i < int(starts[q+1]) {
		p.Compute(6)
		pre += p.Load(b.body(i) + bCost)
		i++
	}
	return i
}

// resetTree empties the root cell and gives the pool back (processor 0,
// between the last walk of a step and the next build).
func (b *Barnes) resetTree(p dsm.Proc) {
	p.Compute(4)
	p.Store(b.pool, 1)
	b.initCell(p, 0, noParent)
}

// initCell clears cell c's children and counts and sets its parent: 11
// stores, ≈ 2 instructions each.
func (b *Barnes) initCell(p dsm.Proc, c int, parent uint64) {
	a := b.cell(c)
	for k := range 8 {
		p.Compute(2)
		p.Store(a+cChild+uint64(k), 0)
	}
	p.Compute(2)
	p.Store(a+cNCells, 0)
	p.Compute(2)
	p.Store(a+cArrive, 0)
	p.Compute(2)
	p.Store(a+cParent, parent)
}

// newCell takes a cell from the pool.
func (b *Barnes) newCell(p dsm.Proc) int {
	p.Compute(3)
	c := int(p.FetchAdd(b.pool, 1))
	if c >= b.maxCells {
		panic(fmt.Sprintf("barnes: the cell pool (%d cells) is exhausted", b.maxCells))
	}
	return c
}

// insert puts body i at x into the tree whose root cube is (centre, size).
// Per level of the descent: octant (3 compares, 3 shifts and ors), child
// address, the child's centre (3 adds) ≈ 15 instructions.
func (b *Barnes) insert(p dsm.Proc, i int, x vec, centre vec, size float64) {
	c, cc, sz := 0, centre, size
	for depth := 0; ; depth++ {
		if depth > maxDepth {
			panic("barnes: bodies coincide")
		}
		k := octant(x, cc)
		slot := b.cell(c) + cChild + uint64(k)
		p.Compute(15)
		v := p.Load(slot)
		if v != 0 && v&1 == 0 {
			c, cc, sz = int(v>>1)-1, childCentre(cc, sz, k), sz/2
			continue
		}
		lk := b.locks.At(c % b.locks.N)
		if b.bug != "nolock" {
			lk.Acquire(p)
		}
		p.Compute(3)
		v = p.Load(slot)
		switch {
		case v != 0 && v&1 == 0: // another processor made a cell here
			lk.Release(p)
			c, cc, sz = int(v>>1)-1, childCentre(cc, sz, k), sz/2
			continue
		case v == 0:
			p.Compute(2)
			p.Store(slot, encBody(i))
			lk.Release(p)
			return
		}
		// Body j is in the way: push both down into new cells until
		// they part. The chain is private until the slot is stored.
		j := int(v >> 1)
		p.Compute(4)
		y := loadV(p, b.body(j)+nPos)
		first := b.newCell(p)
		b.initCell(p, first, uint64(c))
		n, nc, nsz := first, childCentre(cc, sz, k), sz/2
		for d := depth + 1; ; d++ {
			if d > maxDepth {
				panic("barnes: bodies coincide")
			}
			kx, ky := octant(x, nc), octant(y, nc)
			p.Compute(15)
			if kx != ky {
				p.Store(b.cell(n)+cChild+uint64(kx), encBody(i))
				p.Compute(2)
				p.Store(b.cell(n)+cChild+uint64(ky), encBody(j))
				break
			}
			m := b.newCell(p)
			b.initCell(p, m, uint64(n))
			p.Compute(2)
			p.Store(b.cell(n)+cChild+uint64(kx), encCell(m))
			p.Compute(2)
			p.Store(b.cell(n)+cNCells, 1)
			n, nc, nsz = m, childCentre(nc, nsz, kx), nsz/2
		}
		p.Fence() // the chain is in memory before it is reachable
		p.Compute(2)
		p.Store(slot, encCell(first))
		p.Compute(2)
		nc0 := p.Load(b.cell(c) + cNCells)
		p.Compute(1)
		p.Store(b.cell(c)+cNCells, nc0+1)
		lk.Release(p)
		return
	}
}

// finish computes cell c's mass, centre of mass and occupancy mask from
// its children, then reports to its parent; while its report is the
// parent's last, it goes on with the parent. Per child: load the word,
// decode, ≈ 6; per occupied child 4 loads and 4 multiply-adds ≈ 12.
func (b *Barnes) finish(p dsm.Proc, c int) {
	for {
		a := b.cell(c)
		var m float64
		var cm vec
		var mask uint64
		for k := range 8 {
			p.Compute(6)
			v := p.Load(a + cChild + uint64(k))
			if v == 0 {
				continue
			}
			mask |= 1 << k
			na := b.node(v)
			p.Compute(2)
			mk := loadF(p, na+nMass)
			x := loadV(p, na+nPos)
			p.Compute(12)
			if b.bug == "com" && k == 7 {
				mk /= 2
			}
			addMoment(&m, &cm, mk, x)
		}
		cm = centreOfMass(m, cm)
		p.Compute(8) // three divides, mask
		storeF(p, a+nMass, m)
		storeV(p, a+nPos, cm)
		p.Compute(2)
		p.Store(a+cMask, mask)
		p.Compute(2)
		parent := p.Load(a + cParent)
		if parent == noParent {
			return
		}
		p.Fence() // release: my cell is in memory before I report it
		pa := b.cell(int(parent))
		p.Compute(3)
		arrived := p.FetchAdd(pa+cArrive, 1) + 1
		p.Compute(2)
		if arrived < p.Load(pa+cNCells) {
			return
		}
		p.Fence() // acquire: the other children's reports came first
		c = int(parent)
	}
}

// force is the acceleration on body i at x: a walk of the tree with a
// private stack. Per node taken off the stack: pop and decode ≈ 8; a
// cell's distance test (3 subtracts, 3 multiply-adds, the opening test
// against Theta·size and the inside test: 6 compares) ≈ 20; an
// interaction (softened distance, square root and divide as a DLX
// library sequence, 3 multiply-adds) ≈ 40; pushing a child (its centre
// and the stack entry) ≈ 12.
func (b *Barnes) force(p dsm.Proc, id, i int, x vec, centre vec, size float64) (vec, uint64) {
	stack := append(b.walks[id][:0], walkItem{v: encCell(0), centre: centre, size: size})
	self := encBody(i)
	eps2, th2 := b.Eps*b.Eps, b.Theta*b.Theta
	var acc vec
	var nodes uint64
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nodes++
		p.Compute(8)
		if it.v == self {
			continue
		}
		na := b.node(it.v)
		y := loadV(p, na+nPos)
		dr := y.sub(x)
		if it.v&1 == 0 { // a cell
			p.Compute(20)
			if opens(x, dr, it.centre, it.size, th2) {
				p.Compute(2)
				mask := p.Load(na + cMask)
				for k := range 8 {
					if mask>>k&1 == 0 {
						continue
					}
					p.Compute(12)
					v := p.Load(na + cChild + uint64(k))
					stack = append(stack, walkItem{v: v, centre: childCentre(it.centre, it.size, k), size: it.size / 2})
				}
				continue
			}
		}
		p.Compute(2)
		m := loadF(p, na+nMass)
		p.Compute(40)
		interact(&acc, dr, m, eps2)
	}
	b.walks[id] = stack
	return acc, nodes
}

// Verify's bounds on the Barnes–Hut approximation. A monopole's error on
// a body is a sum of truncation errors, each proportional to an accepted
// cell's pull, so it scales with the body's force scale S_i = Σ_j |a_ij|
// (the pulls' magnitudes), not with |a_i|, which cancellation can make as
// small as it likes. Measured at Theta 1 over 200 Plummer draws each of
// 2..512 bodies (170k bodies; TestBarnesErrorMargin repeats a part):
// error/|a_i| has median 0.01–0.02 but reached 2.0; error/S_i never
// passed 0.37 (99.9% below 0.26), and the median over the bodies of a run
// of 64 or more of error/|a_i| never passed 0.047. The bounds keep a
// margin over those maxima.
const (
	barnesTol       = 0.5  // each body: error ≤ Tol·S_i
	barnesMedianTol = 0.08 // median of error/|a_i|, over 32 or more bodies
	barnesMedianMin = 32
	barnesExactTol  = 1e-9 // against the serial Barnes–Hut: rounding only
)

// Verify checks the last step's forces twice:
//   - against a serial Barnes–Hut on the positions they were computed
//     from (the same octree, centres of mass summed and walks taken in
//     the same order, so they agree to rounding: barnesExactTol relative),
//     for every body, and the cell pool against that tree's cell count;
//     this checks the parallel build, centre-of-mass pass and walks;
//   - against a direct O(n²) sum, for every body up to BarnesCheckAll
//     bodies, else BarnesSample bodies spread over the Morton order: each
//     body's error at most Tol·S_i and (over 32 bodies or more) the median
//     of |error|/|a_i| at most barnesMedianTol; this checks the
//     approximation itself, which at Theta 1 is coarse (see barnesTol).
//
// It also requires every position and velocity to be finite.
func (b *Barnes) Verify(mem func(dsm.Addr) uint64) error {
	f := func(a dsm.Addr) float64 { return math.Float64frombits(mem(a)) }
	pos := make([]vec, b.N)
	mass := make([]float64, b.N)
	got := make([]vec, b.N)
	for i := range b.N {
		a := b.body(i)
		mass[i] = f(a + nMass)
		for d := range 3 {
			pos[i][d] = f(a + bPos0 + uint64(d))
			got[i][d] = f(a + bAcc + uint64(d))
			if x, v := f(a+nPos+uint64(d)), f(a+bVel+uint64(d)); math.IsNaN(x+v) || math.IsInf(x+v, 0) {
				return fmt.Errorf("body %d: position %g, velocity %g", i, x, v)
			}
		}
	}
	tree := newBHTree(pos, mass)
	if cells := mem(b.pool); cells != uint64(len(tree.cells)) {
		return fmt.Errorf("the last step's tree has %d cells; a serial build from the same positions has %d", cells, len(tree.cells))
	}
	for i := range b.N {
		want := tree.force(i, b.Theta, b.Eps)
		if e := got[i].sub(want); !(e.dot(e) <= barnesExactTol*barnesExactTol*want.dot(want)) {
			return fmt.Errorf("body %d: acceleration %v, a serial Barnes–Hut on the same positions gives %v", i, got[i], want)
		}
	}
	var rels []float64
	for _, i := range b.checked() {
		want := directAcc(pos, mass, i, b.Eps)
		e := got[i].sub(want)
		scale := forceScale(pos, mass, i, b.Eps)
		if err := math.Sqrt(e.dot(e)); !(err <= b.Tol*scale) {
			return fmt.Errorf("body %d: acceleration %v, direct sum %v: error %.3g > %g × the force scale %.3g", i, got[i], want, err, b.Tol, scale)
		}
		rels = append(rels, math.Sqrt(e.dot(e)/want.dot(want)))
	}
	slices.Sort(rels)
	if med := rels[len(rels)/2]; len(rels) >= barnesMedianMin && !(med <= barnesMedianTol) {
		return fmt.Errorf("median relative error against the direct sum %.3g > %g", med, barnesMedianTol)
	}
	return nil
}

// forceScale is Σ_j |a_ij|, the magnitudes of the pulls on body i.
func forceScale(pos []vec, mass []float64, i int, eps float64) float64 {
	var s float64
	for j := range pos {
		if j != i {
			dr := pos[j].sub(pos[i])
			r2 := dr.dot(dr) + eps*eps
			s += mass[j] * math.Sqrt(dr.dot(dr)) / (r2 * math.Sqrt(r2))
		}
	}
	return s
}

// checked is the bodies Verify compares with the direct sum.
func (b *Barnes) checked() []int {
	if b.N <= BarnesCheckAll {
		idx := make([]int, b.N)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, BarnesSample)
	for k := range idx {
		idx[k] = k*b.N/BarnesSample + b.N/(2*BarnesSample)
	}
	return idx
}

// directAcc is the softened acceleration on body i from every other body.
func directAcc(pos []vec, mass []float64, i int, eps float64) vec {
	var acc vec
	for j := range pos {
		if j != i {
			interact(&acc, pos[j].sub(pos[i]), mass[j], eps*eps)
		}
	}
	return acc
}
