package experiments

import (
	"encoding/json"
	"fmt"
	"github.com/fleetsim/fleetsim/models/hw"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// mixedFleet is a fleet of an H100 and a B200 group serving Llama-3-70B;
// %s is where the B200 group's [cluster.groups.replica] table goes.
const mixedFleet = `name = "mix"
[cluster]
model = "llama-3-70b"
[[cluster.groups]]
name = "h100"
gpu = "H100"
tp = 8
replicas = 2
[[cluster.groups]]
name = "b200"
gpu = "B200"
tp = 8
replicas = 2
%s
[router]
name = "weighted-least-outstanding"
[workload]
duration_s = 120
[workload.arrival]
rate_per_s = 40
`

func summaryBlocks(t *testing.T, src string) (map[string]json.RawMessage, *report.Summary) {
	t.Helper()
	sc, err := scenario.Parse("mix.toml", []byte(src))
	require.NoError(t, err, src)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	js, err := s.MarshalJSON()
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(js, &m))
	return m, s
}

// A group's [cluster.groups.replica] that restates the fleet's settings
// changes nothing but the group's engine block.
func TestGroupEngineRestatedIsTheSame(t *testing.T) {
	plain, _ := summaryBlocks(t, fmt.Sprintf(mixedFleet, ""))
	restated, s := summaryBlocks(t, fmt.Sprintf(mixedFleet, "[cluster.groups.replica]\nbatching = \"chunked\"\nmax_seqs = 256\nweights = \"bf16\"\n[cluster.groups.replica.perf]\nprofile = \"default\""))
	for k, v := range plain {
		if k != "fleet" {
			require.JSONEq(t, string(v), string(restated[k]), k)
		}
	}
	g := s.Fleet.Groups
	require.Nil(t, g[0].Engine, "the H100 group has no table: no engine block")
	require.Equal(t, &report.GroupEngine{Batching: "chunked", MaxSeqs: 256, MaxBatchedTokens: 8192, GPUMemoryUtilization: 0.9,
		KVAdmission: "prompt", Weights: "bf16", KVDType: "bf16", EngineProfile: hw.ProfileLabel("default")}, g[1].Engine)
	g[1].Engine = nil
	var pf report.FleetStats
	require.NoError(t, json.Unmarshal(plain["fleet"], &pf))
	require.Equal(t, pf.Groups, g)
}

// A B200 group on FP4 weights (which H100 cannot run) with a larger batch:
// its weights take half the HBM of FP8's, so it holds more KV, and it
// decodes faster, so the weighted router rates the H100s lower against it.
func TestGroupEngineFP4(t *testing.T) {
	fl := strings.Replace(mixedFleet, "model = \"llama-3-70b\"\n", "model = \"llama-3-70b\"\n[cluster.replica]\nweights = \"fp8\"\n", 1)
	_, fp8 := summaryBlocks(t, fmt.Sprintf(fl, ""))
	_, fp4 := summaryBlocks(t, fmt.Sprintf(fl, "[cluster.groups.replica]\nweights = \"fp4\"\nmax_seqs = 512"))
	a, b := fp8.Fleet.Groups, fp4.Fleet.Groups
	require.Equal(t, a[0].BlocksPerReplica, b[0].BlocksPerReplica, "the H100 group is the same")
	require.Greater(t, b[1].BlocksPerReplica, a[1].BlocksPerReplica)
	require.Less(t, b[0].Capacity, a[0].Capacity)
	require.Equal(t, "fp4", b[1].Engine.Weights)
	require.Equal(t, 512, b[1].Engine.MaxSeqs)
	r := fp4.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
	require.Greater(t, r.Completed, int64(0))
}

// Bad group engine settings are refused at their file, line and key.
func TestGroupEngineRefusals(t *testing.T) {
	cases := []struct{ table, want string }{
		{"[cluster.groups.replica]\nmax_seqs = 0", "mix.toml:15: cluster.groups.1.replica.max_seqs: must be an integer > 0"},
		{"[cluster.groups.replica]\nbatching = \"eager\"", "mix.toml:15: cluster.groups.1.replica.batching: unknown name \"eager\""},
		{"[cluster.groups.replica]\nprefix_caching = false", "mix.toml:15: cluster.groups.1.replica.prefix_caching: is the fleet's, not a group's"},
		{"[cluster.groups.replica]\nblock_tokens = 32", "mix.toml:15: cluster.groups.1.replica.block_tokens: is the fleet's"},
		{"[cluster.groups.replica.speculative]\nenabled = true", "mix.toml:14: cluster.groups.1.replica.speculative: is the fleet's"},
		{"[cluster.groups.replica.perf]\nprofile = \"no-such\"", "mix.toml:15: cluster.groups.1.replica.perf.profile: unknown name \"no-such\""},
		{"[cluster.groups.replica.perf]\nprofile = \"missing.toml\"", "mix.toml:15: cluster.groups.1.replica.perf.profile: cannot use profile file"},
		{"[cluster.groups.replica]\nmax_sequences = 3", "mix.toml:15: cluster.groups.1.replica.max_sequences"},
		{"[cluster.groups.replica]\ngpu_memory_utilization = 0.1", "cluster.groups.1.model: llama-3-70b"},
	}
	for _, c := range cases {
		_, err := scenario.Parse("mix.toml", []byte(fmt.Sprintf(mixedFleet, c.table)))
		require.ErrorContains(t, err, c.want, c.table)
	}
	// FP4 compute on the H100 group: its table is the first group's.
	src := strings.Replace(fmt.Sprintf(mixedFleet, ""), "replicas = 2\n", "replicas = 2\n[cluster.groups.replica]\nweights = \"fp4\"\ncompute = \"fp4\"\n", 1)
	_, err := scenario.Parse("mix.toml", []byte(src))
	require.ErrorContains(t, err, "mix.toml:11: cluster.groups.0.replica.compute: fp4 compute needs FP4 tensor cores")
}

