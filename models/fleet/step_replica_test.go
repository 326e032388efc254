package fleet

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// A request longer than the model's context window is refused at
// admission and counted, not served, and not retried.
func TestContextWindowRefused(t *testing.T) {
	cfg := defaultFleet(1)
	cfg.Model, cfg.TP, cfg.GPU = "llama-3-70b", 8, "H200"
	eng, f := testFleet(t, cfg)
	reqs := []workloads.Request{
		{ID: 1, InputTokens: 191000, OutputTokens: 10},
		{ID: 2, InputTokens: 1000, OutputTokens: 10},
	}
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	eng.Run(sim.Forever)
	require.EqualValues(t, 1, f.Rec.Completed)
	require.EqualValues(t, 1, f.Rec.Failed)
	require.EqualValues(t, 1, f.Rec.FailedBy[engine.FailContext])
}

// The step tally replays a simulated offline run's steps exactly: its
// makespan under the run's own profile is the simulated one.
func TestStepTallyReplaysRun(t *testing.T) {
	for _, batching := range []string{engine.BatchChunked, engine.BatchContinuous, engine.BatchStatic} {
		cfg := defaultFleet(1)
		cfg.Replica.Batching = batching
		cfg.Replica.MaxSeqs = 64
		eng, f := testFleet(t, cfg)
		var tally hw.StepTally
		n := 0
		f.Replicas[0].RecordSteps(func(r hw.StepRecord) { tally.Add(r, 1); n++ })
		require.NoError(t, f.Start(&sliceSource{reqs: shareGPTOffline(500, 3)}))
		eng.Run(sim.Forever)
		cat := hw.NewCatalog()
		m, err := hw.NewStepModel(cat.GPUs["H100"], cat.LLMs["llama-3-8b"], 1, hw.BF16, hw.BF16, hw.DefaultPerfProfile())
		require.NoError(t, err)
		got := m.Seconds(&tally)
		// Every request is sent at 0 and reaches the engine after the front
		// end: the engine starts then.
		require.InEpsilon(t, f.Rec.LastFinish.Seconds()-m.FrontEndS, got, 1e-6, batching)
		t.Logf("%s: %d records, %d distinct token counts, makespan %.3f s", batching, n, tally.Distinct(), got)
	}
}

// KV utilisation counts the blocks a closed-form decode run takes as it
// runs, not only when it ends: one request of 16 + 1,600 tokens grows from
// 1 to 101 blocks of 16, so it holds about 51 on average.
func TestKVUtilizationCountsDecodeRuns(t *testing.T) {
	cfg := defaultFleet(1)
	eng, f := testFleet(t, cfg)
	require.NoError(t, f.Start(&sliceSource{reqs: []workloads.Request{{ID: 1, InputTokens: 16, OutputTokens: 1600}}}))
	eng.Run(sim.Forever)
	r := f.Replicas[0]
	r.Finish(f.Rec.LastFinish)
	mean := r.Stats.KVUsedBlockNs / float64(f.Rec.LastFinish)
	require.InEpsilon(t, 51, mean, 0.05)
}

// A replica that does not divide its domain (64 GPUs of a 72-GPU rack)
// takes one domain each, leaving the rest spare; one wider than a domain
// takes whole domains; failures hit every replica on their GPUs.
func TestPlacementWideReplicas(t *testing.T) {
	cfg := FleetConfig{TP: 1, DP: 64, EP: 64, Replicas: 2, Placement: "pack"}
	p := placement(cfg, 72)
	require.Equal(t, 2, p.Domains)
	require.Equal(t, 128, p.GPUs)
	f, n := p.ReplicaGPUs(1)
	require.Equal(t, 72, f)
	require.Equal(t, 64, n)
	cfg = FleetConfig{TP: 2, DP: 8, EP: 16, Replicas: 3, Placement: "pack"}
	p = placement(cfg, 8)
	require.Equal(t, 6, p.Domains)
	f, n = p.ReplicaGPUs(2)
	require.Equal(t, 32, f)
	require.Equal(t, 16, n)
	// Dense TP packs as before.
	p = placement(FleetConfig{TP: 4, Replicas: 3, Placement: "pack"}, 8)
	require.Equal(t, 2, p.Domains)
	f, _ = p.ReplicaGPUs(2)
	require.Equal(t, 8, f)
}

