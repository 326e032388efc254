package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/stretchr/testify/require"
)

// [[models]] config = "config.json" reads a Hugging Face config relative
// to the scenario file; the table's keys override it; a bad config is
// refused once, at the config key's line, with the config's file and key.
func TestModelsConfig(t *testing.T) {
	dir := t.TempDir()
	cfg, ok := hw.BuiltinConfig("llama-3-70b")
	require.True(t, ok)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cfg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cfg", "config.json"), cfg, 0o644))
	src := `name = "m"
[cluster]
model = "my-llama"
gpu = "MI300X"
tp = 8
replicas = 1
[[models]]
name = "my-llama"
config = "cfg/config.json"
context_tokens = 65536
`
	path := filepath.Join(dir, "m.toml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	sc, err := Load(path)
	require.NoError(t, err)
	m := sc.Catalog().LLMs["my-llama"]
	want := hw.NewCatalog().LLMs["llama-3-70b"]
	require.Equal(t, 65536, m.ContextTokens)
	require.Equal(t, want.KVBytesPerToken(2), m.KVBytesPerToken(2))
	require.InEpsilon(t, want.Params, m.Params, 0.01)
	// An AMD GPU is outside the default profile's domain.
	w := sc.ProfileWarnings()
	require.NotEmpty(t, w)
	require.Contains(t, w[0], "GPU MI300X")
	// Derive re-reads it.
	d, err := sc.Derive(Overlay{Name: "o", TOML: []byte("[cluster]\nreplicas = 2\n")})
	require.NoError(t, err)
	require.Equal(t, m, d.Catalog().LLMs["my-llama"])

	// A config with an unknown architecture.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cfg", "config.json"), []byte("{\n \"model_type\": \"gemma3\"\n}\n"), 0o644))
	_, err = Load(path)
	require.Error(t, err)
	require.Contains(t, err.Error(), "m.toml:9: models.0.config: cannot use model config:")
	require.Contains(t, err.Error(), "config.json:2: model_type: unknown architecture")
	require.NotContains(t, err.Error(), "models.0.layers")
	// A missing one.
	require.NoError(t, os.Remove(filepath.Join(dir, "cfg", "config.json")))
	_, err = Load(path)
	require.ErrorContains(t, err, "models.0.config: cannot use model config:")
}

// The catalog's aliases for current releases resolve to their
// architecture: model = "llama-3.1-70b" works.
func TestModelAliases(t *testing.T) {
	for alias, name := range map[string]string{"llama-3.1-70b": "llama-3-70b", "llama-3.3-70b": "llama-3-70b",
		"llama-3.1-8b": "llama-3-8b", "deepseek-r1": "deepseek-v3"} {
		src := "name = \"a\"\n[cluster]\nmodel = \"" + alias + "\"\ngpu = \"B300\"\ntp = 8\nreplicas = 1\n[cluster.replica]\nweights = \"fp8\"\n"
		sc, err := Parse("a.toml", []byte(src))
		require.NoError(t, err, alias)
		got, want := sc.Catalog().LLMs[alias], sc.Catalog().LLMs[name]
		want.Name = alias
		require.Equal(t, want, got)
	}
	require.Equal(t, 131072, hw.NewCatalog().LLMs["llama-3.3-70b"].ContextTokens)
}
