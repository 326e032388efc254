package policies

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newPA(t testing.TB, n int, edit ...func(*RouterConfig)) *PrefixAffinity {
	t.Helper()
	r := newRouter(t, RouterPrefixAffinity, n, 1, edit...)
	pa, ok := r.(*PrefixAffinity)
	require.True(t, ok)
	return pa
}

// TestPrefixAffinityKeySegment: the key is segment K-1's hash, or the last
// segment's when the request has fewer than K.
func TestPrefixAffinityKeySegment(t *testing.T) {
	tests := []struct {
		k      int
		hashes []uint64
		want   uint64 // hash of the segment that must be the key
	}{
		{1, []uint64{11, 22, 33}, 11},
		{2, []uint64{11, 22, 33}, 22},
		{3, []uint64{11, 22, 33}, 33},
		{5, []uint64{11, 22, 33}, 33},
		{4, []uint64{11}, 11},
	}
	for _, tc := range tests {
		pa := newPA(t, 4, func(c *RouterConfig) { c.PrefixSegments = tc.k })
		got, ok := pa.key(prefixReq(tc.hashes...))
		require.True(t, ok)
		want, _ := pa.key(prefixReq(tc.want))
		assert.Equal(t, want, got, "K=%d prefix %v", tc.k, tc.hashes)
	}
	_, ok := newPA(t, 4).key(plainReq)
	assert.False(t, ok)
}

// TestPrefixAffinityRingDeterministic: two rings built for the same size are
// identical, sorted, and hold VirtualNodes distinct points per replica.
func TestPrefixAffinityRingDeterministic(t *testing.T) {
	a := newPA(t, 50, func(c *RouterConfig) { c.VirtualNodes = 37 })
	b := newPA(t, 50, func(c *RouterConfig) { c.VirtualNodes = 37 })
	assert.Equal(t, a.ring, b.ring)
	require.Len(t, a.ring, 50*37)
	per := make([]int, 50)
	for i, p := range a.ring {
		per[p.replica]++
		if i > 0 {
			require.Less(t, a.ring[i-1].hash, p.hash)
		}
	}
	for r, c := range per {
		assert.Equal(t, 37, c, "replica %d", r)
	}
}

// TestPrefixAffinitySticky: while loads are equal, a prefix always maps to the
// same replica whatever the common load, and the K-th segment alone decides.
func TestPrefixAffinitySticky(t *testing.T) {
	const n = 16
	pa := newPA(t, n, func(c *RouterConfig) { c.PrefixSegments = 2 })
	for key := uint64(1); key <= 2000; key++ {
		home, ok := pa.Route(prefixReq(key*3, key), replicas(n).states())
		require.True(t, ok)
		for _, load := range []int{1, 7, 1000} {
			got, _ := pa.Route(prefixReq(key*5, key, key+9), replicas(n).allOut(load).states())
			require.Equal(t, home, got, "key %d load %d", key, load)
		}
	}
}

// TestPrefixAffinitySpread: 10,000 distinct prefixes (numbered 1..10000, a
// poorly spread input) over 16 replicas with 100 virtual nodes each.
//
// Two checks with stated tolerances. (1) Keys land on the ring uniformly:
// counts fit each replica's share of the ring (its arcs' total length) with
// chi-square below 37.70, the 0.999 quantile for 15 degrees of freedom.
// (2) The ring itself is balanced: with 100 points per replica a share's
// relative spread is about 1/sqrt(100) = 10%, so every replica gets within
// 35% of the mean (625 keys).
func TestPrefixAffinitySpread(t *testing.T) {
	const n, keys = 16, 10000
	pa := newPA(t, n)
	counts := make([]int, n)
	f := replicas(n).states()
	for key := uint64(1); key <= keys; key++ {
		i, ok := pa.Route(prefixReq(key), f)
		require.True(t, ok)
		counts[i]++
	}
	// Replica r owns the arc (previous point, its point]: keys in it walk
	// clockwise to its point.
	share := make([]float64, n)
	for i, p := range pa.ring {
		prev := pa.ring[(i+len(pa.ring)-1)%len(pa.ring)].hash
		share[p.replica] += float64(p.hash-prev) / math.Exp2(64) // wraps for i = 0
	}
	exp := make([]float64, n)
	for r := range exp {
		exp[r] = share[r] * keys
	}
	assert.Less(t, chiSquare(counts, exp), 37.70, "counts %v expected %v", counts, exp)
	mean := float64(keys) / n
	for r, c := range counts {
		assert.InEpsilon(t, mean, float64(c), 0.35, "replica %d got %d keys", r, c)
	}
}

