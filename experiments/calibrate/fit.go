package calibrate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

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
	// Default "full" (TensorRT-LLM's default GUARANTEED_NO_EVICT scheduler
	// policy, which the public rows ran); use "prompt" for vLLM results.
	KVAdmission string
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
	if o.KVAdmission == "" {
		o.KVAdmission = engine.KVAdmitFull
	}
	if o.MaxEvals == 0 {
		o.MaxEvals = 10000
	}
}

// Case is a row made ready to predict. An offline row (all requests at
// t = 0) is simulated once with the real replica code; its schedule does not
// depend on step durations (nothing arrives while it runs), so its makespan
// and mean TTFT under any profile are weighted sums of the steps it ran
// (models.StepTally): the fit absorbs the scheduler's, batching's and KV
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
	outputs  float64 // output tokens of the run
	firsts   float64 // requests that got a first token
	full     bool    // predict by simulating again
}

// Prediction is what the simulator predicts for a row.
type Prediction struct {
	OutputTokensPerS float64
	TTFTMs           float64
	TPOTMs           float64
}

// Prepare checks every row against the catalog and runs it once; a row the
// simulator cannot run (unknown model or GPU, impossible layout, does not
// fit in memory, a request longer than the KV) is an error naming its
// place. All problems are reported at once.
func Prepare(rows []Row, cat *hw.Catalog, base hw.PerfProfile, opt Options) ([]*Case, error) {
	opt.defaults()
	var bad []string
	var cases []*Case
	for _, r := range rows {
		c, err := prepare(r, cat, base, opt)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		cases = append(cases, c)
	}
	if len(bad) > 0 {
		return nil, &InputError{Lines: bad}
	}
	return cases, nil
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
		return nil, fmt.Errorf("%s: weights: %v", r.Where(), err)
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
	rc.GPUMemoryUtilization = opt.GPUMemoryUtilization
	rc.PrefixCaching = false // benchmark prompts are random tokens
	rc.Weights, rc.KVDType = r.Weights, r.KVDType
	rc.KVAdmission = opt.KVAdmission
	rc.Perf = hw.PerfSpec{Profile: "calibrate"}
	fc := fleet.FleetConfig{GPU: r.GPU, Model: r.Model, TP: r.TP, Replicas: 1, Replica: rc}
	c := &Case{Row: r, gpu: gpu, llm: llm, fleet: fc, cat: withProfile(cat, base),
		full: r.RequestRate > 0 || r.MeanTPOTMs > 0}
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
	}
	return c, nil
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
	src := &rowSource{n: r.NumRequests, isl: int32(r.ISL), osl: int32(r.OSL), rate: r.RequestRate,
		rng: rand.New(rand.NewPCG(1, 2))}
	if err := f.Start(src); err != nil {
		return simResult{}, err
	}
	eng.Run(sim.Forever)
	if err := f.Err(); err != nil {
		return simResult{}, err
	}
	rr := f.Rec
	if rr.Completed != int64(r.NumRequests) {
		reasons := make([]string, 0, len(rr.FailedBy))
		for k, v := range rr.FailedBy {
			reasons = append(reasons, fmt.Sprintf("%d %s", v, k))
		}
		sort.Strings(reasons)
		return simResult{}, fmt.Errorf("num_requests: only %d of %d requests completed (%s): the configuration does not fit",
			rr.Completed, r.NumRequests, strings.Join(reasons, ", "))
	}
	span := (rr.LastFinish - src.first).Seconds()
	return simResult{outputs: rr.OutputTokens, completed: rr.Completed, makespanS: span,
		ttftMs: rr.TTFT.Mean(), tpotMs: rr.TPOT.Mean()}, nil
}