// The memory plan follows the layout: experts spread over tp·dp GPUs,
// dense weights over tp; each DP rank its own KV; speculation reserves k
// KV tokens per running sequence.
func TestPlanMemoryLayout(t *testing.T) {
	cat := hw.NewCatalog()
	gpu, llm := cat.GPUs["H200"], cat.LLMs["deepseek-v3"]
	rc := engine.DefaultReplicaConfig()
	rc.Weights, rc.KVDType = "fp8", "fp8"
	pp := hw.DefaultPerfProfile()
	var ps problemsT
	p8 := engine.PlanMemoryLayout(gpu, llm, hw.Layout{TP: 1, DP: 8, EP: 8}, rc, pp, "cluster.model", &ps.Problems)
	require.Empty(t, ps.List)
	require.InEpsilon(t, llm.DenseParams()+llm.RoutedParams()/8, p8.WeightBytes, 1e-12)
	perGPU := int64(p8.KVBytes / p8.KVBytesPerBlock)
	require.Equal(t, 8*perGPU, p8.KVBlocks)
	require.Equal(t, float64(llm.Layers*(512+64)*16), p8.KVBytesPerBlock, "MLA, FP8, 16-token blocks")
	// TP=8: one rank, the same weights per GPU (all dense over 8 too).
	t8 := engine.PlanMemoryLayout(gpu, llm, hw.Layout{TP: 8}, rc, pp, "cluster.model", &ps.Problems)
	require.Less(t, t8.WeightBytes, p8.WeightBytes)
	require.Less(t, t8.KVBlocks, p8.KVBlocks, "MLA KV is replicated over TP: DP holds 8x the sequences")
	// Speculation: k more tokens per running sequence.
	rc.Spec = hw.SpecConfig{Enabled: true, Tokens: 4, Acceptance: 0.7}
	sp := engine.PlanMemoryLayout(gpu, llm, hw.Layout{TP: 1, DP: 8, EP: 8}, rc, pp, "cluster.model", &ps.Problems)
	require.InEpsilon(t, float64(rc.MaxSeqs)/8*4*p8.KVBytesPerBlock/16, p8.KVBytes-sp.KVBytes, 1e-9)
	// Too few GPUs: refused under the key.
	engine.PlanMemoryLayout(gpu, llm, hw.Layout{TP: 1, DP: 2, EP: 2}, rc, pp, "cluster.model", &ps.Problems)
	require.Len(t, ps.List, 1)
	require.Equal(t, "cluster.model", ps.List[0].Key)
}

// Calibration replays an MoE run's steps through StepTally: the tally's
// total equals the simulated makespan, as for a dense model.
func TestStepTallyReplaysMoERun(t *testing.T) {
	cfg := defaultFleet(1)
	cfg.Model, cfg.TP = "qwen3-30b-a3b", 2
	cfg.Replica.MaxSeqs = 64
	eng, f := testFleet(t, cfg)
	var tally hw.StepTally
	f.Replicas[0].RecordSteps(func(r hw.StepRecord) { tally.Add(r, 1) })
	require.NoError(t, f.Start(&sliceSource{reqs: shareGPTOffline(300, 5)}))
	eng.Run(sim.Forever)
	cat := hw.NewCatalog()
	m, err := hw.NewDeployedStepModel(cat.GPUs["H100"], cat.LLMs["qwen3-30b-a3b"], hw.Deployment{Layout: hw.Layout{TP: 2}}, hw.BF16, hw.BF16, hw.DefaultPerfProfile())
	require.NoError(t, err)
	require.Greater(t, tally.Steps, 100.0)
	require.InEpsilon(t, f.Rec.LastFinish.Seconds()-m.FrontEndS, m.Seconds(&tally), 1e-6)
}