// TestPrefixAffinityBoundedLoad: a home replica over the bound sheds the key
// to the next replica clockwise, the same one it would use were the home
// replica down; at the bound it keeps it.
func TestPrefixAffinityBoundedLoad(t *testing.T) {
	const n = 4
	pa := newPA(t, n) // load_bound 1.25
	for key := uint64(1); key <= 200; key++ {
		req := prefixReq(key)
		home, _ := pa.Route(req, replicas(n).states())
		next, _ := pa.Route(req, replicas(n).down(home).states())
		require.NotEqual(t, home, next)

		// Others at 2, home at 3: m = 9, capacity ceil(1.25·10/4) = 4,
		// and 3+1 <= 4: the home replica keeps the key.
		f := replicas(n).allOut(2)
		f[home].Outstanding = 3
		got, _ := pa.Route(req, f.states())
		assert.Equal(t, home, got, "key %d at the bound", key)

		// Home at 4: m = 10, capacity ceil(1.25·11/4) = 4, and 4+1 > 4.
		f[home].Outstanding = 4
		got, _ = pa.Route(req, f.states())
		assert.Equal(t, next, got, "key %d over the bound", key)

		// Far over the bound, others idle.
		f = replicas(n)
		f[home].Outstanding = 10
		got, _ = pa.Route(req, f.states())
		assert.Equal(t, next, got, "key %d far over the bound", key)
	}
}

// TestPrefixAffinityLooseBound: a large load_bound keeps keys home under
// heavy imbalance.
func TestPrefixAffinityLooseBound(t *testing.T) {
	const n = 4
	pa := newPA(t, n, func(c *RouterConfig) { c.LoadBound = 100 })
	for key := uint64(1); key <= 100; key++ {
		req := prefixReq(key)
		home, _ := pa.Route(req, replicas(n).states())
		f := replicas(n)
		f[home].Outstanding = 50
		got, _ := pa.Route(req, f.states())
		assert.Equal(t, home, got)
	}
}

// TestPrefixAffinityRemoval: making one replica unavailable remaps only the
// keys that lived on it, and spreads those over the other replicas.
func TestPrefixAffinityRemoval(t *testing.T) {
	const n, keys, removed = 16, 10000, 5
	pa := newPA(t, n)
	all := replicas(n).states()
	less := replicas(n).down(removed).states()
	movedTo := map[int]int{}
	onRemoved := 0
	for key := uint64(1); key <= keys; key++ {
		req := prefixReq(key)
		before, _ := pa.Route(req, all)
		after, ok := pa.Route(req, less)
		require.True(t, ok)
		require.NotEqual(t, removed, after)
		if before != removed {
			require.Equal(t, before, after, "key %d moved off a replica that stayed", key)
			continue
		}
		onRemoved++
		movedTo[after]++
	}
	assert.Greater(t, onRemoved, keys/n/2)
	// With 100 virtual nodes the removed replica's keys go to many others.
	assert.GreaterOrEqual(t, len(movedTo), n/2, "moved keys went to %v", movedTo)
}

// TestPrefixAffinitySizeMismatch: the ring is built for one fleet size.
func TestPrefixAffinitySizeMismatch(t *testing.T) {
	pa := newPA(t, 4)
	assert.PanicsWithValue(t, "policies: prefix-affinity built for 4 replicas, routed over 5", func() {
		pa.Route(prefixReq(1), replicas(5).states())
	})
}
