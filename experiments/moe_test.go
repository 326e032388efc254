package experiments

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
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
	sc, err := scenario.Parse("moe.toml", []byte(src))
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
	_, err = scenario.Parse("moe.toml", []byte(bad))
	require.Error(t, err)
	line := 1 + strings.Count(bad[:strings.Index(bad, "experts_per_token = 40")], "\n")
	require.Contains(t, err.Error(), "moe.toml:"+itoa(line)+": models.0.experts_per_token")
}

// moeScenario is small with its cluster table replaced.
func moeScenario(cluster string) string {
	src := strings.Replace(small, `[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2`, cluster, 1)
	return src
}

const dsCluster = `[cluster]
gpu = "H200"
model = "deepseek-v3"
tp = 1
dp = 8
ep = 8
replicas = 1
[cluster.replica]
weights = "fp8"
kv_dtype = "fp8"
[cluster.replica.moe]
routing_skew = 0.3
[cluster.replica.speculative]
enabled = true
tokens = 2
acceptance = 0.8`

// Bad layouts and speculation settings are refused at their file:line and
// key.
func TestScenarioLayoutErrors(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"ep = 8", "ep = 4", "cluster.ep: must equal tp·dp = 8"},
		{"dp = 8\nep = 8", "dp = 3\nep = 3", "cluster.ep: EP=3 does not divide deepseek-v3's 256 experts"},
		{"tokens = 2", "tokens = 0", "cluster.replica.speculative.tokens: must be >= 1"},
		{"acceptance = 0.8", "acceptance = 1.5", "cluster.replica.speculative.acceptance"},
		{"routing_skew = 0.3", "routing_skew = 1", "cluster.replica.moe.routing_skew"},
		{"dp = 8\nep = 8", "dp = 2\nep = 2", "cluster.model: deepseek-v3 (344 GB weights per GPU at TP=1 DP=2 EP=2) does not fit"},
		{"dp = 8\nep = 8", "dp = 16\nep = 16\n[[gpus]]\nname = \"H200\"\nhbm_bytes = 141e9\nhbm_bytes_per_s = 4.8e12\nbf16_flops = 989e12\nfp8_flops = 1979e12\nnvlink_bytes_per_s = 900e9\ndomain_gpus = 8", "has no nic_bytes_per_s"},
	} {
		src := moeScenario(strings.Replace(dsCluster, c.old, c.new, 1))
		_, err := scenario.Parse("l.toml", []byte(src))
		require.ErrorContains(t, err, c.want, c.new)
		key := c.want[:strings.Index(c.want, ":")+1]
		if strings.HasPrefix(key, "cluster.") {
			require.Regexp(t, `l\.toml:\d+: `+strings.ReplaceAll(key, ".", `\.`), err.Error())
		}
	}
	_, err := scenario.Parse("l.toml", []byte(moeScenario(strings.Replace(dsCluster, `model = "deepseek-v3"`, `model = "llama-3-70b"`, 1))))
	require.ErrorContains(t, err, "cluster.ep: llama-3-70b is dense")
	// Pipeline stages must divide the layers (80 for Llama-3-70B).
	pp := "[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-70b\"\ntp = 8\npp = 3\nreplicas = 1"
	_, err = scenario.Parse("l.toml", []byte(moeScenario(pp)))
	require.ErrorContains(t, err, "l.toml:10: cluster.pp: pp = 3 pipeline stages do not divide llama-3-70b's 80 layers")
	pp = strings.Replace(pp, "pp = 3", "pp = 2\n[cluster.replica.speculative]\nenabled = true", 1)
	_, err = scenario.Parse("l.toml", []byte(moeScenario(pp)))
	require.ErrorContains(t, err, "cluster.replica.speculative.enabled: speculative decoding with pipeline stages")
	sc, err := scenario.Parse("l.toml", []byte(moeScenario(strings.Replace(pp, "\n[cluster.replica.speculative]\nenabled = true", "", 1))))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.Equal(t, 16, s.Fleet.GPUs)
	require.Equal(t, 2, s.Fleet.Domains)
	require.Equal(t, 2, s.Fleet.PP)
}

// DeepSeek-V3 with DP+EP and speculation runs deterministically and
// conserves requests.
func TestScenarioMoERuns(t *testing.T) {
	sc, err := scenario.Parse("m.toml", []byte(moeScenario(dsCluster)))
	require.NoError(t, err)
	sc.Run.Replications = 1
	reps, err := RunReplications(sc, RunOptions{Workers: 1})
	require.NoError(t, err)
	a := report.NewArmResult("", reps)
	js, err := a.SummaryJSON()
	require.NoError(t, err)
	reps2, err := RunReplications(sc, RunOptions{Workers: 1})
	require.NoError(t, err)
	js2, err := report.NewArmResult("", reps2).SummaryJSON()
	require.NoError(t, err)
	require.Equal(t, string(js), string(js2))
	s := reps[0].Summary
	require.Equal(t, 8, s.Fleet.GPUs)
	require.Equal(t, 8, s.Fleet.EP)
	require.Equal(t, s.Requests.Arrived, s.Requests.Completed+s.Requests.Failed+s.Requests.Shed+s.Requests.InFlight)
	require.Greater(t, s.Requests.Completed, int64(0))
}

