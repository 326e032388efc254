package experiments

// plan.go is `fleetsim plan`: a search over deployments (GPU type, tensor
// and expert parallelism, engine limits) for the cheapest fleet that meets
// an SLO, each configuration sized by the existing sizing search (size.go)
// with the scenario's failures and replicas in repair (N+k).

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/workloads"
)

// Plan statuses: why a configuration was or was not chosen (plan.csv's
// status column).
const (
	PlanChosen     = "chosen"
	PlanNoFit      = "does not fit"
	PlanNoRate     = "cannot reach the rate"
	PlanMissesSLO  = "misses the SLO at any size"
	PlanDearer     = "dearer than the chosen one"
	planNotChosen  = "meets the SLO" // before the choice
	planDefaultTPs = 8               // default TPs: powers of two up to this (one HGX server)
)

// PlanCandidate is one configuration of the search space.
type PlanCandidate struct {
	GPU              string
	TP, EP           int
	MaxBatchedTokens int
	MaxSeqs          int
	GPUsPer          int
	PricePerGPUHour  float64
	// BoundRPS is the roofline bound on one replica's request rate (0:
	// not computed); Floor the fewest replicas that could carry the rate
	// by it, beside those in repair.
	BoundRPS float64
	Floor    int
	Status   string
	Reason   string
	// Replicas is the fewest that meet the SLO (0 when none did); Point
	// is the size reported: N, or the largest size tried when none met.
	Replicas    int
	USDPerMonth float64
	Point       *SizePoint
	Simulated   int // fleet sizes simulated
	// Frontier: on the Pareto frontier of the configurations sized that
	// meet the SLO (PlanResult.Frontier); FrontierTies the configurations
	// equal to it in all three objectives, which it stands for.
	Frontier     bool
	FrontierTies []string
	lowerUSD     float64
	scenario     *scenario.Scenario
	idx          int // place in the space
}

// Label names the configuration: "H200 tp=4 mbt=8192 seqs=256".
func (c *PlanCandidate) Label() string {
	s := fmt.Sprintf("%s tp=%d", c.GPU, c.TP)
	if c.EP > 1 {
		s += fmt.Sprintf(" ep=%d", c.EP)
	}
	return s + fmt.Sprintf(" mbt=%d seqs=%d", c.MaxBatchedTokens, c.MaxSeqs)
}

// Scenario is the configuration's scenario (nil when it did not fit).
func (c *PlanCandidate) Scenario() *scenario.Scenario { return c.scenario }

// PlanResult is the answer of Plan.
type PlanResult struct {
	Targets    []scenario.Target
	Confidence float64
	Candidates []*PlanCandidate // in the space's order
	Best       *PlanCandidate   // nil when nothing meets the SLO
	// Closest is, when nothing meets the SLO, the simulated configuration
	// whose largest size came nearest its limits.
	Closest *PlanCandidate
	// Frontier is the Pareto frontier of the sized configurations that
	// meet the SLO ($/month, p99 TTFT, tokens/s per GPU), cheapest first
	// (planFrontier).
	Frontier                   []*PlanCandidate
	Simulated, Pruned, Sizings int // configurations simulated and pruned; fleet sizes simulated
	MaxReplicas                int
}

// PlanInputError is a plan refused for its input: the scenario or the
// space (exit status 2 on the command line).
type PlanInputError struct{ Err error }

func (e *PlanInputError) Error() string { return e.Err.Error() }
func (e *PlanInputError) Unwrap() error { return e.Err }

// planInputf is a PlanInputError.
func planInputf(format string, args ...any) error {
	return &PlanInputError{fmt.Errorf(format, args...)}
}

// noSizeError is search's "no fleet size meets the SLO", with the last
// size it tried.
type noSizeError struct {
	err   error
	last  *SizePoint
	tried int // sizes simulated
}

func (e *noSizeError) Error() string { return e.err.Error() }
func (e *noSizeError) Unwrap() error { return e.err }