// The mixes `size` tries keep each group's own engine settings (its
// overlay rewrites the groups' counts, not their tables).
func TestGroupEngineSurvivesSizeMix(t *testing.T) {
	sc, err := scenario.Parse("mix.toml", []byte(fmt.Sprintf(mixedFleet, "[cluster.groups.replica]\nmax_seqs = 512")))
	require.NoError(t, err)
	mix, err := sc.Derive(groupsOverlay(sc.Cluster.Groups, 3, 1))
	require.NoError(t, err)
	g := mix.Cluster.Groups
	require.Equal(t, 3, g[0].Replicas)
	require.Equal(t, 1, g[1].Replicas)
	require.Nil(t, g[0].Replica)
	require.NotNil(t, g[1].Replica)
	require.Equal(t, 512, g[1].Replica.MaxSeqs)
}

// A sweep reaches into a group by its index: the other groups and the
// group's other keys (here its own weights) stay as written.
func TestSweepGroupKeys(t *testing.T) {
	base, err := scenario.Parse("mix.toml", []byte(fmt.Sprintf(mixedFleet, "[cluster.groups.replica]\nweights = \"fp8\"")))
	require.NoError(t, err)
	scs, _, err := SweepScenarios(base, []scenario.Axis{
		{Key: "cluster.groups.1.replica.max_seqs", Values: []string{"8", "512"}},
		{Key: "cluster.groups.0.replicas", Values: []string{"1", "3"}},
	})
	require.NoError(t, err)
	require.Len(t, scs, 4)
	for i, sc := range scs {
		g := sc.Cluster.Groups
		require.Len(t, g, 2)
		require.Equal(t, []string{"h100", "b200"}, []string{g[0].Name, g[1].Name})
		require.Equal(t, []int{1, 3}[i%2], g[0].Replicas)
		require.Equal(t, 2, g[1].Replicas)
		require.Nil(t, g[0].Replica)
		require.Equal(t, []int{8, 512}[i/2], g[1].Replica.MaxSeqs)
		require.Equal(t, "fp8", g[1].Replica.Weights)
		require.Equal(t, g[0].Replicas+g[1].Replicas, sc.Cluster.Replicas, "the fleet's total follows")
	}
	for key, want := range map[string]string{
		"cluster.groups.2.replicas": "cluster.groups has 2 elements in mix (numbered from 0)",
		"cluster.groups.1":          "name a key of cluster.groups's element 1",
	} {
		_, _, err := SweepScenarios(base, []scenario.Axis{{Key: key, Values: []string{"1"}}})
		require.ErrorContains(t, err, want, key)
	}
	// A bad value is the file's problem, at the group's table.
	_, _, err = SweepScenarios(base, []scenario.Axis{{Key: "cluster.groups.1.replica.max_seqs", Values: []string{"0"}}})
	require.ErrorContains(t, err, "with --param cluster.groups.1.replica.max_seqs=0:\nmix.toml:14: cluster.groups.1.replica.max_seqs: must be an integer > 0")
}

// TestGroupDownReplicas: a group's down_replicas takes its last replicas out
// of service for the whole run: they serve nothing, the others take the
// load, the summary and the results table say so, and their GPU-hours at
// the group's own price are in cost.wasted.down_usd.
func TestGroupDownReplicas(t *testing.T) {
	sc, err := scenario.Parse("mix.toml", []byte(fmt.Sprintf(mixedFleet, "down_replicas = 1")))
	require.NoError(t, err)
	require.Equal(t, []int{3}, sc.Cluster.DownIndexes(), "the b200 group's last replica")
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	reps := res.Fleet.Replicas
	require.Zero(t, reps[3].Stats.DecodeTokens, "the down replica serves nothing")
	for i := 0; i < 3; i++ {
		require.Positive(t, reps[i].Stats.DecodeTokens, "replica %d serves", i)
	}
	s := report.Summarize(res)
	r := s.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
	require.Zero(t, r.Failed)
	g := s.Fleet.Groups
	require.Zero(t, g[0].DownReplicas)
	require.Equal(t, 1, g[1].DownReplicas)
	secs := res.EndTime.Seconds()
	require.InDelta(t, 8*secs/3600*g[1].PricePerGPUHour, s.Cost.Wasted.DownUSD, 1e-5)
	require.InDelta(t, 2*8*secs/3600*g[1].PricePerGPUHour, g[1].USD, 1e-5, "the down replica is paid for")
	var b strings.Builder
	require.NoError(t, s.WriteTable(&b))
	require.Contains(t, b.String(), "b200 2× llama-3-70b TP=8 on B200 (1 down)")

	plain, _ := summaryBlocks(t, fmt.Sprintf(mixedFleet, ""))
	zero, _ := summaryBlocks(t, fmt.Sprintf(mixedFleet, "down_replicas = 0"))
	require.Equal(t, plain, zero, "down_replicas = 0 changes nothing")
}