// Layouts no engine can run are refused by validation, under their keys:
// TP=24 on GB200 (72-GPU domain), FP4 compute before Blackwell (FP4
// weights there run as W4A16).
func TestTPValidation(t *testing.T) {
	cat := hw.NewCatalog()
	var ps problemsT
	cfg := FleetConfig{GPU: "GB200", Model: "llama-3-70b", TP: 24, Replicas: 1, Replica: engine.DefaultReplicaConfig()}
	cfg.Validate(cat, "cluster", &ps.Problems)
	require.NotEmpty(t, ps.List)
	require.Equal(t, "cluster.tp", ps.List[0].Key)
	// FP4 weights run as W4A16 on Hopper; FP4 compute needs Blackwell.
	ps = problemsT{}
	cfg = FleetConfig{GPU: "H100", Model: "llama-3-8b", TP: 1, Replicas: 1, Replica: engine.DefaultReplicaConfig()}
	cfg.Replica.Weights = "fp4"
	cfg.Validate(cat, "cluster", &ps.Problems)
	require.Empty(t, ps.List)
	cfg.Replica.Compute = "fp4"
	cfg.Validate(cat, "cluster", &ps.Problems)
	require.Len(t, ps.List, 1)
	require.Equal(t, "cluster.replica.compute", ps.List[0].Key)
	// Compute narrower than the weights is refused.
	ps = problemsT{}
	cfg.Replica.Weights, cfg.Replica.Compute = "bf16", "fp8"
	cfg.Validate(cat, "cluster", &ps.Problems)
	require.Len(t, ps.List, 1)
	require.Equal(t, "cluster.replica.compute", ps.List[0].Key)
	cfg.Replica.Weights, cfg.Replica.Compute = "fp4", ""
	cfg.GPU = "B200"
	ps = problemsT{}
	cfg.Validate(cat, "cluster", &ps.Problems)
	require.Empty(t, ps.List)
}

// Pipeline stages divide each GPU's KV per block by pp, so a replica holds
// more than twice the blocks.
func TestPlanMemoryPipeline(t *testing.T) {
	cat := hw.NewCatalog()
	var ps problemsT
	rc := engine.DefaultReplicaConfig()
	p1 := engine.PlanMemoryLayout(cat.GPUs["H100"], cat.LLMs["llama-3-70b"], hw.Layout{TP: 4}, rc, hw.DefaultPerfProfile(), "m", &ps.Problems)
	p2 := engine.PlanMemoryLayout(cat.GPUs["H100"], cat.LLMs["llama-3-70b"], hw.Layout{TP: 4, PP: 2}, rc, hw.DefaultPerfProfile(), "m", &ps.Problems)
	require.Empty(t, ps.List)
	require.InEpsilon(t, p1.KVBytesPerBlock/2, p2.KVBytesPerBlock, 1e-12)
	require.Greater(t, p2.KVBlocks, 2*p1.KVBlocks)
}

// Every [cluster.replica] key is either one a group may set for itself or
// one that is the fleet's: a key in neither would be dropped silently from
// a [cluster.groups.replica] table.
func TestGroupReplicaKeysCoverReplicaConfig(t *testing.T) {
	known := map[string]bool{}
	for _, k := range append(append([]string{}, GroupReplicaKeys...), fleetReplicaKeys...) {
		known[strings.SplitN(k, ".", 2)[0]] = true
	}
	rt := reflect.TypeOf(engine.ReplicaConfig{})
	for i := range rt.NumField() {
		tag := rt.Field(i).Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		require.True(t, known[tag], "[cluster.replica] key %q is in neither GroupReplicaKeys nor fleetReplicaKeys", tag)
	}
}
