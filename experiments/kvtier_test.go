package experiments

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// kvTiersRun runs the kv-tiers built-in with overrides.
func kvTiersRun(t *testing.T, kv ...[2]string) *report.Summary {
	t.Helper()
	sc, err := LoadBuiltin("kv-tiers")
	require.NoError(t, err)
	var ovs []scenario.Overlay
	for _, o := range kv {
		ovs = append(ovs, OverrideOverlay(o[0], o[1]))
	}
	sc, err = sc.Derive(ovs...)
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.Equal(t, s.Requests.Arrived, s.Requests.Completed)
	return s
}

// TestKVTiersMooncake: on the Mooncake conversation trace under round-robin
// routing, a large shared store brings the prefix hit rate within 2 points
// of the trace's ideal 37.4%; host DRAM alone climbs towards it as it
// grows (each replica only sees its own share of a conversation's turns).
func TestKVTiersMooncake(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the Mooncake trace five times")
	}
	store := kvTiersRun(t, [2]string{"kv_tiers.store_gb", "100000"})
	t.Logf("shared store: hit rate %.4f (store %.4f)", store.Prefix.HitRate, store.KVTiers["store"].HitRate)
	require.InDelta(t, 0.374, store.Prefix.HitRate, 0.02)
	require.Positive(t, store.KVTiers["store"].LoadS)
	prev := -1.0
	for _, gb := range []string{"0", "128", "512", "2048"} {
		s := kvTiersRun(t, [2]string{"kv_tiers.host_dram_gb_per_gpu", gb})
		t.Logf("host DRAM %s GB/GPU: hit rate %.4f, TTFT p50 %.1f ms", gb, s.Prefix.HitRate, s.LatencyMs.TTFT.P50)
		require.Greater(t, s.Prefix.HitRate, prev)
		prev = s.Prefix.HitRate
	}
	require.Less(t, prev, store.Prefix.HitRate-0.1, "host DRAM alone is in between")
}

// TestKVTiersBadInput: a tier with no bandwidth is refused at its line.
func TestKVTiersBadInput(t *testing.T) {
	src := `name = "t"
[kv_tiers]
enabled = true
host_dram_gb_per_gpu = 64
host_read_gb_per_s = 0
`
	_, err := scenario.Parse("t.toml", []byte(src))
	require.ErrorContains(t, err, "t.toml:5: kv_tiers.host_read_gb_per_s: a host DRAM tier needs a bandwidth > 0")
}

// TestKVTiersCost: the tiers' capacity is priced per GB-month into the
// fleet's monthly cost.
func TestKVTiersCost(t *testing.T) {
	base := `name = "c"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 2
replicas = 3
[workload]
duration_s = 5
[kv_tiers]
enabled = %s
host_dram_gb_per_gpu = 100
store_gb = 1000
`
	run := func(on string) *report.Summary {
		sc, err := scenario.Parse("c.toml", []byte(strings.Replace(base, "%s", on, 1)))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		return report.Summarize(res)
	}
	off, on := run("false"), run("true")
	// 3 replicas × 2 GPUs × 100 GB at $0.12 + 1,000 GB at $0.12 per month,
	// to a block of KV (the capacities are whole blocks).
	require.InDelta(t, 600*0.12+1000*0.12, on.Cost.USDPerMonth-off.Cost.USDPerMonth, 0.01)
	require.InDelta(t, on.KVTiers["host_dram"].USDPerMonth+on.KVTiers["store"].USDPerMonth, on.Cost.USDPerMonth-off.Cost.USDPerMonth, 1e-6)
}

// TestCacheAwareRouterMooncake: on the Mooncake trace with 512 GB of host
// DRAM per GPU, routing by what each replica's HBM and host tier hold
// doubles the prefix hit rate of round-robin; with HBM alone it beats
// prefix-affinity, whose key (a leading segment every request shares)
// cannot keep conversations apart.
func TestCacheAwareRouterMooncake(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the Mooncake trace four times")
	}
	rr := kvTiersRun(t, [2]string{"kv_tiers.host_dram_gb_per_gpu", "512"})
	ca := kvTiersRun(t, [2]string{"kv_tiers.host_dram_gb_per_gpu", "512"}, [2]string{"router.name", `"cache-aware"`})
	t.Logf("host DRAM 512 GB/GPU: round-robin %.4f, cache-aware %.4f", rr.Prefix.HitRate, ca.Prefix.HitRate)
	require.Greater(t, ca.Prefix.HitRate, 1.8*rr.Prefix.HitRate)
	require.Less(t, ca.LatencyMs.TTFT.P50, rr.LatencyMs.TTFT.P50)
	pa := kvTiersRun(t, [2]string{"kv_tiers.enabled", "false"}, [2]string{"router.name", `"prefix-affinity"`})
	hbm := kvTiersRun(t, [2]string{"kv_tiers.enabled", "false"}, [2]string{"router.name", `"cache-aware"`})
	t.Logf("HBM only: prefix-affinity %.4f, cache-aware %.4f", pa.Prefix.HitRate, hbm.Prefix.HitRate)
	require.Greater(t, hbm.Prefix.HitRate, pa.Prefix.HitRate)
}
