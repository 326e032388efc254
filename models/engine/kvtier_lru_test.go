package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKVTierLRU: a tier keeps what fits, dropping the least recently used.
func TestKVTierLRU(t *testing.T) {
	tr := NewKVTier("host_dram", 10, 1)
	require.True(t, tr.put(1, 4))
	require.True(t, tr.put(2, 4))
	require.True(t, tr.has(1)) // 1 is now the most recent
	require.True(t, tr.put(3, 4))
	require.False(t, tr.has(2), "2 was the least recently used")
	require.True(t, tr.has(1))
	require.True(t, tr.has(3))
	require.False(t, tr.put(4, 11), "larger than the tier")
	require.EqualValues(t, 8, tr.used)
	require.EqualValues(t, 1, tr.Stats.Evictions)
}