// TestGroupDownReplicasRefusals: bad counts and the combinations not
// modelled are refused at the key, with what to do.
func TestGroupDownReplicasRefusals(t *testing.T) {
	with := func(groupKeys, extra string) string { return fmt.Sprintf(mixedFleet, groupKeys) + extra }
	for _, c := range []struct{ src, want string }{
		{with("down_replicas = 3", ""), "mix.toml:14: cluster.groups.1.down_replicas: must be between 0 and the group's replicas (2), found 3"},
		{with("down_replicas = -1", ""), "cluster.groups.1.down_replicas: must be between 0 and the group's replicas (2), found -1"},
		{strings.Replace(with("down_replicas = 2", ""), "replicas = 2\n", "replicas = 2\ndown_replicas = 2\n", 1),
			"cluster.groups: down_replicas take all 4 replicas out of service"},
		{with("", "[run]\ndown_replicas = 1\n"), "run.down_replicas: a fleet of groups takes replicas down per group: set down_replicas in the [[cluster.groups]]"},
		{with("down_replicas = 1", "[spot]\nreplicas = 2\ngroup = \"b200\"\n"), "spot.replicas: must be an integer in [0, the group's replicas − its down_replicas = 1], found 2"},
		{with("down_replicas = 1", "[autoscale]\nenabled = true\nmin_replicas = 4\n"), "autoscale.min_replicas: must be at most the groups' replicas − their down_replicas = 3 (the replicas not in repair), found 4"},
	} {
		_, err := scenario.Parse("mix.toml", []byte(c.src))
		require.ErrorContains(t, err, c.want, c.src)
	}
}

// TestGroupDownReplicasSurviveSizeMix: a mix the sizing tries keeps a
// group's down_replicas, capped at the group's size.
func TestGroupDownReplicasSurviveSizeMix(t *testing.T) {
	sc, err := scenario.Parse("mix.toml", []byte(fmt.Sprintf(mixedFleet, "down_replicas = 1")))
	require.NoError(t, err)
	for _, c := range [][3]int{{3, 4, 1}, {2, 1, 1}, {3, 0, 0}} {
		mix, err := sc.Derive(groupsOverlay(sc.Cluster.Groups, c[0], c[1]))
		require.NoError(t, err)
		require.Equal(t, c[2], mix.Cluster.Groups[1].DownReplicas, "%v", c)
		require.Zero(t, mix.Cluster.Groups[0].DownReplicas)
	}
}

// TestGroupsFallback: a fleet of groups with a [fallback] pool. While every
// group replica is down (scripted faults), the gateway sends requests to the
// fallback (2x Llama-3-8B on H100 by default); every request is accounted
// for; the groups' stats cover the groups' replicas only; and the bill is
// the groups' plus the fallback's GPU-hours at its price.
func TestGroupsFallback(t *testing.T) {
	var faults strings.Builder
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&faults, "[[faults]]\nreplica = %d\nmode = \"fail\"\nat_s = 30\nduration_s = 40\n", i)
	}
	src := fmt.Sprintf(mixedFleet, "") + "[fallback]\nenabled = true\n" + faults.String()
	sc, err := scenario.Parse("mix.toml", []byte(src))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	r := s.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
	require.Positive(t, s.Resilience.Fallbacks, "the fallback took requests while the groups were down")
	require.Len(t, res.Fleet.Fallback.Replicas, 2)
	for _, fb := range res.Fleet.Fallback.Replicas {
		require.Positive(t, fb.Stats.DecodeTokens)
	}
	var groupTokens int64
	for _, g := range s.Fleet.Groups {
		groupTokens += g.OutputTokens
	}
	var primaryTokens int64
	for _, rp := range res.Fleet.Replicas {
		primaryTokens += rp.Stats.DecodeTokens
	}
	require.Equal(t, primaryTokens, groupTokens, "the groups' tokens are their replicas' only")
	fbPrice := sc.Catalog().GPUs["H100"].PricePerGPUHour
	hours := res.EndTime.Seconds() / 3600
	require.InDelta(t, s.Fleet.Groups[0].USD+s.Fleet.Groups[1].USD+2*hours*fbPrice, s.Cost.USD, 1e-4)
}
