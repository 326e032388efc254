package hw

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/stretchr/testify/require"
)

// Every built-in model's shipped config round-trips: the import has the
// catalog row's shapes, params within 1% of the catalog's (the model
// card's), KV bytes per token by the formula, and validates.
func TestHFConfigRoundTrip(t *testing.T) {
	cat := NewCatalog()
	names := append([]string{}, cat.LLMNames()...)
	for _, name := range names {
		if _, alias := llmAliases[name]; alias {
			continue
		}
		t.Run(name, func(t *testing.T) {
			data, ok := BuiltinConfig(name)
			require.True(t, ok, "no configs/%s.json", name)
			imp, err := ParseHFConfig(name+".json", data)
			require.NoError(t, err)
			want, got := cat.LLMs[name], imp.LLM
			got.Name = name
			require.InEpsilon(t, want.Params, got.Params, 0.01, "params: derived %.4g, catalog %.4g", got.Params, want.Params)
			kv := 2 * float64(want.Layers) * float64(want.KVHeads) * float64(want.HeadDim) * 2
			if want.IsMLA() {
				kv = float64(want.Layers) * float64(want.KVLoraRank+want.QKRopeHeadDim) * 2
			}
			require.Equal(t, kv, got.KVBytesPerToken(2))
			require.Equal(t, want.KVBytesPerToken(1), got.KVBytesPerToken(1))
			// Shapes: all but params (derived here, the card's there),
			// active params (derived) and the context where the release's
			// config and the catalog's source differ.
			if name == "deepseek-v3" {
				require.Equal(t, 163840, got.ContextTokens) // the config's; the catalog takes the paper's 128K
				got.ContextTokens = want.ContextTokens
			}
			got.Params, got.ActiveParams = want.Params, want.ActiveParams
			require.Equal(t, want, got)
			var ps config.Problems
			imp.LLM.Name = name
			imp.LLM.Validate("models.0", &ps)
			require.Empty(t, ps.List)
			if want.IsMoE() {
				require.InEpsilon(t, want.ActiveParams, imp.LLM.ActiveParamsDerived(), 0.2, "active params")
			}
		})
	}
}

// Each family reads from its own keys: a dense Mistral with a sliding
// window, MQA, Qwen2 biases and windows, a Qwen2-MoE shared expert, tied
// embeddings.
func TestHFConfigFamilies(t *testing.T) {
	for _, c := range []struct {
		name, json string
		check      func(t *testing.T, m LLM)
	}{
		{"mistral-7b", `{"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096,
			"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
			"vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": 4096}`,
			func(t *testing.T, m LLM) {
				require.Equal(t, 4096, m.SlidingWindow)
				require.Equal(t, 32, m.SlidingLayers)
				require.InEpsilon(t, 7.24e9, m.Params, 0.01) // Mistral 7B's card: 7.24B
			}},
		{"mqa", `{"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16,
			"num_key_value_heads": 1, "intermediate_size": 8192, "vocab_size": 1000, "tie_word_embeddings": true}`,
			func(t *testing.T, m LLM) {
				require.Equal(t, 1, m.KVHeads)
				require.Equal(t, 128, m.HeadDim)
				require.Equal(t, 2*4*128*2.0, m.KVBytesPerToken(2))
				h := 2048.0
				attn := h*h*2 + 2*h*128
				require.Equal(t, 1000*h+4*(attn+3*h*8192)+9*h, m.Params)
			}},
		{"qwen2.5-7b", `{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584,
			"num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
			"vocab_size": 152064, "max_position_embeddings": 32768, "use_sliding_window": false, "sliding_window": 131072,
			"max_window_layers": 28, "tie_word_embeddings": false}`,
			func(t *testing.T, m LLM) {
				require.Zero(t, m.SlidingWindow)
				require.InEpsilon(t, 7.61e9, m.Params, 0.01) // Qwen2.5-7B's card: 7.61B
			}},
		{"qwen1.5-moe", `{"architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_size": 2048,
			"num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632,
			"moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts": 60,
			"num_experts_per_tok": 4, "decoder_sparse_step": 1, "vocab_size": 151936, "max_position_embeddings": 8192}`,
			func(t *testing.T, m LLM) {
				require.Equal(t, 1, m.SharedExperts)
				require.Equal(t, 60, m.Experts)
				require.InEpsilon(t, 14.3e9, m.Params, 0.01) // Qwen1.5-MoE-A2.7B's card: 14.3B
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			imp, err := ParseHFConfig(c.name+".json", []byte(c.json))
			require.NoError(t, err)
			c.check(t, imp.LLM)
			m := imp.LLM
			m.Name = c.name
			var ps config.Problems
			m.Validate("models.0", &ps)
			require.Empty(t, ps.List)
		})
	}
}

// Bad configs are refused with the file, the line where the key has one,
// and the key.
func TestHFConfigRefusals(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"model_type": "gemma3",
"architectures": ["Gemma3ForCausalLM"]}`, `c.json:1: model_type: unknown architecture (model_type "gemma3"`},
		{`{}`, "c.json: model_type: missing"},
		{`{"model_type": "llama", "num_hidden_layers": 2}`, "c.json: hidden_size: missing"},
		{`{"model_type": "llama",
 "hidden_size": "4096"}`, `c.json:2: hidden_size: must be a number, found a string`},
		{`{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
 "num_key_value_heads": 3, "vocab_size": 10, "intermediate_size": 8}`, "c.json:2: num_key_value_heads: must divide"},
		{`{"model_type": "gpt_oss", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "vocab_size": 10, "intermediate_size": 8, "num_local_experts": 4, "num_experts_per_tok": 2,
  "layer_types": ["full_attention"]}`, "c.json:3: layer_types: has 1 entries for num_hidden_layers 2"},
		{`{"model_type": "llama4", "text_config": {"hidden_size": 64}}`, "c.json: text_config.num_hidden_layers: missing"},
		{`{"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "vocab_size": 10, "intermediate_size": 8}`, "c.json: kv_lora_rank: missing"},
		{`{"model_type": "llama", "hidden_size": 1e400}`, "c.json"},
		{`{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1e12, "num_attention_heads": 4, "vocab_size": 10}`, "c.json:1: num_hidden_layers: at most"},
		{`[1, 2]`, "c.json: not a JSON object"},
		{`{"model_type": "llama",`, "c.json: not JSON"},
	} {
		_, err := ParseHFConfig("c.json", []byte(c.json))
		require.Error(t, err, c.json)
		require.Contains(t, err.Error(), c.want)
	}
	// Through the file reader: size limit and missing file.
	dir := t.TempDir()
	_, err := ReadHFConfig(filepath.Join(dir, "none.json"))
	require.Error(t, err)
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat(" ", 17<<20)), 0o644))
	_, err = ReadHFConfig(big)
	require.ErrorContains(t, err, "larger than")
}

// FuzzHFConfig: no input panics the importer, and what it accepts has
// positive shapes.
func FuzzHFConfig(f *testing.F) {
	for _, n := range NewCatalog().LLMNames() {
		if b, ok := BuiltinConfig(n); ok {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"model_type": "llama", "hidden_size": 0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		imp, err := ParseHFConfig("f.json", b)
		if err != nil {
			return
		}
		m := imp.LLM
		if m.Layers <= 0 || m.Hidden <= 0 || m.Heads <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || !(m.Params > 0) {
			t.Fatalf("accepted a model without positive shapes: %+v", m)
		}
	})
}
