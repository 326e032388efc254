package fleet

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/fleetsim/fleetsim/models/engine"
)

// RouteKey names the per-replica key whose least value an IndexedRouter's
// decision is: which fields of the snapshot it reads, in which order.
type RouteKey uint8

const (
	// KeyOutstanding: the fewest Outstanding, lowest index among ties
	// (least-outstanding).
	KeyOutstanding RouteKey = iota + 1
	// KeyKVUtilization: the lowest KVUtilization, then the fewest
	// Outstanding, then the lowest index (least-kv).
	KeyKVUtilization
	// KeyWeightedOutstanding: the least float64(Outstanding+1)/Capacity,
	// a Capacity <= 0 counting as 1, lowest index among ties
	// (weighted-least-outstanding).
	KeyWeightedOutstanding
)

// String is the key's router's name.
func (k RouteKey) String() string {
	switch k {
	case KeyOutstanding:
		return "least-outstanding"
	case KeyKVUtilization:
		return "least-kv"
	case KeyWeightedOutstanding:
		return "weighted-least-outstanding"
	}
	return fmt.Sprintf("RouteKey(%d)", uint8(k))
}

// IndexedRouter is a Router whose decision is exactly the available
// replica with the least key (RouteKey), ties to the lowest index, the
// floats compared as Route's scan compares them. For such a router the
// gateway does not call Route on the pool's snapshot: it answers from an
// index that the pool and its replicas keep up to date as the key's
// fields and Available change, O(log n) per change and O(1) per decision
// instead of an O(n) scan per decision. Decisions are the same, tie for
// tie.
type IndexedRouter interface {
	Router
	// IndexKey is the key Route minimises; it is asked once per fleet
	// and must not change.
	IndexKey() RouteKey
}

// routeIndex is a tournament tree over the pool's snapshot: leaf i holds
// replica i's key (routeKey), or noReplica when the replica is
// unavailable; each inner node holds the smaller of its children's. The
// root is then the least key among available replicas, lowest index among
// ties: the indexed router's decision. A replica whose key cannot be
// encoded exactly (an Outstanding that does not fit in 32 bits for the
// keys that hold it, a NaN float; never in a valid fleet) is counted in
// wide, and while any is, the gateway asks the router instead.
type routeIndex struct {
	key    RouteKey
	states []engine.ReplicaState
	tree   []key128 // tree[1] is the root; leaf i is tree[leaves+i]
	leaves int      // a power of two ≥ len(states)
	// hiOnly is set when a key's hi word alone orders the keys and names
	// the replica (KeyOutstanding): the inner nodes then compare and keep
	// hi only, a third of the work of a 128-bit comparison per level.
	hiOnly bool
	wideAt []bool
	wide   int
	// cnt, when set, replaces the tree (least-outstanding on at most
	// countIndexMax replicas; route_count.go).
	cnt *countIndex
}

// key128 is a leaf's key, compared as one unsigned 128-bit number
// (hi, lo). The replica's index is always the low 32 bits of lo (of hi
// where hiOnly), so keys of distinct replicas never tie.
type key128 struct{ hi, lo uint64 }

// noReplica is the key of an unavailable replica (and of padding leaves):
// larger than any replica's.
var noReplica = key128{math.MaxUint64, math.MaxUint64}

// minKey is the smaller of a and b as 128-bit unsigned numbers, without a
// branch (the tree's comparisons are as likely to go either way, and a
// mispredicted branch per level would cost more than the arithmetic).
func minKey(a, b key128) key128 {
	_, borrow := bits.Sub64(b.lo, a.lo, 0)
	_, borrow = bits.Sub64(b.hi, a.hi, borrow)
	m := -borrow // all ones when b < a
	return key128{a.hi ^ (a.hi^b.hi)&m, a.lo ^ (a.lo^b.lo)&m}
}

// newRouteIndex indexes states, as they are now, by k.
func newRouteIndex(k RouteKey, states []engine.ReplicaState) *routeIndex {
	leaves := 1
	for leaves < len(states) {
		leaves *= 2
	}
	x := &routeIndex{key: k, states: states, leaves: leaves,
		hiOnly: k == KeyOutstanding, wideAt: make([]bool, len(states))}
	if k == KeyOutstanding && len(states) <= countIndexMax {
		x.cnt = newCountIndex(len(states))
		for i := range states {
			x.fix(i)
		}
		return x
	}
	x.tree = make([]key128, 2*leaves)
	for j := range x.tree {
		x.tree[j] = noReplica
	}
	for i := range states {
		x.fix(i)
	}
	return x
}

// ordered32 maps an int that fits in 32 bits to a uint64 below 2^32 in the
// same order; ok is false when it does not fit.
func ordered32(v int) (uint64, bool) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false
	}
	return uint64(uint32(v) ^ 1<<31), true
}

