package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/stretchr/testify/require"
)

// TestRunDirHasADataDictionary: a run directory (here a sweep's, with
// failures, swept keys, per-arm summaries and summary.json keys) ships
// columns.csv, which names every file in it and every column of each of
// its CSV files, in header order, each with a meaning, and a unit for
// the columns whose unit is not in their name (issue 32 item 8: nothing
// in a run directory said what its columns meant).
func TestRunDirHasADataDictionary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	_, stderr, code := fleetsim(t, nil, "sweep", "default", "--param", "cluster.replicas=3,4", "--param", "workload.duration_s=20",
		"--replications", "2", "--set", "failures.enabled=true", "--set", "failures.rate_multiplier=1000000", "--out", out, "--quiet")
	require.Zero(t, code, stderr)
	f, err := os.Open(filepath.Join(out, "columns.csv"))
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, results.ColumnsFile.Names(), recs[0])
	described := map[string][]string{} // file → its columns, in order
	units := map[string]string{}
	for _, r := range recs[1:] {
		require.NotEmpty(t, r[3], "%v has no meaning", r)
		if r[1] == "" {
			described[r[0]] = []string{}
			continue
		}
		described[r[0]] = append(described[r[0]], r[1])
		units[r[0]+" "+r[1]] = r[2]
	}
	ents, err := os.ReadDir(out)
	require.NoError(t, err)
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			require.Equal(t, "arms", name)
			name = "arms/*/summary.json"
		}
		cols, ok := described[name]
		require.True(t, ok, "columns.csv does not describe %s", name)
		if !strings.HasSuffix(name, ".csv") {
			continue
		}
		h, err := os.Open(filepath.Join(out, name))
		require.NoError(t, err)
		header, err := csv.NewReader(h).Read()
		h.Close()
		require.NoError(t, err)
		require.Equal(t, header, cols, name)
	}
	require.Contains(t, described, "failures.csv")
	require.Equal(t, "ms", units["sweep.csv ttft_p99_ms"])
	require.Equal(t, "ms", units["replications.csv latency_ms.ttft.p99"])
	require.Equal(t, "fraction", units["sweep.csv availability_ci95"])
}
