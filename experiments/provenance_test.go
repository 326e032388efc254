package experiments

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// The provenance hash reads the files a scenario replays by their
// contents: the same trace in two folders hashes the same, a trace whose
// contents changed does not; likewise an arrival rate profile.
func TestProvenanceHashesFileContents(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	trace := "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10, \"hash_ids\": [0]}\n" +
		"{\"timestamp\": 10, \"input_length\": 200, \"output_length\": 20, \"hash_ids\": [1]}\n"
	src := "name = \"p\"\n[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-8b\"\ntp = 1\nreplicas = 1\n" +
		"[workload]\nkind = \"trace\"\n[workload.trace]\npath = \"t.jsonl\"\n"
	hash := func(sub, traceBody string) string {
		write(filepath.Join(sub, "t.jsonl"), traceBody)
		sc, err := scenario.Load(write(filepath.Join(sub, "s.toml"), src))
		require.NoError(t, err)
		h, err := CanonicalScenarios([]*scenario.Scenario{sc})
		require.NoError(t, err)
		return h
	}
	a, b := hash("a", trace), hash("b", trace)
	require.Equal(t, a, b, "the same trace in another folder")
	c := hash("c", trace+"{\"timestamp\": 20, \"input_length\": 300, \"output_length\": 30, \"hash_ids\": [2]}\n")
	require.NotEqual(t, a, c, "a trace whose contents changed")

	profile := func(sub, body string) string {
		write(filepath.Join(sub, "rate.csv"), body)
		sc, err := scenario.Load(write(filepath.Join(sub, "s.toml"), "name = \"q\"\n[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-8b\"\ntp = 1\nreplicas = 1\n"+
			"[workload]\nduration_s = 60\n[workload.arrival]\nprocess = \"piecewise\"\nprofile_file = \"rate.csv\"\n"))
		require.NoError(t, err)
		h, err := CanonicalScenarios([]*scenario.Scenario{sc})
		require.NoError(t, err)
		return h
	}
	p1, p2 := profile("d", "t_s,rate_per_s\n0,5\n30,10\n"), profile("e", "t_s,rate_per_s\n0,5\n30,10\n")
	require.Equal(t, p1, p2, "the same rate profile in another folder")
	require.NotEqual(t, p1, profile("f", "t_s,rate_per_s\n0,5\n30,11\n"), "a rate profile whose contents changed")
}