// orderedFloat maps a float64 to a uint64 in the same order, -0 and +0 to
// the same value, as < and == compare them; ok is false for NaN, which no
// order holds.
func orderedFloat(f float64) (uint64, bool) {
	if f != f {
		return 0, false
	}
	if f == 0 {
		f = 0 // -0 == +0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b, true
	}
	return b | 1<<63, true
}

// routeKey is replica i's key by x.key, ok false when it cannot be encoded
// exactly (the replica is then wide).
func (x *routeIndex) routeKey(i int) (key128, bool) {
	s := &x.states[i]
	o, ok := ordered32(s.Outstanding)
	switch x.key {
	case KeyKVUtilization:
		kv, kok := orderedFloat(s.KVUtilization)
		return key128{kv, o<<32 | uint64(i)}, ok && kok
	case KeyWeightedOutstanding:
		// The load exactly as the weighted scan computes it.
		c := s.Capacity
		if c <= 0 {
			c = 1
		}
		load, lok := orderedFloat(float64(s.Outstanding+1) / c)
		return key128{load, uint64(i)}, lok
	default: // KeyOutstanding: hiOnly
		return key128{o<<32 | uint64(i), 0}, ok
	}
}

// fix re-reads replica i's Available and key fields after any changed
// and updates the path from its leaf to the root, stopping where a node
// keeps its value (its ancestors then keep theirs).
// Fix implements StateIndex.
func (x *routeIndex) Fix(i int) { x.fix(i) }

// Check implements StateIndex.
func (x *routeIndex) Check(i int) error { return x.check(i) }

func (x *routeIndex) fix(i int) {
	if c := x.cnt; c != nil {
		s := &x.states[i]
		l := c.level(s.Outstanding)
		if w := l < 0; w != x.wideAt[i] {
			x.wideAt[i] = w
			if w {
				x.wide++
			} else {
				x.wide--
			}
		}
		if !s.Available {
			l = -1
		}
		c.move(i, l)
		return
	}
	var k key128
	var ok bool
	if x.hiOnly { // routeKey's KeyOutstanding, inlined: the default router's path
		var o uint64
		o, ok = ordered32(x.states[i].Outstanding)
		k = key128{o<<32 | uint64(i), 0}
	} else {
		k, ok = x.routeKey(i)
	}
	if w := !ok; w != x.wideAt[i] {
		x.wideAt[i] = w
		if w {
			x.wide++
		} else {
			x.wide--
		}
	}
	if !ok || !x.states[i].Available {
		k = noReplica
	}
	t := x.tree
	j := x.leaves + i
	if t[j] == k {
		return
	}
	t[j] = k
	if x.hiOnly {
		h := k.hi
		for j > 1 {
			h = min(h, t[j^1].hi) // as below, on hi alone
			j >>= 1
			if t[j].hi == h {
				return
			}
			t[j].hi = h
		}
		return
	}
	for j > 1 {
		// k is node j's new value; its parent's is the smaller of it and
		// its sibling's.
		k = minKey(k, t[j^1])
		j >>= 1
		if t[j] == k {
			return
		}
		t[j] = k
	}
}

// check reports an error unless replica i's leaf holds the key its
// snapshot entry gives now. Tests call it between events (through
// CheckInvariants), when every write of Available or of the key's fields
// has fixed the index: a writer that did not shows here even before it
// changes a decision. A nil index checks nothing.
func (x *routeIndex) check(i int) error {
	if x == nil {
		return nil
	}
	if c := x.cnt; c != nil {
		s := &x.states[i]
		l := c.level(s.Outstanding)
		wide := l < 0
		if !s.Available {
			l = -1
		}
		if !c.holds(i, l) || x.wideAt[i] != wide {
			return fmt.Errorf("%v routing index holds replica %d at level %d (wide %v), the snapshot %+v gives %d (wide %v)",
				x.key, i, c.at[i], x.wideAt[i], x.states[i], l, wide)
		}
		return nil
	}
	k, ok := x.routeKey(i)
	if !ok || !x.states[i].Available {
		k = noReplica
	}
	if leaf := x.tree[x.leaves+i]; leaf != k || x.wideAt[i] != !ok {
		return fmt.Errorf("%v routing index holds %x (wide %v), the snapshot %+v gives %x", x.key, leaf, x.wideAt[i], x.states[i], k)
	}
	return nil
}

// least is the indexed router's decision; ok is false when no replica is
// available. Valid only while wide is 0.
func (x *routeIndex) least() (int, bool) {
	if x.cnt != nil {
		return x.cnt.first()
	}
	k := x.tree[1]
	if x.hiOnly {
		if k.hi == noReplica.hi {
			return 0, false
		}
		return int(uint32(k.hi)), true
	}
	if k == noReplica {
		return 0, false
	}
	return int(uint32(k.lo)), true
}
