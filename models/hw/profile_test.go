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
