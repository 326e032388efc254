package plot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKVTiersFigure: from replications.csv, the share of prompt tokens each
// tier served is averaged per sweep point, HBM being the rest of the
// prefix hit rate; bars are labelled by the swept value; a run without
// [kv_tiers] columns gets no figure.
func TestKVTiersFigure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "replications.csv")
	require.NoError(t, os.WriteFile(path, []byte(`arm,replication,seed,kv_tiers.host_dram.hit_rate,prefix_cache.hit_rate
kv_tiers.host_dram_gb_per_gpu=0,0,1,,0.05
kv_tiers.host_dram_gb_per_gpu=0,1,2,,0.07
kv_tiers.host_dram_gb_per_gpu=512,0,1,0.10,0.15
kv_tiers.host_dram_gb_per_gpu=512,1,2,0.12,0.17
`), 0o644))
	tb, ok, err := readTable(filepath.Dir(path), filepath.Base(path))
	require.NoError(t, err)
	require.True(t, ok)
	s, err := readKVTiers(tb)
	require.NoError(t, err)
	got := map[string]float64{}
	for _, x := range s {
		got[x.Arm+"/"+x.Tier] = x.Share
	}
	require.InDelta(t, 0.06, got["kv_tiers.host_dram_gb_per_gpu=0/HBM"], 1e-12)
	require.InDelta(t, 0.0, got["kv_tiers.host_dram_gb_per_gpu=0/host DRAM"], 1e-12)
	require.InDelta(t, 0.05, got["kv_tiers.host_dram_gb_per_gpu=512/HBM"], 1e-12)
	require.InDelta(t, 0.11, got["kv_tiers.host_dram_gb_per_gpu=512/host DRAM"], 1e-12)
	_, hasSSD := got["kv_tiers.host_dram_gb_per_gpu=512/SSD"]
	require.False(t, hasSSD, "tiers without a column are left out")
	f, err := KVTiersFigure(Meta{Scenario: "kv-tiers"}, s)
	require.NoError(t, err)
	require.Equal(t, "kv_tiers", f.Name)
	require.Equal(t, "host_dram_gb_per_gpu", f.Plot.X.Label.Text)
	written, err := Write(t.TempDir(), f)
	require.NoError(t, err)
	checkPNG(t, written[0])

	require.NoError(t, os.WriteFile(path, []byte("arm,replication,seed,prefix_cache.hit_rate\n,0,1,0.2\n"), 0o644))
	tb, _, err = readTable(filepath.Dir(path), filepath.Base(path))
	require.NoError(t, err)
	s, err = readKVTiers(tb)
	require.NoError(t, err)
	require.Empty(t, s)
}
