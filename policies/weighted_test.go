package policies

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/models/engine"
)

// With every capacity 1 the weighted router chooses exactly as
// least-outstanding (the same replica, ties to the lowest index).
func TestWeightedEqualsLeastOutstandingWhenUniform(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.IntN(12)
		st := make([]engine.ReplicaState, n)
		for i := range st {
			st[i] = engine.ReplicaState{Index: i, Available: rng.IntN(4) > 0, Outstanding: rng.IntN(5), Capacity: 1}
		}
		a, okA := WeightedLeastOutstanding{}.Route(nil, st)
		b, okB := LeastOutstanding{}.Route(nil, st)
		require.Equal(t, okB, okA)
		if okA {
			require.Equal(t, b, a, "%+v", st)
		}
	}
}

// A replica twice as fast takes about twice the requests when the fleet
// fills up.
func TestWeightedSplitsByCapacity(t *testing.T) {
	st := []engine.ReplicaState{{Index: 0, Available: true, Capacity: 0.5}, {Index: 1, Available: true, Capacity: 1}}
	for k := 0; k < 30; k++ {
		i, ok := WeightedLeastOutstanding{}.Route(nil, st)
		require.True(t, ok)
		st[i].Outstanding++
	}
	require.Equal(t, 10, st[0].Outstanding)
	require.Equal(t, 20, st[1].Outstanding)
}