// Plan searches base's [plan] space for the cheapest configuration meeting
// targets at confidence conf. It prunes, before simulating, layouts that
// cannot hold the model with KV for one mean request, and those whose
// roofline bound cannot carry the rate within plan.max_replicas; then it
// sizes the rest, the ones whose cheapest possible fleet (the roofline
// floor) is cheapest first, skipping those whose floor already costs more
// than the best found (branch and bound: the answer is the one an
// exhaustive search gives, as long as no fleet below its roofline floor
// meets the SLO). Every configuration runs base's seeds (common random
// numbers: the same arrivals and lengths).
func Plan(base *scenario.Scenario, targets []scenario.Target, conf float64, opt RunOptions) (*PlanResult, error) {
	if conf <= 0 || conf >= 1 {
		return nil, planInputf("confidence must be in (0, 1), found %v", conf)
	}
	switch {
	case base.Mode == scenario.ModeTraining:
		return nil, planInputf("plan: %s is a training scenario; plan searches serving deployments", base.Name)
	case base.Disagg.Enabled:
		return nil, planInputf("plan: %s has [disagg]: disaggregated plans are not searched yet; plan an aggregated fleet, or size this one with fleetsim size", base.Name)
	case len(base.Cluster.Groups) > 0:
		return nil, planInputf("plan: %s has [[cluster.groups]]: plan searches one configuration per fleet; size a mix with fleetsim size", base.Name)
	case base.Autoscale.Enabled:
		return nil, planInputf("plan: %s has [autoscale]: plan prices every replica, an autoscaled fleet pays less; turn it off to plan", base.Name)
	}
	cands, err := planSpace(base)
	if err != nil {
		return nil, err
	}
	res := &PlanResult{Targets: targets, Confidence: conf, Candidates: cands, MaxReplicas: base.Plan.MaxReplicas}
	isl, osl, rate := planLoad(base)
	var live []*PlanCandidate
	for _, c := range cands {
		if planPrune(base, c, isl, osl, rate) {
			res.Pruned++
			continue
		}
		live = append(live, c)
	}
	if fit := len(cands) - countStatus(cands, PlanNoFit); fit == 0 {
		return nil, planInputf("plan: %s: no configuration of the space can hold %s (e.g. %s: %s); add larger GPUs or wider tp to [plan]",
			base.Name, base.Cluster.Model, cands[0].Label(), cands[0].Reason)
	}
	// Cheapest possible first, so that the bound prunes the most.
	sort.SliceStable(live, func(i, j int) bool { return live[i].lowerUSD < live[j].lowerUSD })
	for _, c := range live {
		if res.Best != nil && c.lowerUSD > res.Best.USDPerMonth {
			c.Status, c.Reason = PlanDearer, fmt.Sprintf("its roofline floor of %d replicas already costs $%s a month, more than the chosen $%s",
				c.Floor, report.Human(c.lowerUSD), report.Human(res.Best.USDPerMonth))
			res.Pruned++
			continue
		}
		if err := planSize(c, targets, conf, opt, base.Plan.MaxReplicas); err != nil {
			return nil, err
		}
		res.Simulated++
		res.Sizings += c.Simulated
		if c.Status == planNotChosen && (res.Best == nil || planBetter(c, res.Best)) {
			res.Best = c
		}
	}
	for _, c := range cands {
		switch {
		case c == res.Best:
			c.Status, c.Reason = PlanChosen, "the cheapest that meets the SLO"
		case c.Status == planNotChosen && c.USDPerMonth == res.Best.USDPerMonth:
			c.Status, c.Reason = PlanDearer, fmt.Sprintf("as cheap as the chosen one, $%s a month; ties go to fewer GPUs, then the lower p99 TTFT", report.Human(c.USDPerMonth))
		case c.Status == planNotChosen:
			c.Status, c.Reason = PlanDearer, fmt.Sprintf("$%s a month against the chosen $%s", report.Human(c.USDPerMonth), report.Human(res.Best.USDPerMonth))
		}
	}
	if res.Best == nil {
		res.Closest = closest(cands, targets)
	}
	res.Frontier = planFrontier(cands)
	return res, nil
}

