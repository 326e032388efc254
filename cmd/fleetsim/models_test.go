package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/stretchr/testify/require"
)

// fleetsim models: list, gpus, show NAME and show CONFIG.json; a bad
// config and an unknown name exit 2 with the file and key.
func TestModelsCommand(t *testing.T) {
	runCmd := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, _ := runCmd("models", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "llama-3.3-70b")
	require.Contains(t, out, "alias of llama-3-70b")
	code, out, _ = runCmd("models", "gpus")
	require.Equal(t, 0, code)
	for _, g := range []string{"A100-40GB", "A100-80GB", "L40S", "H20", "B300", "GB300", "MI300X", "MI325X", "MI355X"} {
		require.Contains(t, out, g)
	}
	code, out, _ = runCmd("models", "show", "llama-3.1-70b")
	require.Equal(t, 0, code)
	require.Contains(t, out, "an alias of llama-3-70b")
	require.Contains(t, out, "context_tokens = 131072")
	require.Contains(t, out, "KV per token 320 KiB in bf16")
	code, out, _ = runCmd("models", "show", filepath.Join("..", "..", "models", "hw", "configs", "deepseek-v3.json"))
	require.Equal(t, 0, code)
	require.Contains(t, out, "kv_lora_rank = 512")
	require.Contains(t, out, "model_type deepseek_v3")

	dir := t.TempDir()
	bad := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": -1\n}\n"), 0o644))
	code, _, errs := runCmd("models", "show", bad)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, bad+":3: hidden_size: must be a whole number >= 0")
	code, _, errs = runCmd("models", "show", "no-such-model")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "neither a catalog model")
	code, _, _ = runCmd("models", "bogus")
	require.Equal(t, exitUsage, code)
}

// calibrate --models reads [[models]] config = as a scenario does.
func TestCalibrateModelsFileConfig(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join("..", "..", "models", "hw", "configs", "qwen3-32b.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "q.json"), cfg, 0o644))
	path := filepath.Join(dir, "models.toml")
	require.NoError(t, os.WriteFile(path, []byte("[[models]]\nname = \"mine\"\nconfig = \"q.json\"\nparams = 32.8e9\n"), 0o644))
	cat := hw.NewCatalog()
	require.NoError(t, loadCatalogFile(cat, path))
	m := cat.LLMs["mine"]
	require.Equal(t, 32.8e9, m.Params) // the table's key over the derived 32.76e9
	require.Equal(t, 64, m.Layers)
	require.NoError(t, os.WriteFile(path, []byte("[[models]]\nname = \"mine\"\nconfig = \"none.json\"\n"), 0o644))
	require.ErrorContains(t, loadCatalogFile(cat, path), "models.toml:3: models.0.config: cannot use model config")
}
