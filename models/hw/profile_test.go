package hw

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A replica outside what its profile was fitted on is named, part by part;
// a profile without a domain says nothing.
func TestProfileDomainOutside(t *testing.T) {
	cat := NewCatalog()
	d := ProfileDomain{GPUs: []string{"H100", "H200"}, Compute: []string{"bf16", "fp8"}, Kinds: []string{"dense"}, ActiveParamsB: []float64{8, 70.6}}
	require.Empty(t, d.Outside(cat.GPUs["H200"], cat.LLMs["llama-3-70b"], FP8))
	got := d.Outside(cat.GPUs["B200"], cat.LLMs["deepseek-v3"], FP4)
	require.Len(t, got, 3)
	require.Contains(t, got[0], "GPU B200")
	require.Contains(t, got[1], "fp4 compute")
	require.Contains(t, got[2], "a moe model")
	require.Len(t, d.Outside(cat.GPUs["H100"], cat.LLMs["llama-3-405b"], BF16), 1, "405B is more than twice the largest fitted")
	require.Empty(t, ProfileDomain{}.Outside(cat.GPUs["B200"], cat.LLMs["deepseek-v3"], FP4))
	// The domain survives the TOML round trip.
	pp := DefaultPerfProfile()
	pp.Domain = d
	pp.Domain.Models = []string{"llama-3-8b"}
	back, err := ParseProfile("p.toml", pp.MarshalTOML())
	require.NoError(t, err)
	require.Equal(t, pp.Domain, back.Domain)
}

// Windowed layers read at most their window of KV per sequence and attend
// at most that many keys per prefill token: gpt-oss's 18 sliding layers of
// 36 halve what a long context costs, and none of it below the window.
func TestSlidingWindowBoundsKVAndAttention(t *testing.T) {
	cat := NewCatalog()
	gpu, win := cat.GPUs["H200"], cat.LLMs["gpt-oss-120b"]
	full := win
	full.SlidingWindow, full.SlidingLayers = 0, 0
	pp := DefaultPerfProfile()
	d := Deployment{Layout: Layout{TP: 1}}
	mw, err := NewDeployedStepModel(gpu, win, d, FP4, BF16, pp)
	require.NoError(t, err)
	mf, err := NewDeployedStepModel(gpu, full, d, FP4, BF16, pp)
	require.NoError(t, err)
	require.InDelta(t, mf.KVBytesPerTokenGPU/2, mw.KVBytesPerTokenGPU, 1e-9, "18 of 36 layers hold the whole context")
	// 32 sequences of 32k tokens: the windowed half reads 32×128 tokens.
	n, ctx := 32.0, 32.0*32768
	long := StepShape{DecodeSeqs: n, DecodeCtx: ctx}
	kvTok := mf.KVBytesPerTokenGPU
	wantKV := (kvTok/2*ctx + kvTok/2*n*128) / (gpu.HBMBytesPerS * pp.KVBandwidthEfficiency)
	require.InDelta(t, mf.Step(long)-kvTok*ctx/(gpu.HBMBytesPerS*pp.KVBandwidthEfficiency)+wantKV, mw.Step(long), 1e-12)
	// Below the window nothing changes.
	short := StepShape{DecodeSeqs: 4, DecodeCtx: 4 * 100}
	require.InDelta(t, mf.Step(short), mw.Step(short), 1e-15)
	// A 32k-token prefill attends half the pairs plus the windows.
	p := StepShape{PrefillTokens: 32768, PrefillPairs: 32768 * 32769 / 2, PrefillSeqs: 1}
	attn := func(pairs float64) float64 { return mf.attnFLOPsPerPair * pairs / mf.attnFLOPS }
	require.InDelta(t, mf.Step(p)-attn(p.PrefillPairs)+attn(p.PrefillPairs/2+p.PrefillTokens*128/2), mw.Step(p), 1e-9)
	require.GreaterOrEqual(t, mw.Step(p), mw.RooflineBound(gpu, p))
}