// planFrontier marks and returns, cheapest first, the Pareto frontier of
// the configurations sized that meet the SLO, at the size reported: those
// no other dominates: no worse in any of $/month (lower), p99 TTFT
// (lower) and output tokens/s per GPU (higher), and better in one, by
// their means over the replications. (Dominance within the replications'
// noise is not transitive, and taking it drops points nothing on the
// frontier dominates; the table prints each point's interval instead.)
// Of configurations equal in all three (engine limits that change
// nothing at that load) the first by planBetter stands for the others
// (FrontierTies). Configurations the search did not size (pruned as
// dearer by their roofline floor) are not on it: its expensive end is the
// search's, not the space's.
func planFrontier(cands []*PlanCandidate) []*PlanCandidate {
	var met []*PlanCandidate
	for _, c := range cands {
		if c.Point != nil && c.Replicas > 0 && c.Status != PlanMissesSLO {
			met = append(met, c)
		}
	}
	type obj struct{ usd, ttft, perGPU float64 }
	objs := make([]obj, len(met))
	for i, c := range met {
		ttft, perGPU, _ := planPointStats(c)
		objs[i] = obj{c.USDPerMonth, ttft, perGPU}
	}
	dominates := func(a, b obj) bool { // a no worse anywhere, better somewhere
		return a.usd <= b.usd && a.ttft <= b.ttft && a.perGPU >= b.perGPU &&
			(a.usd < b.usd || a.ttft < b.ttft || a.perGPU > b.perGPU)
	}
	var front []*PlanCandidate
	for i, c := range met {
		on := true
		for j := range met {
			if j != i && dominates(objs[j], objs[i]) {
				on = false
				break
			}
		}
		if on {
			front = append(front, c)
		}
	}
	sort.SliceStable(front, func(i, j int) bool { return planBetter(front[i], front[j]) })
	var kept []*PlanCandidate
	var keptObj []obj
	idx := map[*PlanCandidate]int{}
	for i, c := range met {
		idx[c] = i
	}
	for _, c := range front {
		o := objs[idx[c]]
		if k := slices.Index(keptObj, o); k >= 0 {
			kept[k].FrontierTies = append(kept[k].FrontierTies, c.Label())
			continue
		}
		c.Frontier = true
		kept, keptObj = append(kept, c), append(keptObj, o)
	}
	return kept
}

// planTTFT is a sized candidate's mean p99 TTFT at its size.
func planTTFT(c *PlanCandidate) float64 {
	ttft, _, _ := planPointStats(c)
	return ttft
}

// countStatus counts the candidates of status st.
func countStatus(cands []*PlanCandidate, st string) int {
	n := 0
	for _, c := range cands {
		if c.Status == st {
			n++
		}
	}
	return n
}

// planBetter orders candidates that meet the SLO: cheaper, then fewer
// GPUs, then the lower mean p99 TTFT; otherwise the earlier in the space
// stays.
func planBetter(a, b *PlanCandidate) bool {
	if a.USDPerMonth != b.USDPerMonth {
		return a.USDPerMonth < b.USDPerMonth
	}
	if a.Replicas*a.GPUsPer != b.Replicas*b.GPUsPer {
		return a.Replicas*a.GPUsPer < b.Replicas*b.GPUsPer
	}
	if ta, tb := planTTFT(a), planTTFT(b); ta != tb {
		return ta < tb
	}
	return a.idx < b.idx
}

