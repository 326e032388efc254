package policies

import (
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// savings is a PrefixIndex with fixed answers per replica.
type savings []float64

func (s savings) PrefixSavingS(i int, _ *workloads.Request) float64 { return s[i] }

// TestCacheAware: it picks the replica that saves the most prefill, within
// the load bound; with nothing cached it is least-outstanding.
func TestCacheAware(t *testing.T) {
	states := []engine.ReplicaState{{Index: 0, Available: true, Outstanding: 2}, {Index: 1, Available: true, Outstanding: 1},
		{Index: 2, Available: true, Outstanding: 3}, {Index: 3, Available: false}}
	req := &workloads.Request{Prefix: []workloads.Segment{{Hash: 1, Tokens: 512}}}
	c := NewCacheAware(1.25)
	i, ok := c.Route(req, states)
	require.True(t, ok)
	require.Equal(t, 1, i, "no index: fewest outstanding")
	c.SetPrefixIndex(savings{0.5, 0.1, 0.9, 5})
	states[2].Outstanding = 1
	i, _ = c.Route(req, states)
	require.Equal(t, 2, i, "replica 2 saves the most")
	// The bound: ceil(1.25 × (6+1) / 3) = 3, replica 2 holds 3: it is full,
	// so the best of the others, replica 0.
	states[2].Outstanding = 3
	i, _ = c.Route(req, states)
	require.Equal(t, 0, i)
	// Replica 3 saves the most but is not available.
	states[3].Available, states[3].Outstanding = false, 0
	i, _ = c.Route(req, states)
	require.NotEqual(t, 3, i)
	_, ok = c.Route(req, []engine.ReplicaState{{Available: false}})
	require.False(t, ok)
}
