package calibrate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"gonum.org/v1/gonum/optimize"
)

// Options are the engine settings a row does not state, and the fit's.
type Options struct {
	// MaxSeqs is the batch cap of a row that states none. Default 2048
	// (assumption: TensorRT-LLM's default max_batch_size; vLLM's
	// max_num_seqs is 256, so set it for vLLM results).
	MaxSeqs int
	// MaxBatchedTokens is the step token budget. Default 8192 (assumption:
	// TensorRT-LLM's default max_num_tokens and vLLM's chunked-prefill
	// default for online serving).
	MaxBatchedTokens int
	// GPUMemoryUtilization is the fraction of HBM the engine takes. Default
	// 0.9 (vLLM's gpu_memory_utilization; TensorRT-LLM gives 90% of the
	// memory free after weights to KV, about the same).
	GPUMemoryUtilization float64
	// KVAdmission is the replica's KV admission policy for inflight rows.
	// Default: by the row's backend, "prompt" for vLLM and SGLang (they
	// admit on the prompt's blocks and preempt when the cache fills) and
	// "full" for TensorRT-LLM or a row that names no backend
	// (TensorRT-LLM's default GUARANTEED_NO_EVICT scheduler policy, which
	// the public throughput rows ran).
	KVAdmission string
	// Rounds is how many times a closed loop's clients each send a
	// measured request after the warm-up (the measured requests are
	// Rounds × the concurrency). Default 6 (assumption: the steady state's
	// mean within about a percent; the public rows ran 20).
	Rounds int
	// Iterations is how many times a fit re-simulates the closed-loop rows
	// under the profile fitted so far and fits again on their new step
	// tallies (see Fit). Default 3.
	Iterations int
	// SkipUnrunnable drops the rows the simulator cannot run (an unknown
	// model, an impossible layout, a model that does not fit) instead of
	// failing; Prepare then returns them in its Skipped.
	SkipUnrunnable bool
	// Workers is how many rows are simulated at once. Default GOMAXPROCS.
	Workers int
	// Robust fits a soft-L1 loss on the log errors instead of their squares
	// (robustScale), so that outlying rows weigh linearly.
	Robust bool
	// Lockstep starts a closed loop's clients all at once; by default their
	// first requests are spread over one request's estimated time (see
	// Case.cycle).
	Lockstep bool
	// ClientJitterS is a closed loop's clients' mean pause between a
	// response and the next request (exponential), seconds; 0: none, the
	// clients stay in lockstep.
	ClientJitterS float64
	// TwoStage fits the step constants on TPOT and throughput alone, then
	// TTFTParams on the TTFT of the rows at low load alone (each iteration):
	// the decode steps, which set ITL and end-to-end latency, are not traded
	// against TTFT, and the front end is set where TTFT is the first-token
	// path with little queueing, not where closed loops of many clients
	// queue in ways the step model may not capture (those rows are
	// predicted, and reported).
	TwoStage bool
	// TTFTMaxConcurrency is the most clients a closed-loop row may have to
	// set the front end in a two-stage fit. Default 8.
	TTFTMaxConcurrency int
	// Metrics, when set, are the measured metrics the fit weighs
	// (output_tokens_per_s, ttft_ms, tpot_ms); nil: all.
	Metrics []string
	// Params are the profile keys to fit; nil chooses those the rows
	// constrain (FitParams).
	Params []string
	// MaxEvals bounds the objective evaluations of one fit. Default 10000.
	MaxEvals int
}

