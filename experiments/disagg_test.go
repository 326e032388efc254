package experiments

import (
	"math"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// TestDisaggBadInput: a disaggregated fleet with a link its topology does
// not have, a GPU without NIC bandwidth, or a decode pool that cannot hold
// the model is refused with file, line and key.
func TestDisaggBadInput(t *testing.T) {
	base := `name = "pd"
[cluster]
gpu = "H100"
model = "llama-3-70b"
tp = 8
replicas = 2
[disagg]
enabled = true
link = "%LINK%"
[disagg.decode]
gpu = "%GPU%"
tp = %TP%
replicas = 2
[[gpus]]
name = "H100-nonic"
hbm_bytes = 80e9
hbm_bytes_per_s = 3.35e12
bf16_flops = 989e12
fp8_flops = 1979e12
nvlink_bytes_per_s = 900e9
nic_bytes_per_s = 0
domain_gpus = 8
`
	for _, tc := range []struct {
		name, link, gpu, tp string
		want                string
	}{
		{"nvlink between servers", "nvlink", "H100", "8", `pd.toml:9: disagg.link: "nvlink": prefill replica 0`},
		{"zero NIC bandwidth", "rdma", "H100-nonic", "8", `pd.toml:9: disagg.link: prefill replica 0 and decode replica 0 need an RDMA link, but H100/H100-nonic have no NIC bandwidth`},
		{"pool cannot hold the model", "auto", "H100", "1", `disagg.decode.model`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer("%LINK%", tc.link, "%GPU%", tc.gpu, "%TP%", tc.tp).Replace(base)
			_, err := scenario.Parse("pd.toml", []byte(src))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	// The pool that cannot hold the model is named at the line of the
	// decode table's model (inherited: its table's line).
	src := strings.NewReplacer("%LINK%", "auto", "%GPU%", "H100", "%TP%", "1").Replace(base)
	_, err := scenario.Parse("pd.toml", []byte(src))
	require.ErrorContains(t, err, "does not fit")
	// Sound: the same over RDMA between servers.
	src = strings.NewReplacer("%LINK%", "auto", "%GPU%", "H100", "%TP%", "8").Replace(base)
	_, err = scenario.Parse("pd.toml", []byte(src))
	require.NoError(t, err)
}

// pdArms runs the pd-disaggregation built-in's two arms once, with
// overrides, and returns their goodput (requests meeting the SLO per s).
func pdArms(t *testing.T, overrides ...[2]string) (colocated, disagg *report.Summary) {
	t.Helper()
	sc, err := LoadBuiltin("pd-disaggregation")
	require.NoError(t, err)
	ovs := []scenario.Overlay{OverrideOverlay("run.replications", "1"), OverrideOverlay("workload.duration_s", "120")}
	for _, o := range overrides {
		ovs = append(ovs, OverrideOverlay(o[0], o[1]))
	}
	base, err := sc.Derive(ovs...)
	require.NoError(t, err)
	arms, err := ArmsFromScenario(base)
	require.NoError(t, err)
	require.Len(t, arms, 2)
	var out [2]*report.Summary
	for i, a := range arms {
		res, err := Run(a.Scenario, Options{})
		require.NoError(t, err)
		out[i] = report.Summarize(res)
		require.Equal(t, 8, out[i].Fleet.GPUs, "same GPU count in both arms")
		require.Equal(t, out[i].Requests.Arrived, out[i].Requests.Completed)
	}
	return out[0], out[1]
}

// TestPDDisaggregationDirection: as DistServe and Splitwise report, on
// long prompts with tight TTFT and TPOT SLOs splitting prefill from decode
// raises SLO goodput on the same GPUs (here about 2x), by taking prefill
// chunks out of decode steps (lower TPOT); on short prompts with loose
// SLOs it ties or loses (the split only adds a hop).
func TestPDDisaggregationDirection(t *testing.T) {
	co, dis := pdArms(t)
	t.Logf("long prompts: goodput %.2f → %.2f req/s, TPOT p99 %.2f → %.2f ms, TTFT p99 %.1f → %.1f ms",
		co.Goodput.RequestsPerS, dis.Goodput.RequestsPerS, co.LatencyMs.TPOT.P99, dis.LatencyMs.TPOT.P99, co.LatencyMs.TTFT.P99, dis.LatencyMs.TTFT.P99)
	require.Greater(t, dis.Goodput.RequestsPerS, 1.5*co.Goodput.RequestsPerS)
	require.Less(t, dis.LatencyMs.TPOT.P99, co.LatencyMs.TPOT.P99)
	require.NotNil(t, dis.Disagg)
	require.Nil(t, co.Disagg)
	require.Equal(t, dis.Requests.Completed, dis.Disagg.Transfers)
	sp := dis.Disagg.TTFTSplitMs
	sum := sp["prefill_queue"].Mean + sp["prefill"].Mean + sp["decode_wait"].Mean + sp["transfer"].Mean + sp["decode_first"].Mean
	require.InDelta(t, dis.LatencyMs.TTFT.Mean, sum, 1e-3*dis.LatencyMs.TTFT.Mean+1e-3)
	require.InEpsilon(t, co.Cost.USDPerMonth, dis.Cost.USDPerMonth, 1e-9, "same GPUs, same monthly cost")

	co, dis = pdArms(t, [2]string{"workload.input.mean", "256"}, [2]string{"workload.input.p99", "1024"},
		[2]string{"workload.arrival.rate_per_s", "120"}, [2]string{"slo.ttft_ms", "2000"}, [2]string{"slo.tpot_ms", "100"})
	t.Logf("short prompts: goodput %.2f → %.2f req/s, TTFT p50 %.1f → %.1f ms",
		co.Goodput.RequestsPerS, dis.Goodput.RequestsPerS, co.LatencyMs.TTFT.P50, dis.LatencyMs.TTFT.P50)
	require.LessOrEqual(t, dis.Goodput.RequestsPerS, co.Goodput.RequestsPerS*1.001)
	require.Greater(t, dis.LatencyMs.TTFT.P50, co.LatencyMs.TTFT.P50, "the extra hop shows in the median TTFT")
	require.False(t, math.IsNaN(dis.Disagg.KVBytesMoved))
}

// TestDisaggDecodeFaults: a decode replica that crashes in a scenario
// ([[disagg.faults]]) loses its requests' KV; they are prefilled again
// (counted as waste) and complete; the run is deterministic. A mode the
// decode pool does not take yet is refused at its line.
func TestDisaggDecodeFaults(t *testing.T) {
	src := `name = "pd-faults"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2
[workload]
kind = "synthetic"
duration_s = 60
[workload.arrival]
rate_per_s = 10
[workload.input]
dist = "lognormal"
mean = 2048
p99 = 6000
[workload.output]
dist = "lognormal"
mean = 400
p99 = 1200
[disagg]
enabled = true
[disagg.decode]
replicas = 2
[[disagg.faults]]
at_s = 20
replica = 1
mode = "%MODE%"
restart_s = 5
cold_start_s = 10
`
	sc, err := scenario.Parse("pd.toml", []byte(strings.Replace(src, "%MODE%", "fail", 1)))
	require.NoError(t, err)
	var outs [2]string
	for k := range outs {
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		require.Equal(t, s.Requests.Arrived, s.Requests.Completed, "every request completes")
		require.Positive(t, s.Disagg.RePrefills, "the crash lost KV")
		require.Equal(t, s.Disagg.Transfers, s.Requests.Completed+s.Disagg.RePrefills, "a re-prefilled request transfers twice")
		js, err := s.MarshalJSON()
		require.NoError(t, err)
		outs[k] = string(js)
	}
	require.Equal(t, outs[0], outs[1])
	_, err = scenario.Parse("pd.toml", []byte(strings.Replace(src, "%MODE%", "maintenance", 1)))
	require.ErrorContains(t, err, `pd.toml:27: disagg.faults.0.mode: a decode replica takes one of`)
}

// TestDisaggCDFAndMerge: cdf.csv carries a disaggregated arm's TTFT stages,
// and a sharded run's part file brings them back unchanged.
func TestDisaggCDFAndMerge(t *testing.T) {
	sc, err := LoadBuiltin("pd-disaggregation")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("run.replications", "2"), OverrideOverlay("workload.duration_s", "30"))
	require.NoError(t, err)
	arms, err := ArmsFromScenario(sc)
	require.NoError(t, err)
	reps, err := RunReplications(arms[1].Scenario, RunOptions{Workers: 1})
	require.NoError(t, err)
	cdf := func(reps []*report.RepResult) string {
		tb := results.NewTable(results.CDFFile, nil, nil)
		report.NewArmResult("disagg", reps).CDFRows(tb)
		return string(tb.Bytes())
	}
	want := cdf(reps)
	for _, st := range report.TTFTStages {
		require.Contains(t, want, "disagg,ttft_"+st+",")
	}
	dir := t.TempDir()
	prov, err := NewProvenance("run", nil, []*scenario.Scenario{arms[1].Scenario}, 1)
	require.NoError(t, err)
	path, err := NewPart("run", Shard{1, 1}, sc.Name, []string{""}, [][]*report.RepResult{reps}, prov).Write(dir)
	require.NoError(t, err)
	_, merged, err := ReadParts([]string{path})
	require.NoError(t, err)
	require.Equal(t, want, cdf(merged[0]))
	co, err := RunReplications(arms[0].Scenario, RunOptions{Workers: 1})
	require.NoError(t, err)
	require.NotContains(t, cdf(co), "ttft_transfer", "co-located arms have no stages")
}

// TestDisaggSizeRefused: Size (one pool size) refuses a disaggregated
// fleet and points to SizeMix, which searches both.
func TestDisaggSizeRefused(t *testing.T) {
	sc, err := LoadBuiltin("pd-disaggregation")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("disagg.enabled", "true"))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=800ms")
	require.NoError(t, err)
	_, err = Size(sc, targets, 0.95, RunOptions{})
	require.ErrorContains(t, err, "SizeMix")
}
