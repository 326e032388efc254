package engine

import (
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/stretchr/testify/require"
)

// With attention data parallelism each GPU serves one rank: its activation
// workspace and sampler logits are sized for the rank's share of the step
// (max_batched_tokens/dp tokens, max_seqs/dp sequences), as if it were a
// replica of one rank with those limits; sized for the whole replica they
// over-reserved GBs per GPU and refused wide-EP deployments engines run.
func TestPlanMemoryAttentionDPPerRank(t *testing.T) {
	cat := hw.NewCatalog()
	var ps config.Problems
	gpu, llm := cat.GPUs["H200"], cat.LLMs["deepseek-v3"]
	rc := DefaultReplicaConfig()
	rc.Weights, rc.MaxBatchedTokens, rc.MaxSeqs = "fp8", 16384, 1024
	dep := PlanMemoryLayout(gpu, llm, hw.Layout{TP: 1, DP: 8, EP: 8}, rc, hw.DefaultPerfProfile(), "m", &ps)
	one := rc
	one.MaxBatchedTokens, one.MaxSeqs = 16384/8, 1024/8
	require.Empty(t, ps.List)
	var ignored config.Problems // (one rank alone does not hold all the experts)
	rank := PlanMemoryLayout(gpu, llm, hw.Layout{TP: 1}, one, hw.DefaultPerfProfile(), "m", &ignored)
	require.Equal(t, rank.ActivationBytes, dep.ActivationBytes)
	require.Equal(t, rank.RuntimeBytes, dep.RuntimeBytes)
	// 2,048 tokens of (hidden + intermediate) fp32 workspace and 128
	// sequences of logits, not 16,384 and 1,024.
	require.InDelta(t, 2048*(7168+18432)*2*4+(1<<30), dep.ActivationBytes, 1)
	require.InDelta(t, hw.DefaultPerfProfile().RuntimeReserveBytes+128*129280*4, dep.RuntimeBytes, 1)
}