func (o *Options) defaults() {
	if o.MaxSeqs == 0 {
		o.MaxSeqs = 2048
	}
	if o.MaxBatchedTokens == 0 {
		o.MaxBatchedTokens = 8192
	}
	if o.GPUMemoryUtilization == 0 {
		o.GPUMemoryUtilization = 0.9
	}
	if o.Rounds == 0 {
		o.Rounds = 6
	}
	if o.Iterations == 0 {
		o.Iterations = 3
	}
	if o.TTFTMaxConcurrency == 0 {
		o.TTFTMaxConcurrency = 8
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MaxEvals == 0 {
		o.MaxEvals = 10000
	}
}

// Case is a row made ready to predict. An offline row (all requests at
// t = 0) is simulated once with the real replica code; its schedule does not
// depend on step durations (nothing arrives while it runs), so its makespan
// and mean TTFT under any profile are weighted sums of the steps it ran
// (hw.StepTally): the fit absorbs the scheduler's, batching's and KV
// admission's effects at the cost of a sum. A row with arrivals over time
// (a vLLM run at a finite request rate), or that measures TPOT, is
// simulated again for every prediction.
type Case struct {
	Row      Row
	gpu      hw.GPU
	llm      hw.LLM
	fleet    fleet.FleetConfig
	cat      *hw.Catalog
	makespan hw.StepTally
	ttft     hw.StepTally
	next     hw.StepTally // the steps after first tokens (the output lag)
	outputs  float64      // output tokens of the run
	firsts   float64      // requests that got a first token
	full     bool         // predict by simulating again
	closed   *closedTally // a closed loop's step tallies (closed.go); nil otherwise
	rounds   int          // a closed loop's measured rounds (Options.Rounds)
	jitterS  float64      // a closed loop's mean client pause (Options.ClientJitterS)
	lockstep bool         // a closed loop's clients all start at once (Options.Lockstep)
	tallyPP  hw.PerfProfile
}

// Prediction is what the simulator predicts for a row.
type Prediction struct {
	OutputTokensPerS float64
	TTFTMs           float64
	TPOTMs           float64
	ITLMs, E2EMs     float64 // where the row measured them
}

// Prepare checks every row against the catalog and runs it once; a row the
// simulator cannot run (unknown model or GPU, impossible layout, does not
// fit in memory, a request longer than the KV) is an error naming its
// place. All problems are reported at once; with opt.SkipUnrunnable such
// rows are left out instead and listed in skipped. Rows are simulated on
// opt.Workers goroutines; the result is in row order whatever their number.
func Prepare(rows []Row, cat *hw.Catalog, base hw.PerfProfile, opt Options) (cases []*Case, skipped []string, err error) {
	opt.defaults()
	out := make([]*Case, len(rows))
	errs := make([]error, len(rows))
	parallel(len(rows), opt.Workers, func(i int) { out[i], errs[i] = prepare(rows[i], cat, base, opt) })
	var bad []string
	for i, c := range out {
		if errs[i] != nil {
			bad = append(bad, errs[i].Error())
			continue
		}
		cases = append(cases, c)
	}
	if len(bad) > 0 && !opt.SkipUnrunnable {
		return nil, nil, &InputError{Lines: bad}
	}
	return cases, bad, nil
}

// parallel runs f(0..n-1) on up to workers goroutines.
func parallel(n, workers int, f func(i int)) {
	if workers <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

func prepare(r Row, cat *hw.Catalog, base hw.PerfProfile, opt Options) (*Case, error) {
	gpu, ok := cat.GPUs[r.GPU]
	if !ok {
		return nil, fmt.Errorf("%s: gpu: unknown GPU %q (known: %s)", r.Where(), r.GPU, strings.Join(cat.GPUNames(), ", "))
	}
	llm, ok := cat.LLMs[r.Model]
	if !ok {
		return nil, fmt.Errorf("%s: model: unknown model %q (known: %s; add others with --models)", r.Where(), r.Model, strings.Join(cat.LLMNames(), ", "))
	}
	if err := hw.CheckTP(llm, r.TP); err != nil {
		return nil, fmt.Errorf("%s: tp: %v", r.Where(), err)
	}
	if err := hw.CheckPrecision(gpu, hw.Precision(r.Weights), hw.Precision(r.KVDType)); err != nil {
		return nil, fmt.Errorf("%s: kv_dtype: %v", r.Where(), err)
	}
	if r.Compute != "" {
		if err := hw.CheckCompute(gpu, hw.Precision(r.Weights), hw.Precision(r.Compute)); err != nil {
			return nil, fmt.Errorf("%s: compute: %v", r.Where(), err)
		}
	}
	if r.TP > gpu.DomainGPUs {
		return nil, fmt.Errorf("%s: tp: TP=%d exceeds %s's %d-GPU NVLink domain", r.Where(), r.TP, gpu.Name, gpu.DomainGPUs)
	}
	if llm.ContextTokens > 0 && r.ISL+r.OSL > llm.ContextTokens {
		return nil, fmt.Errorf("%s: isl: %d + %d tokens exceed %s's %d-token context window", r.Where(), r.ISL, r.OSL, llm.Name, llm.ContextTokens)
	}
	rc := engine.DefaultReplicaConfig()
	rc.Batching = engine.BatchChunked
	if r.Batching == "static" {
		rc.Batching = engine.BatchStatic
	}
	rc.MaxSeqs = opt.MaxSeqs
	if r.MaxSeqs > 0 {
		rc.MaxSeqs = r.MaxSeqs
	}
	rc.MaxBatchedTokens = max(opt.MaxBatchedTokens, 1)
	if r.MaxBatchedTokens > 0 {
		rc.MaxBatchedTokens = r.MaxBatchedTokens
	}
	if r.KVBlocks > 0 {
		rc.KVBlocks = int64(r.KVBlocks)
	}
	rc.GPUMemoryUtilization = opt.GPUMemoryUtilization
	rc.PrefixCaching = false // benchmark prompts are random tokens
	rc.Weights, rc.KVDType, rc.Compute = r.Weights, r.KVDType, r.Compute
	rc.KVAdmission = opt.KVAdmission
	if rc.KVAdmission == "" {
		rc.KVAdmission = engine.KVAdmitFull
		if r.Backend == "vllm" || r.Backend == "sglang" {
			rc.KVAdmission = engine.KVAdmitPrompt
		}
	}
	rc.Perf = hw.PerfSpec{Profile: "calibrate"}
	fc := fleet.FleetConfig{GPU: r.GPU, Model: r.Model, TP: r.TP, DP: r.DP, PP: r.PP, Replicas: 1, Replica: rc}
	if r.EP > 1 {
		// MoE TP × EP over the worker's GPUs: fleetsim's expert parallelism
		// spreads whole experts over all of them (a mixed MoE TP within EP
		// reads the same bytes per GPU).
		fc.EP = fc.GPUsPerReplica() / max(fc.PP, 1)
	}
	var ps config.Problems
	fc.Validate(withProfile(cat, base), "", &ps)
	if len(ps.List) > 0 {
		p := ps.List[0]
		return nil, fmt.Errorf("%s: %s: %s", r.Where(), p.Key, p.Msg)
	}
	if err := feasible(r, gpu, llm, fc); err != nil {
		return nil, fmt.Errorf("%s: %v", r.Where(), err)
	}
	c := &Case{Row: r, gpu: gpu, llm: llm, fleet: fc, cat: withProfile(cat, base),
		full: r.RequestRate > 0 || r.MeanTPOTMs > 0 || r.MeanITLMs > 0 || r.MeanE2EMs > 0 || r.Closed() || len(r.Lens) > 0}
	if r.Closed() && r.RequestRate == 0 && len(r.Lens) == 0 && r.MeanITLMs == 0 && r.MeanE2EMs == 0 {
		c.full, c.rounds, c.jitterS, c.lockstep = false, opt.Rounds, opt.ClientJitterS, opt.Lockstep
		if err := c.retally(base, opt); err != nil {
			return nil, fmt.Errorf("%s: %v", r.Where(), err)
		}
		c.tallyPP = base
		return c, nil
	}
	var recs []hw.StepRecord
	res, err := c.simulate(base, func(rec hw.StepRecord) { recs = append(recs, rec) })
	if err != nil {
		return nil, fmt.Errorf("%s: %v", r.Where(), err)
	}
	c.outputs = float64(res.outputs)
	c.firsts = float64(res.completed)
	var after float64 // first tokens at or after the record
	for i := len(recs) - 1; i >= 0; i-- {
		after += float64(recs[i].FirstTokens)
		c.ttft.Add(recs[i], after)
		c.makespan.Add(recs[i], 1)
		// The output lag of a record's first tokens is the next step.
		if n := recs[i].FirstTokens; n > 0 && i+1 < len(recs) && recs[i+1].Start == recs[i].End {
			c.next.Add(recs[i+1], float64(n)/float64(max(recs[i+1].Steps, 1)))
		}
	}
	return c, nil
}

// maxGEMMEfficiency is the GEMM efficiency bound of ProfileParams.
const maxGEMMEfficiency = 0.9

// feasible refuses a closed-loop row whose measurements no engine could
// produce on its hardware, by the roofline: its TPOT shorter than one read
// of a GPU's weights at full HBM bandwidth, or the request rate its latencies
// imply (C / (TTFT + (OSL−1)·TPOT)) needing more model FLOP/s than the
// replica's GPUs have at their dense peak. Such rows exist in public data (a
// run whose prompts hit a prefix cache, or whose stated lengths or clients
// were not what ran); fitting them would bend every constant.
func feasible(r Row, gpu hw.GPU, llm hw.LLM, fc fleet.FleetConfig) error {
	if !r.Closed() || r.TTFTMs <= 0 || r.MeanTPOTMs <= 0 || r.OSL < 2 {
		return nil
	}
	gpus := float64(fc.GPUsPerReplica())
	w := hw.Precision(r.Weights)
	comp := hw.Precision(r.Compute)
	if comp == "" {
		comp = hw.DefaultCompute(gpu, w)
	}
	// The least a decode step reads per GPU: the dense weights and the
	// experts the batch touches at least (one token's top-k: every
	// sequence might pick the same), spread evenly.
	weights := hw.WeightBytesPerGPU(llm, fc.Layout(), w)
	if llm.IsMoE() {
		weights = (llm.DenseParams() + float64(llm.MoELayers())*float64(llm.ExpertsPerToken)*3*float64(llm.Hidden)*float64(llm.ExpertIntermediate)) * w.Bytes() / gpus
	}
	if floor := weights / gpu.HBMBytesPerS * 1000; r.MeanTPOTMs < floor {
		return fmt.Errorf("silicon_tpot_ms: %.3g ms is less than one read of a GPU's weights at full bandwidth (%.3g ms): no engine runs this", r.MeanTPOTMs, floor)
	}
	rate := float64(r.Concurrency) / ((r.TTFTMs + float64(r.OSL-1)*r.MeanTPOTMs) / 1000)
	need := rate * float64(r.ISL+r.OSL) * 2 * llm.ActiveParamsDerived() / gpus
	// The best GEMMs reach about 90% of the dense peak (the bound of every
	// gemm_efficiency_*): more in GEMMs alone is not a run of these lengths.
	if peak := max(comp.PeakFLOPS(gpu), gpu.BF16FLOPS); need > maxGEMMEfficiency*peak {
		return fmt.Errorf("silicon_ttft_ms: the latencies imply %.3g requests/s, %.0f%% of the GPUs' dense peak FLOP/s in GEMMs alone (at most %.0f%% is reached): no engine runs this as stated (a prefix cache hit, other lengths?)", rate, 100*need/peak, 100*maxGEMMEfficiency)
	}
	return nil
}

// withProfile is cat with pp registered under the name "calibrate".
func withProfile(cat *hw.Catalog, pp hw.PerfProfile) *hw.Catalog {
	out := &hw.Catalog{GPUs: cat.GPUs, LLMs: cat.LLMs, Profiles: map[string]hw.PerfProfile{}}
	for k, v := range cat.Profiles {
		out.Profiles[k] = v
	}
	out.Profiles["calibrate"] = pp
	return out
}

type simResult struct {
	outputs, completed int64
	makespanS          float64
	ttftMs, tpotMs     float64
	itlMs, e2eMs       float64
}

// simulate runs the row once on one replica with profile pp.
func (c *Case) simulate(pp hw.PerfProfile, rec func(hw.StepRecord)) (simResult, error) {
	r := c.Row
	eng := sim.NewEngine()
	cat := withProfile(c.cat, pp)
	f, err := fleet.NewFleet(eng, cat, c.fleet, firstReplica{}, fleet.NewRecorder(fleet.SLO{}), "row")
	if err != nil {
		return simResult{}, err
	}
	if rec != nil {
		f.Replicas[0].RecordSteps(rec)
	}
	n := r.NumRequests
	if len(r.Lens) > 0 {
		n = len(r.Lens)
	}
	src := &rowSource{n: n, isl: int32(r.ISL), osl: int32(r.OSL), lens: r.Lens, rate: r.RequestRate,
		rng: rand.New(rand.NewPCG(1, 2))}
	if r.Concurrency > 0 {
		f.SetClients(fleet.Clients{Concurrency: r.Concurrency})
	}
	if err := f.Start(src); err != nil {
		return simResult{}, err
	}
	eng.Run(sim.Forever)
	if err := f.Err(); err != nil {
		return simResult{}, err
	}
	rr := f.Rec
	if rr.Completed != int64(n) {
		reasons := make([]string, 0, len(rr.FailedBy))
		for k, v := range rr.FailedBy {
			reasons = append(reasons, fmt.Sprintf("%d %s", v, k))
		}
		sort.Strings(reasons)
		return simResult{}, fmt.Errorf("num_requests: only %d of %d requests completed (%s): the configuration does not fit",
			rr.Completed, n, strings.Join(reasons, ", "))
	}
	span := (rr.LastFinish - src.first).Seconds()
	f.Finish(eng.Now())
	return simResult{outputs: rr.OutputTokens, completed: rr.Completed, makespanS: span,
		ttftMs: rr.TTFT.Mean(), tpotMs: rr.TPOT.Mean(), itlMs: rr.ITL.Mean(), e2eMs: rr.E2E.Mean()}, nil
}

// Predict is what the simulator predicts for the case's row under pp (a
// closed loop is simulated again: its exact prediction).
func (c *Case) Predict(pp hw.PerfProfile) (Prediction, error) {
	if c.closed != nil {
		res, _, _, err := c.simulateClosed(pp, c.rounds, false)
		if err != nil {
			return Prediction{}, err
		}
		return Prediction{TTFTMs: res.ttftMs, TPOTMs: res.tpotMs}, nil
	}
	return c.predict(pp)
}

// fast is what a fit evaluates: Predict, but a closed loop's estimate from
// its tallies (closed.go).
func (c *Case) fast(pp hw.PerfProfile) (Prediction, error) {
	if c.closed != nil {
		return c.estimate(pp)
	}
	return c.predict(pp)
}

// predict is Predict for a row that is not a closed loop.
func (c *Case) predict(pp hw.PerfProfile) (Prediction, error) {
	if c.full {
		res, err := c.simulate(pp, nil)
		if err != nil {
			return Prediction{}, err
		}
		return Prediction{OutputTokensPerS: float64(res.outputs) / res.makespanS, TTFTMs: res.ttftMs, TPOTMs: res.tpotMs,
			ITLMs: res.itlMs, E2EMs: res.e2eMs}, nil
	}
	// Deployed with TP only: for a dense model exactly NewStepModel; an MoE
	// row gets the MoE step (touched experts, active-param FLOPs).
	m, err := hw.NewDeployedStepModel(c.gpu, c.llm, hw.Deployment{Layout: hw.Layout{TP: c.Row.TP}}, hw.Precision(c.Row.Weights), hw.Precision(c.Row.KVDType), pp)
	if err != nil {
		return Prediction{}, err
	}
	// Every request reaches the engine after the front end (all at t = 0:
	// the engine starts then), and each first token reaches the client the
	// output lag and the stream later.
	front := m.FrontEndS + m.FrontEndSPerToken*float64(c.Row.ISL)
	span := m.Seconds(&c.makespan) + front
	ttft := m.Seconds(&c.ttft)/c.firsts + front + m.StreamS + m.FirstTokenLagSteps*m.Seconds(&c.next)/c.firsts
	return Prediction{OutputTokensPerS: c.outputs / span, TTFTMs: ttft * 1000}, nil
}

// firstReplica routes everything to the one replica.
type firstReplica struct{}

func (firstReplica) Route(_ *workloads.Request, rs []engine.ReplicaState) (int, bool) {
	return 0, len(rs) > 0
}

// rowSource emits a row's requests: all at t = 0, or Poisson at rate.
type rowSource struct {
	n, i     int
	isl, osl int32
	lens     [][2]int32 // per request, when given
	rate     float64
	t        float64
	first    sim.Time
	rng      *rand.Rand
}

func (s *rowSource) Next() (workloads.Request, error) {
	if s.i >= s.n {
		return workloads.Request{}, io.EOF
	}
	s.i++
	if s.rate > 0 {
		s.t += s.rng.ExpFloat64() / s.rate
	}
	at := sim.FromSeconds(s.t)
	if s.i == 1 {
		s.first = at
	}
	in, out := s.isl, s.osl
	if s.i <= len(s.lens) {
		in, out = s.lens[s.i-1][0], s.lens[s.i-1][1]
	}
	return workloads.Request{ID: uint64(s.i), Arrival: at, InputTokens: in, OutputTokens: out}, nil
}

// Metrics are the measured metrics a row may have, in Prediction's order.
var Metrics = []string{"output_tokens_per_s", "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"}

// Errors of one prediction against its row: relative errors pred/meas − 1
// for each measured metric.
type Errors struct {
	Pred                             Prediction
	Throughput, TTFT, TPOT, ITL, E2E float64 // NaN where not measured
}

// Compare predicts c under pp and compares with what was measured.
func Compare(c *Case, pp hw.PerfProfile) (Errors, error) {
	p, err := c.Predict(pp)
	if err != nil {
		return Errors{}, err
	}
	e := Errors{Pred: p, Throughput: math.NaN(), TTFT: math.NaN(), TPOT: math.NaN(), ITL: math.NaN(), E2E: math.NaN()}
	r := c.Row
	if r.OutputTokensPerS > 0 {
		e.Throughput = p.OutputTokensPerS/r.OutputTokensPerS - 1
	}
	if r.TTFTMs > 0 {
		e.TTFT = p.TTFTMs/r.TTFTMs - 1
	}
	if r.MeanTPOTMs > 0 {
		e.TPOT = p.TPOTMs/r.MeanTPOTMs - 1
	}
	if r.MeanITLMs > 0 {
		e.ITL = p.ITLMs/r.MeanITLMs - 1
	}
	if r.MeanE2EMs > 0 {
		e.E2E = p.E2EMs/r.MeanE2EMs - 1
	}
	return e, nil
}

// Worst is the largest absolute error of e's measured metrics.
func (e Errors) Worst() float64 {
	w := 0.0
	for _, v := range []float64{e.Throughput, e.TTFT, e.TPOT, e.ITL, e.E2E} {
		if !math.IsNaN(v) {
			w = max(w, math.Abs(v))
		}
	}
	return w
}

// FitParams are the profile keys the cases constrain: the GEMM efficiency
// of each compute precision present, the shape constants, and the TP
// communication constants when some row has TP > 1 (the all-reduce's
// bandwidth and latency; tp_overlap is left out: it trades one for one
// with nvlink_efficiency, and engines that do not overlap are the rule). Closed loops (latency
// under load) add the per-layer kernel floor, the GEMM phase's overlap
// exponent and the front end; mixture-of-experts rows the experts' half
// point. (stream_s is left at its start value: in TTFT it adds like
// frontend_s, which the fit sets.)
func FitParams(cases []*Case) []string {
	prec := map[string]bool{}
	tp, closed, moe := false, false, false
	for _, c := range cases {
		comp := c.Row.Compute
		if comp == "" {
			comp = string(hw.DefaultCompute(c.gpu, hw.Precision(c.Row.Weights)))
		}
		prec[comp] = true
		tp = tp || c.Row.TP > 1
		closed = closed || c.closed != nil
		moe = moe || c.llm.IsMoE()
	}
	var out []string
	for _, p := range []string{"bf16", "fp8", "fp4"} {
		if prec[p] {
			out = append(out, "gemm_efficiency_"+p)
		}
	}
	out = append(out, "gemm_half_tokens", "weight_bandwidth_efficiency", "attention_efficiency",
		"attention_half_context", "kv_bandwidth_efficiency", "step_overhead_s", "seq_overhead_s")
	if tp {
		out = append(out, "nvlink_efficiency", "allreduce_latency_s")
	}
	if closed {
		out = append(out, "layer_overhead_s", "overlap_exponent", "frontend_s", "first_token_lag_steps")
	}
	if moe {
		out = append(out, "moe_half_tokens", "moe_bandwidth_efficiency")
	}
	return out
}

// Result is a fitted profile and how well it fits.
type Result struct {
	Profile hw.PerfProfile
	Params  []string
	// Loss is the sum of squared log errors; Evals the objective calls.
	Loss  float64
	Evals int
}

// Fit fits the constants named by opt.Params (or FitParams) of start to the
// cases by least squares on log throughput (and log TTFT/TPOT where
// measured), within each constant's physical bounds: each is mapped to an
// unbounded variable through a logistic (on a log scale for the constants
// that span decades), and Nelder–Mead minimises, restarted from its best
// point until a restart no longer improves the loss by 1e-6.
//
// Closed-loop rows are fitted on their step tallies, which hold for
// profiles near the one they were simulated under: Fit re-simulates them
// under start first (when they were built under another profile), then
// after each fit under the profile it found, opt.Iterations fits in all.
func Fit(cases []*Case, start hw.PerfProfile, opt Options) (Result, error) {
	opt.defaults()
	var closed []*Case
	for _, c := range cases {
		if c.closed != nil {
			closed = append(closed, c)
		}
	}
	pp, evals := start, 0
	var res Result
	for it := 0; it < opt.Iterations; it++ {
		if err := retallyAll(closed, pp, opt); err != nil {
			return Result{}, err
		}
		r, err := fitStages(cases, pp, opt)
		if err != nil {
			return Result{}, err
		}
		evals += r.Evals
		res, pp = r, r.Profile
		if len(closed) == 0 {
			break
		}
	}
	res.Evals = evals
	return res, nil
}

// TTFTParams are the constants a two-stage fit (Options.TwoStage) sets on
// TTFT alone: the first-token path's way in.
var TTFTParams = []string{"frontend_s", "frontend_s_per_token", "first_token_lag_steps"}

// fitStages is fitOnce, or with opt.TwoStage, fitOnce of the step
// constants on TPOT and throughput, then of TTFTParams on TTFT.
func fitStages(cases []*Case, pp hw.PerfProfile, opt Options) (Result, error) {
	if !opt.TwoStage {
		return fitOnce(cases, pp, opt)
	}
	keys := opt.Params
	if keys == nil {
		keys = FitParams(cases)
	}
	var steps, path []string
	for _, k := range keys {
		if slices.Contains(TTFTParams, k) {
			path = append(path, k)
		} else {
			steps = append(steps, k)
		}
	}
	o1 := opt
	o1.Params, o1.Metrics = steps, []string{"output_tokens_per_s", "tpot_ms", "itl_ms", "e2e_ms"}
	r1, err := fitOnce(cases, pp, o1)
	if err != nil || len(path) == 0 {
		return r1, err
	}
	o2 := opt
	o2.Params, o2.Metrics = path, []string{"ttft_ms"}
	var low []*Case
	for _, c := range cases {
		if !c.Row.Closed() || c.Row.Concurrency <= opt.TTFTMaxConcurrency {
			low = append(low, c)
		}
	}
	if len(low) == 0 {
		low = cases
	}
	r2, err := fitOnce(low, r1.Profile, o2)
	if err != nil {
		return Result{}, err
	}
	r2.Params, r2.Evals = keys, r1.Evals+r2.Evals
	return r2, nil
}

// sameConstants says whether two profiles have the same constants (the
// step model does not read the rest).
func sameConstants(a, b hw.PerfProfile) bool {
	for _, p := range hw.ProfileParams {
		if p.Get(&a) != p.Get(&b) {
			return false
		}
	}
	return a.RuntimeReserveBytes == b.RuntimeReserveBytes
}

// retallyAll re-simulates the closed rows not yet tallied under pp.
func retallyAll(cases []*Case, pp hw.PerfProfile, opt Options) error {
	errs := make([]error, len(cases))
	parallel(len(cases), opt.Workers, func(i int) {
		if c := cases[i]; c.closed == nil || !sameConstants(c.tallyPP, pp) {
			if errs[i] = c.retally(pp, opt); errs[i] == nil {
				c.tallyPP = pp
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %v", cases[i].Row.Where(), err)
		}
	}
	return nil
}

// cmaes searches for f's minimum from x0 with CMA-ES (gonum's CmaEsChol,
// seeded: the same search every time) within maxEvals evaluations; it
// returns the best point found.
func cmaes(f func([]float64) float64, x0 []float64, maxEvals int) ([]float64, bool) {
	res, err := optimize.Minimize(optimize.Problem{Func: f}, x0,
		&optimize.Settings{FuncEvaluations: maxEvals, Converger: &optimize.FunctionConverge{Absolute: 1e-8, Relative: 1e-8, Iterations: 100}},
		&optimize.CmaEsChol{InitStepSize: 1.5, Src: rand.NewPCG(17, 29)})
	if res == nil || (err != nil && res.X == nil) {
		return nil, false
	}
	return res.X, true // (f counts its own evaluations)
}

// nelderMead minimises f from x0, restarted from its best point until a
// restart no longer improves by 1e-6 (at most 8 rounds and maxEvals
// evaluations, counted in *evals); it returns the best point and value.
func nelderMead(f func([]float64) float64, x0 []float64, maxEvals int, evals *int) ([]float64, float64, error) {
	x := append([]float64{}, x0...)
	best := f(x)
	budget := *evals + maxEvals
	for round := 0; round < 8 && *evals < budget; round++ {
		res, err := optimize.Minimize(optimize.Problem{Func: f}, x,
			&optimize.Settings{FuncEvaluations: budget - *evals, Converger: &optimize.FunctionConverge{Absolute: 1e-10, Relative: 1e-10, Iterations: 200}},
			&optimize.NelderMead{InitialVertices: nil, SimplexSize: 0.5})
		if err != nil && res == nil {
			return nil, 0, err
		}
		improved := best - res.F
		if res.F < best {
			best = res.F
			copy(x, res.X)
		}
		if improved < 1e-6 {
			break
		}
	}
	return x, best, nil
}

// fitOnce is one Nelder–Mead fit of the cases (closed loops on their
// current tallies).
func fitOnce(cases []*Case, start hw.PerfProfile, opt Options) (Result, error) {
	if len(cases) == 0 {
		return Result{}, errors.New("calibrate: no rows to fit")
	}
	keys := opt.Params
	if keys == nil {
		keys = FitParams(cases)
	}
	params := make([]hw.ProfileParam, len(keys))
	for i, k := range keys {
		p, ok := hw.LookupProfileParam(k)
		if !ok {
			return Result{}, fmt.Errorf("calibrate: unknown profile constant %q", k)
		}
		params[i] = p
	}
	evals := 0
	loss := func(x []float64) float64 {
		evals++
		pp := start
		for i, p := range params {
			p.Set(&pp, toBounded(p, x[i]))
		}
		return lossOf(cases, pp, opt.Robust, opt.Metrics)
	}
	// Nelder–Mead is local, and a constant that starts near a bound tends
	// to stay there: it runs from the start profile's values, and again
	// from the best point of a CMA-ES search (a global, seeded search over
	// the constants' whole ranges); the better result wins.
	from := make([]float64, len(params))
	for i, p := range params {
		from[i] = toFree(p, p.Get(&start))
	}
	x, best, err := nelderMead(loss, from, opt.MaxEvals, &evals)
	if err != nil {
		return Result{}, err
	}
	if g, ok := cmaes(loss, from, opt.MaxEvals); ok {
		if xs, f, err := nelderMead(loss, g, opt.MaxEvals, &evals); err == nil && f < best {
			x, best = xs, f
		}
	}
	pp := start
	for i, p := range params {
		p.Set(&pp, toBounded(p, x[i]))
	}
	return Result{Profile: pp, Params: keys, Loss: best, Evals: evals}, nil
}

// Loss is the sum over cases of squared log errors of every measured
// metric; a prediction that fails or is not positive costs 100.
func Loss(cases []*Case, pp hw.PerfProfile) float64 { return lossOf(cases, pp, false, nil) }

// robustScale is the log error at which the robust loss turns from squared
// to linear (0.3: about 35% off).
const robustScale = 0.3

func lossOf(cases []*Case, pp hw.PerfProfile, robust bool, metrics []string) float64 {
	// Each case's loss on its own goroutine's share, then summed in case
	// order (the same float sum whatever the number of workers).
	per := make([]float64, len(cases))
	workers := runtime.GOMAXPROCS(0)
	if len(cases) < 64 {
		workers = 1
	}
	chunk := (len(cases) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(cases))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				per[i] = caseLoss(cases[i], pp, robust, metrics)
			}
		}()
	}
	wg.Wait()
	var l float64
	for _, v := range per {
		l += v
	}
	return l
}

// caseLoss is one case's share of lossOf.
func caseLoss(c *Case, pp hw.PerfProfile, robust bool, metrics []string) float64 {
	use := func(m string) bool { return metrics == nil || slices.Contains(metrics, m) }
	p, err := c.fast(pp)
	if err != nil {
		return 100
	}
	var l float64
	r := c.Row
	for k, m := range [][2]float64{{p.OutputTokensPerS, r.OutputTokensPerS}, {p.TTFTMs, r.TTFTMs}, {p.TPOTMs, r.MeanTPOTMs},
		{p.ITLMs, r.MeanITLMs}, {p.E2EMs, r.MeanE2EMs}} {
		if m[1] <= 0 || !use(Metrics[k]) {
			continue
		}
		if !(m[0] > 0) || math.IsInf(m[0], 0) {
			l += 100
			continue
		}
		d := math.Log(m[0] / m[1])
		if robust {
			// soft-L1: d² near 0, 2·scale·|d| far out, so a few rows the
			// model cannot explain (a run that thrashed its KV cache, a
			// warm-up outlier) do not steer the fit.
			z := d / robustScale
			l += 2 * robustScale * robustScale * (math.Sqrt(1+z*z) - 1)
			continue
		}
		l += d * d
	}
	if r.Weight > 0 {
		l *= r.Weight
	}
	return l
}

func sigmoid(u float64) float64 { return 1 / (1 + math.Exp(-u)) }

// toBounded maps a free variable into p's bounds; toFree is its inverse
// (values at or past a bound are pulled just inside).
func toBounded(p hw.ProfileParam, u float64) float64 {
	if p.Log {
		lo, hi := math.Log(p.Lo), math.Log(p.Hi)
		return math.Exp(lo + (hi-lo)*sigmoid(u))
	}
	return p.Lo + (p.Hi-p.Lo)*sigmoid(u)
}

func toFree(p hw.ProfileParam, v float64) float64 {
	lo, hi := p.Lo, p.Hi
	if p.Log {
		lo, hi, v = math.Log(p.Lo), math.Log(p.Hi), math.Log(max(v, p.Lo))
	}
	f := (v - lo) / (hi - lo)
	f = min(max(f, 1e-4), 1-1e-4)
	return math.Log(f / (1 - f))
}

// CrossValidateBy holds out whole groups: for each value of the row column
// by (FilterKeys: "model" for leave-one-model-out, "gpu", "backend",
// "kind"), it fits on the cases of the other values and predicts that
// value's cases, in case order. A group alone (one value) cannot be held
// out: an error. It measures transfer to a model size, GPU or kind the fit
// never saw, which K-fold over rows does not.
func CrossValidateBy(cases []*Case, start hw.PerfProfile, opt Options, by string) ([]Errors, error) {
	if !slices.Contains(FilterKeys, by) {
		return nil, fmt.Errorf("calibrate: cannot hold out by %q (%s)", by, strings.Join(FilterKeys, ", "))
	}
	var groups []string
	for _, c := range cases {
		if g := c.key(by); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	if len(groups) < 2 {
		return nil, fmt.Errorf("calibrate: holding out by %s needs rows of at least two values, found %d", by, len(groups))
	}
	sort.Strings(groups)
	if opt.Params == nil {
		opt.Params = FitParams(cases)
	}
	out := make([]Errors, len(cases))
	for _, g := range groups {
		var test []int
		var tc []*Case
		for i, c := range cases {
			if c.key(by) == g {
				test = append(test, i)
			} else {
				tc = append(tc, c)
			}
		}
		res, err := Fit(tc, start, opt)
		if err != nil {
			return nil, err
		}
		errs := make([]error, len(test))
		parallel(len(test), opt.Workers, func(k int) { out[test[k]], errs[k] = Compare(cases[test[k]], res.Profile) })
		for k, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("%s: %v", cases[test[k]].Row.Where(), err)
			}
		}
	}
	return out, nil
}

// CrossValidate fits k times, each time without one fold of the cases
// (case i is in fold i mod k), and returns every case's error predicted by
// the fit that did not see it, in case order.
func CrossValidate(cases []*Case, start hw.PerfProfile, opt Options, k int) ([]Errors, error) {
	if k < 2 || k > len(cases) {
		return nil, fmt.Errorf("calibrate: --holdout %d needs 2 <= K <= %d rows", k, len(cases))
	}
	if opt.Params == nil {
		opt.Params = FitParams(cases) // the same constants in every fold
	}
	out := make([]Errors, len(cases))
	for fold := 0; fold < k; fold++ {
		var train []*Case
		for i, c := range cases {
			if i%k != fold {
				train = append(train, c)
			}
		}
		res, err := Fit(train, start, opt)
		if err != nil {
			return nil, err
		}
		var idx []int
		for i := fold; i < len(cases); i += k {
			idx = append(idx, i)
		}
		errs := make([]error, len(idx))
		parallel(len(idx), opt.Workers, func(j int) { out[idx[j]], errs[j] = Compare(cases[idx[j]], res.Profile) })
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