// Predict is what the simulator predicts for the case's row under pp.
func (c *Case) Predict(pp hw.PerfProfile) (Prediction, error) {
	if c.full {
		res, err := c.simulate(pp, nil)
		if err != nil {
			return Prediction{}, err
		}
		return Prediction{OutputTokensPerS: float64(res.outputs) / res.makespanS, TTFTMs: res.ttftMs, TPOTMs: res.tpotMs}, nil
	}
	// Deployed with TP only: for a dense model exactly NewStepModel; an MoE
	// row gets the MoE step (touched experts, active-param FLOPs).
	m, err := hw.NewDeployedStepModel(c.gpu, c.llm, hw.Deployment{Layout: hw.Layout{TP: c.Row.TP}}, hw.Precision(c.Row.Weights), hw.Precision(c.Row.KVDType), pp)
	if err != nil {
		return Prediction{}, err
	}
	span := m.Seconds(&c.makespan)
	return Prediction{OutputTokensPerS: c.outputs / span, TTFTMs: m.Seconds(&c.ttft) / c.firsts * 1000}, nil
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
	return workloads.Request{ID: uint64(s.i), Arrival: at, InputTokens: s.isl, OutputTokens: s.osl}, nil
}

// Errors of one prediction against its row: relative errors pred/meas − 1
// for each measured metric.
type Errors struct {
	Pred                   Prediction
	Throughput, TTFT, TPOT float64 // NaN where not measured
}

// Compare predicts c under pp and compares with what was measured.
func Compare(c *Case, pp hw.PerfProfile) (Errors, error) {
	p, err := c.Predict(pp)
	if err != nil {
		return Errors{}, err
	}
	e := Errors{Pred: p, Throughput: math.NaN(), TTFT: math.NaN(), TPOT: math.NaN()}
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
	return e, nil
}

// Worst is the largest absolute error of e's measured metrics.
func (e Errors) Worst() float64 {
	w := 0.0
	for _, v := range []float64{e.Throughput, e.TTFT, e.TPOT} {
		if !math.IsNaN(v) {
			w = max(w, math.Abs(v))
		}
	}
	return w
}

// FitParams are the profile keys the cases constrain: the GEMM efficiency
// of each weight precision present, the shape constants, and the TP
// communication constants when some row has TP > 1. nvlink_efficiency is
// left out: it trades one for one with tp_overlap.
func FitParams(cases []*Case) []string {
	prec := map[string]bool{}
	tp := false
	for _, c := range cases {
		prec[c.Row.Weights] = true
		tp = tp || c.Row.TP > 1
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
		out = append(out, "tp_overlap", "allreduce_latency_s")
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
func Fit(cases []*Case, start hw.PerfProfile, opt Options) (Result, error) {
	opt.defaults()
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
		return Loss(cases, pp)
	}
	x := make([]float64, len(params))
	for i, p := range params {
		x[i] = toFree(p, p.Get(&start))
	}
	best := loss(x)
	for round := 0; round < 8 && evals < opt.MaxEvals; round++ {
		res, err := optimize.Minimize(optimize.Problem{Func: loss}, x,
			&optimize.Settings{FuncEvaluations: opt.MaxEvals - evals, Converger: &optimize.FunctionConverge{Absolute: 1e-10, Relative: 1e-10, Iterations: 200}},
			&optimize.NelderMead{InitialVertices: nil, SimplexSize: 0.5})
		if err != nil && res == nil {
			return Result{}, err
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
	pp := start
	for i, p := range params {
		p.Set(&pp, toBounded(p, x[i]))
	}
	return Result{Profile: pp, Params: keys, Loss: best, Evals: evals}, nil
}

// Loss is the sum over cases of squared log errors of every measured
// metric; a prediction that fails or is not positive costs 100.
func Loss(cases []*Case, pp hw.PerfProfile) float64 {
	var l float64
	for _, c := range cases {
		p, err := c.Predict(pp)
		if err != nil {
			l += 100
			continue
		}
		r := c.Row
		for _, m := range [][2]float64{{p.OutputTokensPerS, r.OutputTokensPerS}, {p.TTFTMs, r.TTFTMs}, {p.TPOTMs, r.MeanTPOTMs}} {
			if m[1] <= 0 {
				continue
			}
			if !(m[0] > 0) || math.IsInf(m[0], 0) {
				l += 100
				continue
			}
			d := math.Log(m[0] / m[1])
			l += d * d
		}
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
		for i := fold; i < len(cases); i += k {
			if out[i], err = Compare(cases[i], res.Profile); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
