package experiments

import (
	"fmt"
	"sync"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/stretchr/testify/require"
)

// Prefix hits are whole blocks of the replica's block_tokens (the workload's
// 16-token segment alignment is not the KV block size): on chat-sessions
// every cached token count is a multiple of the block size (or the whole
// prompt less the one token always recomputed), and the hit rate falls as
// blocks grow past the workload's alignment, since more of each shared
// prefix ends in a partial block.
func TestPrefixHitsAreWholeBlocks(t *testing.T) {
	base, err := LoadBuiltin("chat-sessions")
	require.NoError(t, err)
	var rates []float64
	for _, bt := range []int{16, 32, 64, 128} {
		sc, err := base.Derive(OverrideOverlay("cluster.replica.block_tokens", fmt.Sprint(bt)),
			OverrideOverlay("run.replications", "1"), OverrideOverlay("workload.duration_s", "300"))
		require.NoError(t, err)
		var mu sync.Mutex
		var odd, hits int
		res, err := RunReplications(sc, RunOptions{Workers: 1, OnDone: func(o *engine.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			c := int(o.CachedTokens)
			if c > 0 {
				hits++
				if c%bt != 0 && c != int(o.Req.InputTokens)-1 {
					odd++
				}
			}
		}})
		require.NoError(t, err)
		require.Positive(t, hits)
		require.Zero(t, odd, "block_tokens %d: %d of %d hits are not whole blocks", bt, odd, hits)
		rates = append(rates, res[0].Summary.Prefix.HitRate)
	}
	t.Logf("hit rate at block_tokens 16/32/64/128: %v", rates)
	// Larger blocks cache less of each prefix (eviction also changes with
	// the block size, so adjacent sizes need not be ordered).
	for i := 1; i < len(rates); i++ {
		require.Less(t, rates[i], rates[0], "block_tokens 16 caches the most")
		require.NotEqual(t, rates[i], rates[i-1])
	}
}
