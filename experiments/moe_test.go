package experiments

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// moeModels is a scenario's own MoE model with every MoE and MLA key.
const moeModels = `
[[models]]
name = "tiny-moe"
layers = 8
hidden = 1024
heads = 16
kv_heads = 16
head_dim = 64
intermediate = 4096
vocab = 32000
params = 0.6e9
experts = 32
experts_per_token = 4
shared_experts = 1
expert_intermediate = 512
dense_layers = 1
active_params = 0.3e9
kv_lora_rank = 256
qk_rope_head_dim = 32
`

// [[models]] accepts every MoE and MLA field; a bad one is reported at its
// file:line and key.
func TestScenarioMoEModel(t *testing.T) {
	src := strings.Replace(small, `model = "llama-3-8b"`, `model = "tiny-moe"`, 1) + moeModels
	sc, err := Parse("moe.toml", []byte(src))
	require.NoError(t, err)
	m := sc.Catalog().LLMs["tiny-moe"]
	require.Equal(t, 32, m.Experts)
	require.Equal(t, 4, m.ExpertsPerToken)
	require.Equal(t, 1, m.SharedExperts)
	require.Equal(t, 512, m.ExpertIntermediate)
	require.Equal(t, 1, m.DenseLayers)
	require.Equal(t, 0.3e9, m.ActiveParams)
	require.Equal(t, 8.0*(256+32)*2, m.KVBytesPerToken(2))

	bad := strings.Replace(src, "experts_per_token = 4", "experts_per_token = 40", 1)
	_, err = Parse("moe.toml", []byte(bad))
	require.Error(t, err)
	line := 1 + strings.Count(bad[:strings.Index(bad, "experts_per_token = 40")], "\n")
	require.Contains(t, err.Error(), "moe.toml:"+itoa(line)+": models.0.experts_per_token")
}