// planSpace enumerates the space: [plan] lists, or their defaults.
func planSpace(base *scenario.Scenario) ([]*PlanCandidate, error) {
	p := base.Plan
	cat := base.Catalog()
	llm := cat.LLMs[base.Cluster.Model]
	gpus := p.GPUs
	if len(gpus) == 0 {
		gpus = []string{base.Cluster.GPU}
	}
	mbts := p.MaxBatchedTokens
	if len(mbts) == 0 {
		mbts = []int{base.Cluster.Replica.MaxBatchedTokens}
	}
	seqs := p.MaxSeqs
	if len(seqs) == 0 {
		seqs = []int{base.Cluster.Replica.MaxSeqs}
	}
	var out []*PlanCandidate
	for _, g := range gpus {
		gpu, ok := cat.GPUs[g]
		if !ok {
			return nil, planInputf("plan.gpus: %q is not a GPU of the catalog (%s)", g, strings.Join(cat.GPUNames(), ", "))
		}
		tps := p.TP
		if len(tps) == 0 {
			// Default: powers of two up to one HGX server's 8 (assumption:
			// the TP sizes engines are run at) that the NVLink domain
			// holds and the model's heads divide.
			for t := 1; t <= planDefaultTPs && t <= gpu.DomainGPUs; t *= 2 {
				if gpu.DomainGPUs%t == 0 && hw.CheckTP(llm, t) == nil {
					tps = append(tps, t)
				}
			}
		}
		for _, t := range tps {
			eps := []int{1}
			if p.EP && llm.IsMoE() && t > 1 {
				eps = append(eps, t)
			}
			for _, e := range eps {
				for _, m := range mbts {
					for _, s := range seqs {
						out = append(out, &PlanCandidate{GPU: g, TP: t, EP: e, MaxBatchedTokens: m, MaxSeqs: s, GPUsPer: t,
							PricePerGPUHour: planPrice(base, g), idx: len(out)})
					}
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, planInputf("plan: %s: the search space is empty (plan.gpus, plan.tp, plan.max_batched_tokens and plan.max_seqs give no configuration)", base.Name)
	}
	return out, nil
}

// planPrice is a GPU's USD per GPU-hour under base's [cost]: its
// price_per_gpu_hour where the GPU is the cluster's, else the catalog's at
// the tier (as Scenario.Price prices the cluster's).
func planPrice(base *scenario.Scenario, gpu string) float64 {
	if base.Cost.PricePerGPUHour > 0 && gpu == base.Cluster.GPU {
		return base.Cost.PricePerGPUHour
	}
	g := base.Catalog().GPUs[gpu]
	if base.Cost.Tier == scenario.TierReserved {
		return g.ReservedPricePerGPUHour
	}
	return g.PricePerGPUHour
}

// planLoad is the workload's mean prompt (new tokens, without a system
// prompt a prefix cache may hold) and output lengths, and its mean rate;
// rate 0 when the workload has none to bound (sessions, traces, closed
// loops, staged or piecewise loads).
func planLoad(base *scenario.Scenario) (isl, osl, rate float64) {
	w := base.Workload.Resolved()
	if in, err := w.Input.Build(); err == nil {
		isl = workloads.MeanOf(in)
	}
	if out, err := w.Output.Build(); err == nil {
		osl = workloads.MeanOf(out)
	}
	switch w.Arrival.Process {
	case "poisson", "gamma", "constant", "diurnal":
		if w.Kind == workloads.KindSynthetic && w.Concurrency == 0 && len(w.Stages) == 0 {
			rate = w.Arrival.RatePerS
		}
	}
	return isl, osl, rate
}

// planPrune derives c's scenario and decides whether it can be pruned
// before simulating: its layout or memory cannot hold the model with KV
// for one mean request, or its roofline bound cannot carry the rate with
// max_replicas. It sets c.Floor and c.lowerUSD for the rest.
func planPrune(base *scenario.Scenario, c *PlanCandidate, isl, osl, rate float64) bool {
	cat := base.Catalog()
	gpu, llm := cat.GPUs[c.GPU], cat.LLMs[base.Cluster.Model]
	l := hw.Layout{TP: c.TP, EP: c.EP}.Norm()
	if c.TP > gpu.DomainGPUs || gpu.DomainGPUs%c.TP != 0 {
		c.Status, c.Reason = PlanNoFit, fmt.Sprintf("tp = %d does not divide %s's %d-GPU NVLink domain", c.TP, c.GPU, gpu.DomainGPUs)
		return true
	}
	if err := hw.CheckDeployment(gpu, llm, l); err != nil {
		c.Status, c.Reason = PlanNoFit, err.Error()
		return true
	}
	rc := base.Cluster.Replica
	rc.MaxBatchedTokens, rc.MaxSeqs = c.MaxBatchedTokens, c.MaxSeqs
	pp := cat.Profiles[rc.Perf.Profile]
	var ps config.Problems
	mem := engine.PlanMemoryLayout(gpu, llm, l, rc, pp, "cluster", &ps)
	if len(ps.List) > 0 {
		c.Status, c.Reason = PlanNoFit, ps.List[0].Msg
		return true
	}
	// The least KV worth serving from: one mean request's prompt and
	// output (assumption: a replica that cannot hold one would preempt
	// every request).
	if kv := float64(mem.KVBlocks) * float64(rc.BlockTokens); rc.KVBlocks == 0 && kv < isl+osl {
		c.Status, c.Reason = PlanNoFit, fmt.Sprintf("KV for %.0f tokens is less than one mean request's %.0f", kv, isl+osl)
		return true
	}
	ovs := []scenario.Overlay{
		OverrideOverlay("cluster.gpu", strconv.Quote(c.GPU)), OverrideOverlay("cluster.tp", strconv.Itoa(c.TP)),
		OverrideOverlay("cluster.ep", strconv.Itoa(c.EP)), OverrideOverlay("cluster.dp", "1"), OverrideOverlay("cluster.pp", "1"),
		OverrideOverlay("cluster.replica.max_batched_tokens", strconv.Itoa(c.MaxBatchedTokens)),
		OverrideOverlay("cluster.replica.max_seqs", strconv.Itoa(c.MaxSeqs)),
	}
	if base.Cost.PricePerGPUHour > 0 && c.GPU != base.Cluster.GPU {
		// The scenario's price is its own GPU's; another pays the catalog's.
		ovs = append(ovs, OverrideOverlay("cost.price_per_gpu_hour", "0"))
	}
	sc, err := base.Derive(ovs...)
	if err != nil {
		c.Status, c.Reason = PlanNoFit, strings.ReplaceAll(err.Error(), "\n", " ")
		return true
	}
	c.scenario = sc
	down := sc.RunDown()
	c.Floor = down + 1
	m, err := hw.NewDeployedStepModel(gpu, llm, sc.Cluster.Deployment(), hw.Precision(rc.Weights), hw.Precision(rc.KVDType), pp)
	if err == nil && rate > 0 && isl+osl > 0 {
		// A request's least time on one GPU of the replica: its tokens'
		// GEMM FLOPs at the GPU's highest peak, or its output tokens'
		// share of the decode steps, each reading the weights once, with
		// at most max_seqs sequences (and τ tokens each, speculating) per
		// step, whichever is larger. Its inverse bounds the replica's rate.
		flops := m.FLOPs(hw.StepShape{PrefillTokens: isl + osl}) / max(gpu.BF16FLOPS, gpu.FP8FLOPS, gpu.FP4FLOPS)
		step := m.RooflineBound(gpu, hw.StepShape{DecodeSeqs: 1})
		perReq := max(flops, osl*step/(float64(c.MaxSeqs)*max(m.SpecTokensPerStep(), 1)))
		c.BoundRPS = 1 / perReq
		need := int(math.Ceil(rate/c.BoundRPS)) + down
		if need > base.Plan.MaxReplicas {
			c.Status, c.Reason = PlanNoRate, fmt.Sprintf("its roofline bound, %.3g req/s per replica, needs %d replicas for %g req/s; plan.max_replicas is %d",
				c.BoundRPS, need, rate, base.Plan.MaxReplicas)
			return true
		}
		c.Floor = max(c.Floor, need)
	}
	c.lowerUSD = planUSD(sc, c.Floor)
	return false
}

// planUSD is the $ per month of n replicas of sc, as size prices them
// (spot replicas at their fraction).
func planUSD(sc *scenario.Scenario, n int) float64 {
	r := &SizeResult{GPUsPer: sc.Cluster.GPUsPerReplica(), PriceHour: sc.Price(), Spot: max(sc.Spot.Replicas, 0), Down: sc.RunDown(),
		SpotFraction: sc.Spot.PriceFraction}
	return r.usdPerMonth(n)
}

// planSize sizes c with the existing search (with the scenario's failures
// and replicas in repair), from its floor up to max replicas.
func planSize(c *PlanCandidate, targets []scenario.Target, conf float64, opt RunOptions, maxReplicas int) error {
	sc := c.scenario
	hasFailure := sc.Failures.Enabled || sc.Run.DownReplicas > 0
	spotAt := func(n int) int { return scenario.SpotFit(max(sc.Spot.Replicas, 0), n, sc.RunDown()) }
	ss, err := search(sc, targets, conf, opt, hasFailure, spotAt, c.Floor, maxReplicas, false)
	var nse *noSizeError
	if errors.As(err, &nse) {
		c.Status, c.Reason, c.Point = PlanMissesSLO, fmt.Sprintf("up to %d replicas: %s", nse.last.Replicas, describeBounds(nse.last, targets)), nse.last
		c.Simulated = nse.tried
		return nil
	}
	if err != nil {
		return err
	}
	c.Simulated = len(ss.cache)
	c.Replicas, c.Point = ss.n, ss.cache[ss.n]
	c.USDPerMonth = planUSD(sc, ss.n)
	c.Status = planNotChosen
	return nil
}

// closest is, among candidates sized, the one whose largest size came
// nearest to meeting every target (the largest relative miss smallest).
func closest(cands []*PlanCandidate, targets []scenario.Target) *PlanCandidate {
	var best *PlanCandidate
	bestMiss := math.Inf(1)
	for _, c := range cands {
		if c.Point == nil {
			continue
		}
		miss := 0.0
		for i, t := range targets {
			b := c.Point.Bounds[i]
			if t.Upper {
				miss = max(miss, b/t.Limit-1)
			} else {
				miss = max(miss, t.Limit-b)
			}
		}
		if miss < bestMiss {
			best, bestMiss = c, miss
		}
	}
	return best
}
