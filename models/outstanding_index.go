package models

import "math"

// LeastOutstandingRouter is a Router whose decision is exactly the available
// replica with the fewest Outstanding, the lowest index among ties (package
// policies' least-outstanding router). For such a router the gateway does
// not call Route on the pool's snapshot: it answers from an index that the
// pool and its replicas keep up to date as Outstanding and Available
// change, O(log n) per change and O(1) per decision instead of an O(n) scan
// per decision. Decisions are the same, tie for tie.
type LeastOutstandingRouter interface {
	Router
	// LeastOutstandingOnly marks the router; it is never called.
	LeastOutstandingOnly()
}

// outstandingIndex is a tournament tree over the pool's snapshot: leaf i
// holds replica i's key, Outstanding in the high 32 bits and i in the low
// 32, or the largest key when the replica is unavailable; each inner node
// holds the smaller of its children's. The root is then the fewest
// outstanding among available replicas, lowest index among ties: the
// least-outstanding scan's decision. A replica whose Outstanding does not
// fit in 31 bits (never in a valid fleet) is counted in wide, and while any
// is, the gateway asks the router instead.
type outstandingIndex struct {
	states []ReplicaState
	tree   []uint64 // tree[1] is the root; leaf i is tree[leaves+i]
	leaves int      // a power of two ≥ len(states)
	wideAt []bool
	wide   int
}

// noReplica is the key of an unavailable replica (and of padding leaves).
const noReplica = math.MaxUint64

// newOutstandingIndex indexes states as they are now.
func newOutstandingIndex(states []ReplicaState) *outstandingIndex {
	leaves := 1
	for leaves < len(states) {
		leaves *= 2
	}
	x := &outstandingIndex{states: states, tree: make([]uint64, 2*leaves), leaves: leaves,
		wideAt: make([]bool, len(states))}
	for j := range x.tree {
		x.tree[j] = noReplica
	}
	for i := range states {
		x.fix(i)
	}
	return x
}

// fix re-reads replica i's Available and Outstanding after either changed
// and updates the path from its leaf to the root, stopping where a node
// keeps its value (its ancestors then keep theirs).
func (x *outstandingIndex) fix(i int) {
	s := &x.states[i]
	o := s.Outstanding
	if w := o < 0 || o >= 1<<31; w != x.wideAt[i] {
		x.wideAt[i] = w
		if w {
			x.wide++
		} else {
			x.wide--
		}
	}
	k := uint64(noReplica)
	if s.Available && !x.wideAt[i] {
		k = uint64(o)<<32 | uint64(i)
	}
	t := x.tree
	j := x.leaves + i
	if t[j] == k {
		return
	}
	t[j] = k
	for j > 1 {
		// k is node j's new value; its parent's is the smaller of it and
		// its sibling's.
		k = min(k, t[j^1])
		j >>= 1
		if t[j] == k {
			return
		}
		t[j] = k
	}
}

// least is the least-outstanding decision; ok is false when no replica is
// available. Valid only while wide is 0.
func (x *outstandingIndex) least() (int, bool) {
	k := x.tree[1]
	if k == noReplica {
		return 0, false
	}
	return int(uint32(k)), true
}