// An MoE model with DP+EP and speculation costs the simulator about what a
// dense model does: simulated events per completed request within 2x of
// Llama-3-8B's on the same load (the decode runs stay closed-form).
func TestMoESimulationCost(t *testing.T) {
	perReq := func(cluster string) float64 {
		sc, err := scenario.Parse("c.toml", []byte(moeScenario(cluster)))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		require.Greater(t, s.Requests.Completed, int64(100))
		return float64(s.Sim.Events) / float64(s.Requests.Completed)
	}
	dense := perReq("[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-8b\"\ntp = 1\nreplicas = 2")
	for _, c := range []string{
		"[cluster]\ngpu = \"H100\"\nmodel = \"qwen3-30b-a3b\"\ntp = 1\nreplicas = 2",
		"[cluster]\ngpu = \"H100\"\nmodel = \"qwen3-30b-a3b\"\ntp = 1\ndp = 2\nep = 2\nreplicas = 1\n[cluster.replica.speculative]\nenabled = true",
		dsCluster,
	} {
		moe := perReq(c)
		require.Less(t, moe/dense, 2.0, "events per request: dense %.1f, %q %.1f", dense, c, moe)
		require.Greater(t, moe/dense, 0.5, "events per request: dense %.1f, %q %.1f", dense, c, moe)
	}
}

// The failure blast radius follows the layout: on the same eight H200
// servers and the same failures, EP16 replicas spanning two servers each
// lose up to twice the GPU time to failures that EP8 replicas (one server
// each) do, because any of a replica's 16 GPUs takes all of it out (less
// than twice when two failures fall on the same pair at once).
func TestMoEBlastRadius(t *testing.T) {
	down := func(dp, replicas int) (float64, int) {
		c := strings.NewReplacer("dp = 8\nep = 8\nreplicas = 1", fmt.Sprintf("dp = %d\nep = %d\nreplicas = %d", dp, dp, replicas)).Replace(dsCluster)
		src := moeScenario(c) + "[failures]\nenabled = true\nrate_multiplier = 200000\ncold_start_s = 30\n"
		sc, err := scenario.Parse("f.toml", []byte(src))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		require.Equal(t, 64, s.Fleet.GPUs)
		require.NotNil(t, s.Failures)
		return s.Cost.Wasted.DownUSD, s.Failures.Events
	}
	d8, e8 := down(8, 8)
	d16, e16 := down(16, 4)
	t.Logf("events %d; down $: EP8 %.3f, EP16 %.3f", e8, d8, d16)
	require.Equal(t, e8, e16, "same servers, same failures")
	require.Greater(t, e8, 0)
	require.Greater(t, d16, 1.2*d8, "EP16 down $ %.2f vs EP8 %.2f", d16, d8)
	require.LessOrEqual(t, d16, 2*d8+1e-9, "EP16 down $ %.2f vs EP8 %.2f", d16, d8)
}

// Per-request acceptance is drawn from the "speculation" stream: the
// workload is untouched (same arrivals and tokens), the run is
// deterministic, and the spread changes TPOT.
func TestSpecPerRequestRun(t *testing.T) {
	run := func(spread string) *report.Summary {
		c := "[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-8b\"\ntp = 1\nreplicas = 2\n[cluster.replica.speculative]\nenabled = true\ntokens = 4\nacceptance = 0.6\nacceptance_spread = " + spread
		sc, err := scenario.Parse("s.toml", []byte(moeScenario(c)))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		return report.Summarize(res)
	}
	a, b, a2 := run("0"), run("0.4"), run("0")
	ja, _ := a.MarshalJSON()
	ja2, _ := a2.MarshalJSON()
	require.Equal(t, string(ja), string(ja2))
	require.Equal(t, a.Requests.Arrived, b.Requests.Arrived)
	require.NotEqual(t, a.LatencyMs.TPOT.P50, b.LatencyMs.TPOT.P50)
	jb, _ := b.MarshalJSON()
	jb2, _ := run("0.4").MarshalJSON()
	require.Equal(t, string(jb), string(jb2))
	_, err := scenario.Parse("s.toml", []byte(moeScenario("[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-8b\"\ntp = 1\nreplicas = 2\n[cluster.replica.speculative]\nenabled = true\nacceptance_spread = 0.7")))
	require.ErrorContains(t, err, "cluster.replica.speculative.acceptance_spread: must be between 0 and 0.5")
}
