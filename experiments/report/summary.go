package report

import (
	"encoding/json"
	"fmt"
	"github.com/fleetsim/fleetsim/experiments/results"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// Summary is what a run reports: summary.json, key for key. Latencies are in
// milliseconds, rates per simulated second, money in USD.
type Summary struct {
	Scenario   string           `json:"scenario"`
	Mode       string           `json:"mode"`
	Training   *TrainingStats   `json:"training,omitempty"`
	Requests   RequestCounts    `json:"requests"`
	LatencyMs  LatencyBlock     `json:"latency_ms"`
	Throughput Throughput       `json:"throughput"`
	Goodput    Goodput          `json:"goodput"`
	Prefix     PrefixCache      `json:"prefix_cache"`
	KV         KVStats          `json:"kv"`
	Fleet      FleetStats       `json:"fleet"`
	Autoscale  *AutoscaleStats  `json:"autoscale,omitempty"`
	Spot       *SpotStats       `json:"spot,omitempty"`
	Models     []ModelStats     `json:"models,omitempty"`
	Cost       Cost             `json:"cost"`
	Resilience Resilience       `json:"resilience"`
	Failures   *FailureStats    `json:"failures,omitempty"`
	Sim        SimStats         `json:"sim"`
	Failed     map[string]int64 `json:"failed_by_reason,omitempty"`

	// Disaggregated serving and KV tiers (disagg.go, kvtier.go), when on.
	Disagg  *DisaggSummary         `json:"disagg,omitempty"`
	KVTiers map[string]TierSummary `json:"kv_tiers,omitempty"`

	// FanOut is the client requests of a fan-out ([workload] fanout > 1),
	// each K of the requests above, complete when the last of them is.
	FanOut *FanOutSummary `json:"fanout,omitempty"`
}

// FanOutSummary counts a fan-out's client requests: completed (every
// sub-request completed), failed (one failed or was shed), in flight, and
// a completed one's latency from its arrival to its last sub-request's
// last token.
type FanOutSummary struct {
	K         int   `json:"k"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	InFlight  int64 `json:"in_flight"`
	LatencyMs Dist  `json:"latency_ms"`
}

// RequestCounts obeys arrived = completed + failed + shed + in_flight.
type RequestCounts struct {
	Arrived   int64 `json:"arrived"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	Shed      int64 `json:"shed"`
	InFlight  int64 `json:"in_flight"`
	Preempted int64 `json:"preempted"` // completed requests preempted at least once
}

// Dist is a latency distribution in milliseconds. Quantiles are exact up to
// 4,096 samples, then within 1% relative error (sim/quantile).
type Dist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	N    uint64  `json:"n"`
}

// LatencyBlock holds the per-request latency distributions.
type LatencyBlock struct {
	TTFT Dist `json:"ttft"` // arrival → first output token
	TPOT Dist `json:"tpot"` // mean time per output token after the first
	// ITL is the inter-token latency: every gap between consecutive output
	// tokens of a completed request, one value per token after the first
	// (docs/outputs.md, "Inter-token latency").
	ITL   Dist `json:"itl"`
	E2E   Dist `json:"e2e"`   // arrival → last output token
	Queue Dist `json:"queue"` // arrival → first admission into a batch
	// ClientTTFT counts failed requests too, at the time they failed (a
	// client timeout, an error): what clients waited for a first token.
	ClientTTFT Dist `json:"ttft_client"`
}

// Throughput is completed work per simulated second.
type Throughput struct {
	RequestsPerS     float64 `json:"requests_per_s"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	InputTokensPerS  float64 `json:"input_tokens_per_s"`
}

// Goodput counts only requests that met the SLO.
type Goodput struct {
	RequestsPerS     float64 `json:"requests_per_s"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	// SLOAttainment is met / arrived; absent (null) when no SLO is set,
	// where every request would "meet" it.
	SLOAttainment *float64 `json:"slo_attainment,omitempty"`
	TTFTSLOMs     float64  `json:"ttft_slo_ms"`
	TPOTSLOMs     float64  `json:"tpot_slo_ms"`
	E2ESLOMs      float64  `json:"e2e_slo_ms,omitempty"`
}

// PrefixCache reports prompt tokens served from the prefix cache.
type PrefixCache struct {
	HitRate      float64 `json:"hit_rate"` // token-weighted, at first admission
	CachedTokens int64   `json:"cached_tokens"`
	PromptTokens int64   `json:"prompt_tokens"`
	Evictions    int64   `json:"evictions"`
}

// KVStats reports KV-cache memory.
type KVStats struct {
	UtilizationMean    float64 `json:"utilization_mean"`     // time-weighted used / total blocks
	CachedFractionMean float64 `json:"cached_fraction_mean"` // time-weighted cached / total blocks
	BlocksPerReplica   int64   `json:"blocks_per_replica"`
	BlockTokens        int     `json:"block_tokens"`
	Preemptions        int64   `json:"preemptions"`
	Allocator          string  `json:"allocator"`
	// FragmentationMean is the time-weighted external fragmentation of
	// free KV space (contiguous allocator; 0 when paged), and
	// FragmentationAtOOM the largest seen when an allocation failed.
	FragmentationMean  float64 `json:"fragmentation_mean"`
	FragmentationAtOOM float64 `json:"fragmentation_at_oom"`
	OOMCrashes         int64   `json:"oom_crashes"`
	KVBytesPerGPU      float64 `json:"kv_bytes_per_gpu"`
	WeightBytesPerGPU  float64 `json:"weight_bytes_per_gpu"`
}

// FleetStats describes the simulated fleet.
type FleetStats struct {
	GPU      string `json:"gpu"`
	Model    string `json:"model"`
	Replicas int    `json:"replicas"`
	TP       int    `json:"tp"`
	// DP and EP are the attention data and expert parallelism (omitted
	// when 1).
	DP      int `json:"dp,omitempty"`
	EP      int `json:"ep,omitempty"`
	PP      int `json:"pp,omitempty"`
	GPUs    int `json:"gpus"`
	Domains int `json:"nvlink_domains"`
	// BusyFraction is the mean fraction of time a replica had a step in
	// progress, i.e. held any running sequence. It is not compute
	// utilisation: one long decode keeps a replica busy.
	BusyFraction float64 `json:"busy_fraction"`
	// MFU is model FLOPs utilisation: the model FLOPs the fleet did over
	// its GPUs' dense peak for the run's duration.
	MFU      float64 `json:"mfu"`
	Router   string  `json:"router"`
	Batching string  `json:"batching"`
	// Groups are a heterogeneous fleet's replica groups ([[cluster.groups]]);
	// then GPU names every group's GPU ("H100+B200") and TP, the KV block
	// counts and bytes per GPU are the first group's.
	Groups []GroupStats `json:"groups,omitempty"`
	// EngineProfile is the step model's engine profile (a built-in name
	// or the file a scenario named).
	EngineProfile   string  `json:"engine_profile"`
	StepsPerReplica float64 `json:"steps_per_replica"`
}

// Cost prices the run.
type Cost struct {
	// USD is what the run's GPUs cost for its duration: GPU-hours × price,
	// plus electricity when [cost] power is set.
	USD       float64 `json:"usd"`
	Tier      string  `json:"tier"`
	EnergyKWh float64 `json:"energy_kwh"` // GPUs × W × PUE × hours (reported always)
	EnergyUSD float64 `json:"energy_usd"` // included in usd only when [cost] power is set
	// Wasted splits out the $ of work that produced nothing: recompute
	// after preemption (prefill FLOPs done twice, priced as a share of all
	// FLOPs).
	Wasted          Wasted  `json:"wasted"`
	GPUHours        float64 `json:"gpu_hours"`
	PricePerGPUHour float64 `json:"price_per_gpu_hour"`
	// USDPerMillionOutputTokens is on goodput (SLO-meeting output tokens);
	// absent when no output token met the SLO: undefined, not free.
	USDPerMillionOutputTokens *float64 `json:"usd_per_million_output_tokens,omitempty"`
	USDPerMillionOutputRaw    float64  `json:"usd_per_million_output_tokens_raw"` // on all completed output tokens
	USDPerMonth               float64  `json:"usd_per_month"`
	// USDByTier splits a fleet of groups' GPU bill by pricing tier
	// ("on-demand", "reserved"); absent for a fleet of one kind.
	USDByTier map[string]float64 `json:"usd_by_tier,omitempty"` // the fleet for 720 h (price only)
}

// Wasted is money spent on work that produced nothing.
type Wasted struct {
	RecomputeUSD    float64 `json:"recompute_usd"`
	RecomputeTokens int64   `json:"recompute_tokens"` // prompt tokens prefilled again after preemption
	// DiscardedUSD is work on copies that were cancelled (losing hedges,
	// timed-out requests) or failed: their prefill and decode FLOPs' share
	// of the bill.
	DiscardedUSD float64 `json:"discarded_usd"`
	// DownUSD is what replicas cost while out of service (failed, in
	// repair, loading weights, or the run's down_replicas), including
	// replicas repaired while a warm spare held their place.
	DownUSD float64 `json:"down_usd"`
	// IdleSparesUSD is what warm spares ([failures] spares) cost while they
	// waited unused. (A failed replica whose place a spare took is repaired
	// off the books of availability; its repair time is in DownUSD.)
	IdleSparesUSD float64 `json:"idle_spares_usd"`
}

// Resilience reports what the gateway's policies did and cost.
type Resilience struct {
	SuccessRate    float64 `json:"success_rate"` // completed / arrived, as the client sees it
	Copies         int64   `json:"copies"`       // copies sent, primaries included
	Hedges         int64   `json:"hedges"`
	HedgeRate      float64 `json:"hedge_rate"` // hedges / arrived
	Retries        int64   `json:"retries"`
	Timeouts       int64   `json:"timeouts"`
	Fallbacks      int64   `json:"fallbacks"`        // copies served by the fallback pool
	Deferred       int64   `json:"deferred"`         // admission refusals that held a request at the gateway
	Queued         int64   `json:"queued,omitempty"` // requests that waited in the late-binding queue ([policies.queue] binding = "late")
	Cancelled      int64   `json:"cancelled_copies"`
	Probes         int64   `json:"probes"`
	ProbeGPUSecs   float64 `json:"probe_gpu_seconds"` // what deep probes cost (both pools of a disaggregated fleet)
	Ejections      int64   `json:"ejections"`
	IsolationMsMax float64 `json:"isolation_ms_max"` // fault → out of rotation, worst case (0: none isolated)
	Isolated       int     `json:"isolated"`
	// Work done on copies that were cancelled or failed, in tokens, and as
	// a share of all tokens processed.
	WastedPrefillTokens int64   `json:"wasted_prefill_tokens"`
	WastedDecodeTokens  int64   `json:"wasted_decode_tokens"`
	WastedTokenFraction float64 `json:"wasted_token_fraction"`
	// CancelledTokenFraction is the share of all tokens processed for
	// copies the gateway withdrew: mostly losing hedges — the hedging
	// overhead (CALIBRATION.md §6: 5–8% of GPU tokens).
	CancelledTokenFraction float64 `json:"cancelled_token_fraction"`
	// Rollout reports a blue-green rollout ([rollout]).
	Rollout *fleet.RolloutStats `json:"rollout,omitempty"`
}

// SimStats describes the simulation itself.
type SimStats struct {
	Events           uint64  `json:"events"`
	SimulatedSeconds float64 `json:"simulated_seconds"`
	Seed             uint64  `json:"seed"`
	// Stopped says why the run stopped before its workload ended, when
	// it did: "overload: more than N requests in flight at T s
	// (run.max_in_flight) ...". Absent for a run that finished.
	Stopped string `json:"stopped,omitempty"`
}

func dist(s *quantile.Sketch) Dist {
	if s.Count() == 0 {
		return Dist{}
	}
	return Dist{Mean: results.Round6(s.Mean()), P50: results.Round6(s.Quantile(0.5)), P90: results.Round6(s.Quantile(0.9)),
		P95: results.Round6(s.Quantile(0.95)), P99: results.Round6(s.Quantile(0.99)), P999: results.Round6(s.Quantile(0.999)), Max: results.Round6(s.Max()), N: s.Count()}
}

// Ratio is a/b, 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// HoursPerMonth is the month the seeds price capacity over (CALIBRATION.md
// §6: "$6.5/h and 720 h").
const HoursPerMonth = 720

// MarshalJSON writes a training run's summary without the serving blocks.
func (s *Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	if s.Mode != scenario.ModeTraining {
		return json.Marshal((*plain)(s))
	}
	return json.Marshal(struct {
		Scenario string         `json:"scenario"`
		Mode     string         `json:"mode"`
		Training *TrainingStats `json:"training"`
		Sim      SimStats       `json:"sim"`
	}{s.Scenario, s.Mode, s.Training, s.Sim})
}

// Summarize reduces a run to its Summary.
func Summarize(r *Result) *Summary {
	if r.Training != nil {
		return &Summary{Scenario: r.Scenario.Name, Mode: scenario.ModeTraining, Training: r.Training,
			Sim: SimStats{Events: r.Events, SimulatedSeconds: results.Round6(r.EndTime.Seconds()), Seed: r.Scenario.Seed}}
	}
	sc, rec, f := r.Scenario, r.Rec, r.Fleet
	secs := r.EndTime.Seconds()
	s := &Summary{Scenario: sc.Name, Mode: scenario.ModeServing}
	s.Requests = RequestCounts{Arrived: rec.Arrived, Completed: rec.Completed, Failed: rec.Failed,
		Shed: rec.Shed, InFlight: rec.InFlight(), Preempted: rec.Preempted}
	s.LatencyMs = LatencyBlock{TTFT: dist(rec.TTFT), TPOT: dist(rec.TPOT), ITL: dist(rec.ITL), E2E: dist(rec.E2E), Queue: dist(rec.Queue),
		ClientTTFT: dist(rec.ClientTTFT)}
	if fo := rec.FanOut; fo != nil {
		s.FanOut = &FanOutSummary{K: fo.K, Completed: fo.Completed, Failed: fo.Failed,
			InFlight: rec.Arrived/int64(fo.K) - fo.Completed - fo.Failed, LatencyMs: dist(fo.Latency)}
	}
	s.Throughput = Throughput{
		RequestsPerS:     results.Round6(Ratio(float64(rec.Completed), secs)),
		OutputTokensPerS: results.Round6(Ratio(float64(rec.OutputTokens), secs)),
		InputTokensPerS:  results.Round6(Ratio(float64(rec.InputTokens), secs)),
	}
	s.Goodput = Goodput{
		RequestsPerS:     results.Round6(Ratio(float64(rec.MetSLO), secs)),
		OutputTokensPerS: results.Round6(Ratio(float64(rec.GoodOutputTokens), secs)),
		TTFTSLOMs:        sc.SLO.TTFTMs, TPOTSLOMs: sc.SLO.TPOTMs, E2ESLOMs: sc.SLO.E2EMs,
	}
	if len(rec.PerModel) > 0 {
		// Several models: a request meets its own model's SLO.
		var met, good int64
		set := false
		for _, m := range rec.PerModel {
			met, good, set = met+m.MetSLO, good+m.GoodOutputTokens, set || m.SLO.Set()
		}
		s.Goodput.RequestsPerS, s.Goodput.OutputTokensPerS = results.Round6(Ratio(float64(met), secs)), results.Round6(Ratio(float64(good), secs))
		if set {
			s.Goodput.SLOAttainment = ptr(results.Round6(Ratio(float64(met), float64(rec.Arrived))))
		}
	} else if sc.SLO.Set() {
		s.Goodput.SLOAttainment = ptr(results.Round6(Ratio(float64(rec.MetSLO), float64(rec.Arrived))))
	}
	var prompt, cached, evict, preempt, steps, ooms int64
	var fragNs, fragOOM float64
	var used, cachedNs, busy, flops float64
	for _, rp := range f.Replicas {
		flops += rp.Stats.FLOPs
		ooms += rp.Stats.OOMCrashes
		fragNs += rp.Stats.FragNs
		fragOOM = max(fragOOM, rp.Stats.FragAtOOM)
		prompt += rp.Stats.PromptTokens
		cached += rp.Stats.CachedTokens
		evict += rp.KV().Evictions()
		preempt += rp.Stats.Preemptions
		steps += rp.Stats.Steps
		used += rp.Stats.KVUsedBlockNs
		cachedNs += rp.Stats.KVCachedBlockNs
		busy += float64(rp.Stats.BusyNs)
	}
	n := float64(len(f.Replicas))
	total := float64(f.Memory.KVBlocks) * n * float64(r.EndTime)
	s.Prefix = PrefixCache{HitRate: results.Round6(Ratio(float64(cached), float64(prompt))), CachedTokens: cached,
		PromptTokens: prompt, Evictions: evict}
	s.KV = KVStats{UtilizationMean: results.Round6(Ratio(used, total)), CachedFractionMean: results.Round6(Ratio(cachedNs, total)),
		BlocksPerReplica: f.Memory.KVBlocks, BlockTokens: sc.Cluster.Replica.BlockTokens, Preemptions: preempt,
		KVBytesPerGPU: results.Round6(f.Memory.KVBytes), WeightBytesPerGPU: results.Round6(f.Memory.WeightBytes),
		Allocator: sc.Cluster.Replica.Allocator, FragmentationMean: results.Round6(Ratio(fragNs, n*float64(r.EndTime))),
		FragmentationAtOOM: results.Round6(fragOOM), OOMCrashes: ooms}
	s.Fleet = FleetStats{GPU: sc.Cluster.GPU, Model: sc.Cluster.Model, Replicas: sc.Cluster.Replicas, TP: sc.Cluster.TP,
		DP: oneIsZero(sc.Cluster.Layout().DP), EP: oneIsZero(sc.Cluster.Layout().EP), PP: oneIsZero(sc.Cluster.Layout().PP),
		GPUs: f.Place.GPUs, Domains: f.Place.Domains, BusyFraction: results.Round6(Ratio(busy, n*float64(r.EndTime))),
		Router: sc.Router.Name, Batching: sc.Cluster.Replica.Batching, EngineProfile: hw.ProfileLabel(sc.Cluster.Replica.Perf.Profile), StepsPerReplica: results.Round6(float64(steps) / n),
		MFU: results.Round6(Ratio(flops*float64(sc.Cluster.GPUsPerReplica()), float64(f.Place.GPUs)*f.PeakFLOPS*secs))}
	// The GPU bill: every pool's replicas at their rates over their
	// lifecycles (billing.go).
	bl := NewBilling(r)
	primary, fb := bl.Primary.All(r.EndTime), bl.Fallback.All(r.EndTime)
	if len(f.Groups) > 0 {
		summarizeGroups(s, r, bl, secs)
		s.Models = modelStats(r, secs)
	}
	// The primary pool's price per GPU-hour: its replicas' one price, or
	// the blend its bill pays.
	price := bl.Primary.Rates[0].USDPerGPUHour
	for _, x := range bl.Primary.Rates {
		if x.USDPerGPUHour != price {
			price = Ratio(primary.USD, primary.GPUHours)
			break
		}
	}
	primaryGPUHours := primary.GPUHours
	gpuHours := primaryGPUHours + fb.GPUHours
	if sp := f.Spot; sp != nil {
		spot := bl.Primary.Bill(0, len(f.Replicas), r.EndTime, func(x Rate) bool { return x.Spot })
		s.Spot = &SpotStats{Replicas: sc.SpotReplicas(), Interruptions: sp.Interruptions,
			DownReplicaHours: results.Round6(float64(f.Life.TotalNs(fleet.PhaseInterrupted, r.EndTime)) / 1e9 / 3600), FailedRequests: rec.FailedBy[fleet.FailSpot],
			SpotUSD: results.Round6(spot.USD), OtherUSD: results.Round6(primary.USD - spot.USD)}
		if len(f.Groups) > 0 {
			// Which groups' replicas are on spot, and at what fraction of
			// their price.
			s.Spot.PriceFraction = sc.Spot.PriceFraction
			parts := sc.SpotParts()
			if len(parts) == 1 {
				s.Spot.Group = parts[0].Group.Name
			} else {
				for _, p := range parts {
					s.Spot.Groups = append(s.Spot.Groups, SpotGroupStats{Name: p.Group.Name, Replicas: p.N(),
						SpotUSD: results.Round6(bl.Primary.Bill(p.First, p.End, r.EndTime, nil).USD)})
				}
			}
		}
		if fb.USD > 0 {
			s.Spot.FallbackUSD = results.Round6(fb.USD)
		}
	}
	if a := f.Autoscaler; a != nil {
		s.Autoscale = autoscaleStats(r, f.Pool, a, sc.Autoscale, sc.Cluster.GPUsPerReplica(), len(f.Groups) > 0, primaryGPUHours, secs)
		if len(f.Groups) == 0 {
			s.Fleet.MFU = results.Round6(Ratio(flops*float64(sc.Cluster.GPUsPerReplica()), primaryGPUHours*3600*f.PeakFLOPS))
		}
	}
	watts := sc.Cost.WattsPerGPU
	if watts == 0 {
		watts = sc.Catalog().GPUs[sc.Cluster.GPU].TDPWatts
		if len(f.Groups) > 0 {
			// The GPUs' mean TDP over a fleet of groups.
			w := 0.0
			for _, g := range f.Groups {
				w += float64(g.Place.GPUs) * sc.Catalog().GPUs[g.GPU].TDPWatts
			}
			watts = Ratio(w, float64(f.Place.GPUs))
		}
	}
	kwh := gpuHours * watts * sc.Cost.PUE / 1000
	usd := primary.USD + fb.USD
	// A month at the run's mean spend rate (GPUs only).
	usdPerMonth := Ratio(usd*3600, secs) * HoursPerMonth
	if sc.Cost.Power {
		usd += kwh * sc.Cost.USDPerKWh
	}
	// Recompute: prompt tokens prefilled beyond each request's first
	// admission (its uncached prompt), priced at their share of FLOPs.
	var prefilled, firstNeed int64
	for _, rp := range f.Replicas {
		prefilled += rp.Stats.PrefillTokens
		firstNeed += rp.Stats.PromptTokens - rp.Stats.CachedTokens
	}
	recompute := max(0, prefilled-firstNeed)
	recomputeFLOPs := float64(recompute) * 2 * f.ParamsPerGPU * float64(sc.Cluster.GPUsPerReplica())
	var discarded int64
	for _, rp := range f.Replicas {
		discarded += rp.Stats.WastedPrefillTokens + rp.Stats.WastedDecodeTokens
	}
	discardedFLOPs := float64(discarded) * 2 * f.ParamsPerGPU * float64(sc.Cluster.GPUsPerReplica())
	var downGPUHours float64
	if r.Failures != nil {
		// Serving slots out of service, and replicas repaired while a spare
		// held their place (out of service too, though capacity held).
		downGPUHours = (r.Failures.ReplicaDownS + r.SpareRepairS) * float64(sc.Cluster.GPUsPerReplica()) / 3600
		if len(f.Groups) > 0 { // each replica's own TP
			downGPUHours = (r.DownGPUSeconds + r.SpareRepairGPUSeconds) / 3600
		}
	}
	// The decode pool's replicas out of service (and repaired while a
	// spare held their place), and its spares waiting, at its GPU's price.
	var decodeDownUSD, decodeIdleUSD float64
	if d := r.Failures; d != nil && d.Decode != nil && f.Disagg != nil {
		perS := float64(f.Disagg.DecodeReplicaTP()) / 3600 * decodePrice(sc)
		decodeDownUSD = (d.Decode.ReplicaDownS + d.Decode.SpareRepairS) * perS
		decodeIdleUSD = d.Decode.IdleSpareS * perS
	}
	// run.down_replicas (a group's down_replicas), in repair for the whole
	// run, at their rates: autoscaled, they stay parked, paid only when
	// reserved.
	var runDownUSD float64
	for _, i := range sc.DownIndexes() {
		runDownUSD += bl.Primary.Bill(i, i+1, r.EndTime, nil).USD
	}
	totalFLOPs := flops * float64(sc.Cluster.GPUsPerReplica())
	if len(f.Groups) > 0 {
		// Each group's own TP and model: FLOPs per token differ.
		totalFLOPs, recomputeFLOPs, discardedFLOPs = 0, 0, 0
		for _, g := range f.Groups {
			perToken := 2 * g.ParamsPerGPU * float64(g.TP)
			for i := g.First; i < g.First+g.Replicas; i++ {
				st := f.Replicas[i].Stats
				totalFLOPs += st.FLOPs * float64(g.TP)
				recomputeFLOPs += float64(st.PrefillTokens-(st.PromptTokens-st.CachedTokens)) * perToken
				discardedFLOPs += float64(st.WastedPrefillTokens+st.WastedDecodeTokens) * perToken
			}
		}
		recomputeFLOPs = max(0, recomputeFLOPs)
	}
	s.Cost = Cost{USD: results.Round6(usd), Tier: sc.Cost.Tier, GPUHours: results.Round6(gpuHours), PricePerGPUHour: price,
		EnergyKWh: results.Round6(kwh), EnergyUSD: results.Round6(kwh * sc.Cost.USDPerKWh),
		Wasted: Wasted{RecomputeTokens: recompute, RecomputeUSD: results.Round6(Ratio(recomputeFLOPs, totalFLOPs) * usd),
			DiscardedUSD: results.Round6(Ratio(discardedFLOPs, totalFLOPs) * usd), DownUSD: results.Round6(downGPUHours*price + runDownUSD + decodeDownUSD),
			IdleSparesUSD: results.Round6(idleSparesUSD(r, price) + decodeIdleUSD)},
		USDPerMillionOutputRaw: results.Round6(Ratio(usd*1e6, float64(rec.OutputTokens))),
		USDPerMonth:            results.Round6(usdPerMonth)}
	if rec.GoodOutputTokens > 0 {
		s.Cost.USDPerMillionOutputTokens = ptr(results.Round6(usd * 1e6 / float64(rec.GoodOutputTokens)))
	}
	if gs := s.Fleet.Groups; len(gs) > 0 {
		// The GPU bill by tier (groups' USD; energy is not split).
		s.Cost.USDByTier = map[string]float64{}
		for _, g := range gs {
			s.Cost.USDByTier[g.Tier] = results.Round6(s.Cost.USDByTier[g.Tier] + g.USD)
		}
	}
	gw := f.GW
	var wp, wd, pt, dt, ct int64
	for _, rp := range f.Replicas {
		ct += rp.Stats.CancelledTokens
		wp += rp.Stats.WastedPrefillTokens
		wd += rp.Stats.WastedDecodeTokens
		pt += rp.Stats.PrefillTokens
		dt += rp.Stats.DecodeTokens
	}
	var iso int64
	for _, x := range gw.IsolationNs {
		iso = max(iso, x)
	}
	s.Resilience = Resilience{SuccessRate: results.Round6(Ratio(float64(rec.Completed), float64(rec.Arrived))),
		Copies: gw.Copies, Hedges: gw.Hedges, HedgeRate: results.Round6(Ratio(float64(gw.Hedges), float64(rec.Arrived))),
		Retries: gw.Retries, Timeouts: gw.Timeouts, Fallbacks: gw.Fallbacks, Deferred: gw.Deferred, Queued: gw.Queued, Cancelled: gw.Cancelled, Probes: gw.Probes, ProbeGPUSecs: results.Round6(probeGPUSeconds(r)), Ejections: gw.Ejections,
		IsolationMsMax: results.Round6(sim.Time(iso).Milliseconds()), Isolated: len(gw.IsolationNs),
		WastedPrefillTokens: wp, WastedDecodeTokens: wd, WastedTokenFraction: results.Round6(Ratio(float64(wp+wd), float64(pt+dt))),
		CancelledTokenFraction: results.Round6(Ratio(float64(ct), float64(pt+dt))),
		Rollout:                f.Rollout()}
	s.Failures = r.Failures
	s.Sim = SimStats{Events: r.Events, SimulatedSeconds: results.Round6(secs), Seed: sc.Seed, Stopped: r.Stopped}
	if len(rec.FailedBy) > 0 {
		s.Failed = rec.FailedBy
	}
	summarizeDisagg(s, r, bl)
	summarizeKVTiers(s, r)
	return s
}

// probeGPUSeconds is what the run's deep probes cost in GPU-seconds: the
// gateway's probes of the (prefill) pool and, in a disaggregated fleet,
// the decode pool's.
func probeGPUSeconds(r *Result) float64 {
	x := r.Fleet.GW.ProbeGPUSeconds
	if d := r.Fleet.Disagg; d != nil {
		x += d.ProbeStats.ProbeGPUSeconds
	}
	return x
}

// WriteJSON writes the summary as indented JSON (map keys sorted, so the
// bytes are deterministic).
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteTable writes a readable results table.
func (s *Summary) WriteTable(w io.Writer) error {
	if s.Mode == scenario.ModeTraining {
		return s.writeTrainingTable(w)
	}
	var b strings.Builder
	domains := "NVLink domains"
	if s.Fleet.Domains == 1 {
		domains = "NVLink domain"
	}
	layout := hw.Layout{TP: s.Fleet.TP, DP: s.Fleet.DP, EP: s.Fleet.EP, PP: s.Fleet.PP}
	if gs := s.Fleet.Groups; len(gs) > 0 {
		parts := make([]string, len(gs))
		for i, g := range gs {
			parts[i] = fmt.Sprintf("%s %d× %s TP=%d on %s", g.Name, g.Replicas, g.Model, g.TP, g.GPU)
			if g.DownReplicas > 0 {
				parts[i] += fmt.Sprintf(" (%d down)", g.DownReplicas)
			}
			if g.SparesFor != "" {
				parts[i] = fmt.Sprintf("%s %d× warm spare for %s", g.Name, g.Replicas, g.SparesFor)
			}
			if e := g.Engine; e != nil {
				parts[i] += fmt.Sprintf(" (own engine: %s batching, max_seqs %d, %s weights, %s KV, profile %s)",
					e.Batching, e.MaxSeqs, e.Weights, e.KVDType, e.EngineProfile)
			}
		}
		fmt.Fprintf(&b, "scenario %s — %d replicas in groups: %s (%d GPUs, %d %s), router %s, %s batching, engine profile %s\n",
			s.Scenario, s.Fleet.Replicas, strings.Join(parts, ", "), s.Fleet.GPUs, s.Fleet.Domains, domains,
			s.Fleet.Router, s.Fleet.Batching, s.Fleet.EngineProfile)
	} else if d := s.Disagg; d != nil {
		// Each pool on its own GPUs (fleet.gpus counts both).
		fmt.Fprintf(&b, "scenario %s — prefill %d× %s %s on %d %s, decode %d× on %d %s (%d %s), router %s, %s batching, engine profile %s\n",
			s.Scenario, s.Fleet.Replicas, s.Fleet.Model, layout, d.PrefillGPUs, s.Fleet.GPU, d.DecodeReplicas, d.DecodeGPUs, d.DecodeGPU,
			s.Fleet.Domains, domains, s.Fleet.Router, s.Fleet.Batching, s.Fleet.EngineProfile)
	} else {
		fmt.Fprintf(&b, "scenario %s — %d× %s %s on %d %s (%d %s), router %s, %s batching, engine profile %s\n",
			s.Scenario, s.Fleet.Replicas, s.Fleet.Model, layout, s.Fleet.GPUs, s.Fleet.GPU, s.Fleet.Domains, domains,
			s.Fleet.Router, s.Fleet.Batching, s.Fleet.EngineProfile)
	}
	fmt.Fprintf(&b, "simulated %.1f s, %d events, seed %d\n\n", s.Sim.SimulatedSeconds, s.Sim.Events, s.Sim.Seed)
	if s.Sim.Stopped != "" {
		fmt.Fprintf(&b, "STOPPED EARLY: %s\n\n", s.Sim.Stopped)
	}
	r := s.Requests
	fmt.Fprintf(&b, "requests   arrived %d  completed %d  failed %d  shed %d  in flight %d  preempted %d\n\n",
		r.Arrived, r.Completed, r.Failed, r.Shed, r.InFlight, r.Preempted)
	fmt.Fprintf(&b, "%-12s %10s %10s %10s %10s %10s %10s\n", "latency ms", "mean", "p50", "p90", "p95", "p99", "p99.9")
	for _, row := range []struct {
		name string
		d    Dist
	}{{"TTFT", s.LatencyMs.TTFT}, {"TPOT", s.LatencyMs.TPOT}, {"ITL", s.LatencyMs.ITL}, {"end-to-end", s.LatencyMs.E2E}, {"queueing", s.LatencyMs.Queue}} {
		fmt.Fprintf(&b, "%-12s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", row.name, row.d.Mean, row.d.P50, row.d.P90, row.d.P95, row.d.P99, row.d.P999)
	}
	if fo := s.FanOut; fo != nil {
		d := fo.LatencyMs
		fmt.Fprintf(&b, "%-12s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", "fan-out", d.Mean, d.P50, d.P90, d.P95, d.P99, d.P999)
		fmt.Fprintf(&b, "(fan-out: client requests of %d sub-requests each, done when the last is: %d completed, %d failed, %d in flight)\n",
			fo.K, fo.Completed, fo.Failed, fo.InFlight)
	}
	fmt.Fprintf(&b, "\nthroughput  %.2f req/s  %.0f output tok/s  %.0f input tok/s\n",
		s.Throughput.RequestsPerS, s.Throughput.OutputTokensPerS, s.Throughput.InputTokensPerS)
	var terms []string
	if s.Goodput.TTFTSLOMs > 0 {
		terms = append(terms, fmt.Sprintf("TTFT ≤ %g ms", s.Goodput.TTFTSLOMs))
	}
	if s.Goodput.TPOTSLOMs > 0 {
		terms = append(terms, fmt.Sprintf("TPOT ≤ %g ms", s.Goodput.TPOTSLOMs))
	}
	if s.Goodput.E2ESLOMs > 0 {
		terms = append(terms, fmt.Sprintf("end-to-end ≤ %g ms", s.Goodput.E2ESLOMs))
	}
	slo := "no SLO set"
	if len(terms) > 0 {
		slo = "SLO " + strings.Join(terms, ", ")
	}
	att := "n/a"
	if a := s.Goodput.SLOAttainment; a != nil {
		att = fmt.Sprintf("%.2f%%", 100**a)
	}
	fmt.Fprintf(&b, "goodput     %.2f req/s  %.0f output tok/s  attainment %s  (%s)\n",
		s.Goodput.RequestsPerS, s.Goodput.OutputTokensPerS, att, slo)
	fmt.Fprintf(&b, "prefix     hit rate %.1f%% of %d prompt tokens, %d evictions\n",
		100*s.Prefix.HitRate, s.Prefix.PromptTokens, s.Prefix.Evictions)
	fmt.Fprintf(&b, "kv         utilisation %.1f%% mean (+%.1f%% cached), %d blocks/replica, %d preemptions; MFU %.1f%%\n",
		100*s.KV.UtilizationMean, 100*s.KV.CachedFractionMean, s.KV.BlocksPerReplica, s.KV.Preemptions, 100*s.Fleet.MFU)
	perM := "n/a (no good output tokens)"
	if v := s.Cost.USDPerMillionOutputTokens; v != nil {
		perM = fmt.Sprintf("$%.3f", *v)
	}
	fmt.Fprintf(&b, "cost       $%.2f (%.1f GPU-h at $%.2f), %s per 1M good output tokens, $%.0f per month\n",
		s.Cost.USD, s.Cost.GPUHours, s.Cost.PricePerGPUHour, perM, s.Cost.USDPerMonth)
	for _, m := range s.Models {
		att := "no SLO"
		if m.SLOAttainment != nil {
			att = fmt.Sprintf("SLO attainment %.2f%%", 100**m.SLOAttainment)
		}
		fmt.Fprintf(&b, "model      %s (%.0f%% of requests, %d replicas): %d arrived, %d completed, p50/p99 TTFT %.1f/%.1f ms, p99 TPOT %.1f ms, %s\n",
			m.Model, 100*m.Share, m.Replicas, m.Requests.Arrived, m.Requests.Completed, m.TTFT.P50, m.TTFT.P99, m.TPOT.P99, att)
	}
	if sp := s.Spot; sp != nil {
		fmt.Fprintf(&b, "spot       %d replicas: %d interruptions, %.2f replica-h down, %d requests failed by them; $%.2f spot + $%.2f other\n",
			sp.Replicas, sp.Interruptions, sp.DownReplicaHours, sp.FailedRequests, sp.SpotUSD, sp.OtherUSD)
	}
	if as := s.Autoscale; as != nil {
		fmt.Fprintf(&b, "autoscale  %s: %.2f replicas mean (%d–%d), %d scale-ups, %d scale-downs, %d starts of %.0f s each, %.1f GPU-h loading\n",
			as.Policy, as.ReplicasMean, as.ReplicasMin, as.ReplicasMax, as.ScaleUps, as.ScaleDowns, as.Starts, as.ColdStartS, as.LoadingGPUHours)
	}
	rs := s.Resilience
	if rs.Copies > s.Requests.Completed+s.Requests.Failed+s.Requests.InFlight || rs.Timeouts > 0 || rs.Ejections > 0 {
		fmt.Fprintf(&b, "resilience success %.3f%%, hedges %d (%.1f%%), retries %d, timeouts %d, ejections %d, wasted tokens %.1f%%\n",
			100*rs.SuccessRate, rs.Hedges, 100*rs.HedgeRate, rs.Retries, rs.Timeouts, rs.Ejections, 100*rs.WastedTokenFraction)
	}
	if ro := rs.Rollout; ro != nil {
		fmt.Fprintf(&b, "rollout    %s; new version served %d requests, %d errors", ro.State, ro.GreenRequests, ro.GreenErrors)
		if ro.RolledBackS > 0 {
			fmt.Fprintf(&b, "; rolled back %.1f s after its first traffic", ro.DetectionS)
		}
		b.WriteByte('\n')
	}
	if f := s.Failures; f != nil {
		fmt.Fprintf(&b, "failures   %d events hit %d replicas; replica availability %.3f%%, fewest up %d",
			f.Events, f.ReplicaHits, 100*f.Availability, f.MinAvailableR)
		if f.Spares > 0 {
			fmt.Fprintf(&b, "; %d warm spares swapped in %d times, idle $%.2f", f.Spares, f.SparesUsed, s.Cost.Wasted.IdleSparesUSD)
		}
		b.WriteByte('\n')
		if d := f.Decode; d != nil {
			fmt.Fprintf(&b, "           availability above is the prefill pool's; decode pool: %d replica hits, availability %.3f%%, fewest up %d of %d",
				d.ReplicaHits, 100*d.Availability, d.MinAvailableR, d.Replicas)
			if d.Spares > 0 {
				fmt.Fprintf(&b, ", %d warm spares swapped in %d times", d.Spares, d.SparesUsed)
			}
			if s.Disagg != nil {
				fmt.Fprintf(&b, "; %d requests lost their KV with a decode replica and were prefilled again", s.Disagg.DecodeLost)
			}
			b.WriteByte('\n')
		}
	}
	if len(s.Failed) > 0 {
		keys := make([]string, 0, len(s.Failed))
		for k := range s.Failed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "failed     %d: %s\n", s.Failed[k], k)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (s *Summary) writeTrainingTable(w io.Writer) error {
	t := s.Training
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s — training job on %d GPUs for %.0f h, seed %d\n\n", s.Scenario, t.GPUs, t.WallHours, s.Sim.Seed)
	fmt.Fprintf(&b, "ETTR        %.2f%% (checkpoint every %.0f s of compute)\n", 100*t.ETTR, t.CheckpointIntervalS)
	fmt.Fprintf(&b, "failures    %d hit the job, %d interrupted it, %d fail-slow; restarts waited for spares %d times\n",
		t.Failures, t.Interruptions, t.FailSlow, t.SpareWaits)
	for _, c := range t.InterruptionsByCategory {
		fmt.Fprintf(&b, "            %6d  %s\n", c.Incidents, c.Name)
	}
	if t.Retired > 0 {
		fmt.Fprintf(&b, "retired     %d servers after repeated failures (%d lemons), %.0f GPU-h of capacity out of the pool\n", t.Retired, t.RetiredLemons, t.RetiredGPUHours)
	}
	if t.Planned > 0 {
		fmt.Fprintf(&b, "planned     %d planned stops (maintenance: a checkpoint, then a restart), besides the failures\n", t.Planned)
	}
	l := t.Lost
	fmt.Fprintf(&b, "lost GPU-h  %.0f = recompute %.0f + restart %.0f + detection %.0f + waiting for spares %.0f + checkpoint writes %.0f + slowdown %.0f\n",
		l.Total, l.Recompute, l.Restart, l.Detection, l.WaitingSpares, l.CheckpointWrites, l.Slowdown)
	fmt.Fprintf(&b, "cost        $%.0f for the run at $%.2f/GPU-h; lost $%.0f, i.e. $%.0f per 720-h month (stragglers: $%.0f per month)\n",
		t.CostUSD, t.PricePerGPUHour, t.LostUSD, t.LostUSDPerMonth, t.SlowdownUSDPerMonth)
	if t.Evictions > 0 || t.OverEvictedHosts > 0 {
		fmt.Fprintf(&b, "evicted     %d stragglers (a spare in each one's place), %d healthy hosts over-evicted\n", t.Evictions, t.OverEvictedHosts)
	}
	for _, n := range t.Unconfirmed {
		fmt.Fprintf(&b, "UNCONFIRMED %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func ptr(v float64) *float64 { return &v }

// oneIsZero is n, or 0 (omitted from the summary) for 1.
func oneIsZero(n int) int {
	if n == 1 {
		return 0
	}
	return n
}

// AutoscaleStats reports what the autoscaler did and what the fleet it
// left cost (cost.usd and cost.gpu_hours already count provisioned time
// only).
type AutoscaleStats struct {
	Policy string `json:"policy"`
	// ReplicasMean is the time-average of provisioned replicas (loading,
	// serving or draining); ReplicasMin/Max the fewest and most. Warm
	// spares are not counted (outside the autoscaler's range; their cost
	// is in the bill).
	ReplicasMean float64 `json:"replicas_mean"`
	ReplicasMin  int     `json:"replicas_min"`
	ReplicasMax  int     `json:"replicas_max"`
	// ScaleUps and ScaleDowns count evaluations that changed the fleet.
	ScaleUps   int `json:"scale_ups"`
	ScaleDowns int `json:"scale_downs"`
	// Starts counts replicas started; ColdStartS is one start's length when
	// it loads alone (ColdStartConfig.Duration with one loader, no peers
	// for "peer": the network path).
	Starts     int     `json:"starts"`
	ColdStartS float64 `json:"cold_start_s"`
	// GPUHours is provisioned GPU-hours; LoadingGPUHours the part spent
	// starting (paid, serving nothing).
	GPUHours        float64 `json:"gpu_hours"`
	LoadingGPUHours float64 `json:"loading_gpu_hours"`
}

// provisionedReplicaNs is a pool's replica-time provisioned (in any phase
// but parked) up to the run's end.
func provisionedReplicaNs(p *fleet.Pool, end sim.Time) float64 {
	var ns sim.Time
	for i := range p.Replicas {
		ns += p.Life.ProvisionedNs(i, end)
	}
	return float64(ns)
}

// autoscaleStats is the autoscale block of pool p, scaled by a as cfg
// says, of gpus GPUs per replica (each replica's own in a fleet of
// groups), paid gpuHours.
func autoscaleStats(r *Result, p *fleet.Pool, a *fleet.Autoscaler, cfg policies.AutoscaleConfig, gpus int, groups bool, gpuHours, secs float64) *AutoscaleStats {
	starts := 0
	for _, e := range a.Events {
		if e.Event == "start" {
			starts++
		}
	}
	loading := a.StartingReplicaNs / 1e9 * float64(gpus) / 3600
	if groups {
		loading = a.StartingGPUNs / 1e9 / 3600
	}
	// The autoscaler's range: the pool's replicas but its warm spares
	// (as many at every moment, never parked).
	ranged := provisionedReplicaNs(p, r.EndTime) - float64(a.Spares())*float64(r.EndTime)
	return &AutoscaleStats{Policy: cfg.Policy, ReplicasMean: results.Round6(Ratio(ranged/1e9, secs)),
		ReplicasMin: a.MinSeen, ReplicasMax: a.MaxSeen, ScaleUps: a.ScaleUps, ScaleDowns: a.ScaleDowns, Starts: starts,
		ColdStartS: results.Round6(cfg.ColdStart.Duration(a.WeightBytesPerGPU(), gpus, 0).Seconds()), GPUHours: results.Round6(gpuHours),
		LoadingGPUHours: results.Round6(loading)}
}

// GroupStats is one replica group of a heterogeneous fleet.
type GroupStats struct {
	Name     string `json:"name"`
	Model    string `json:"model"`
	GPU      string `json:"gpu"`
	TP       int    `json:"tp"`
	Replicas int    `json:"replicas"`
	GPUs     int    `json:"gpus"`
	// Capacity is a replica's relative decode throughput (1: the fastest
	// group's), what the weighted router divides load by.
	Capacity float64 `json:"capacity"`
	// OutputTokens is what this group's replicas generated (losing hedge
	// copies included).
	OutputTokens int64 `json:"output_tokens"`
	// BusyFraction, MFU and KV utilisation over the group's replicas.
	BusyFraction     float64 `json:"busy_fraction"`
	MFU              float64 `json:"mfu"`
	KVUtilization    float64 `json:"kv_utilization_mean"`
	BlocksPerReplica int64   `json:"kv_blocks_per_replica"`
	Tier             string  `json:"tier"`
	PricePerGPUHour  float64 `json:"price_per_gpu_hour"`
	USD              float64 `json:"usd"`
	// Engine is the group's engine settings, present when the group has
	// its own ([cluster.groups.replica]); absent, the fleet's apply.
	Engine *GroupEngine `json:"engine,omitempty"`
	// DownReplicas is how many of its replicas were in repair for the
	// whole run (down_replicas); absent when none.
	DownReplicas int `json:"down_replicas,omitempty"`
	// SparesFor, on a group of warm spares ([[cluster.groups]] spares,
	// with [failures]), names the group whose replicas they stand in for;
	// absent on the scenario's groups. Its output tokens, busy time and
	// USD are the spares' (paid for the whole run, as servers kept warm).
	SparesFor string `json:"spares_for,omitempty"`
}

// GroupEngine is a group's own engine settings: [cluster.replica] with the
// group's [cluster.groups.replica] keys over it.
type GroupEngine struct {
	Batching             string  `json:"batching"`
	MaxSeqs              int     `json:"max_seqs"`
	MaxBatchedTokens     int     `json:"max_batched_tokens"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	KVAdmission          string  `json:"kv_admission"`
	Weights              string  `json:"weights"`
	KVDType              string  `json:"kv_dtype"`
	EngineProfile        string  `json:"engine_profile"`
}

// idleSparesUSD is what the primary pool's warm spares cost while they
// waited: at price per GPU-hour, or in a fleet of groups at each spare's
// own group's TP and price.
func idleSparesUSD(r *Result, price float64) float64 {
	f, sc := r.Fleet, r.Scenario
	if len(f.Groups) == 0 {
		return r.IdleSpareS * float64(sc.Cluster.GPUsPerReplica()) / 3600 * price
	}
	usd := 0.0
	for _, g := range f.Groups {
		perS := float64(g.TP) / 3600 * sc.GroupPrice(g.GroupConfig)
		for i := g.First; i < g.First+g.Replicas && i < len(r.IdleSpareSOf); i++ {
			usd += r.IdleSpareSOf[i] * perS
		}
	}
	return usd
}

// summarizeGroups fills the per-group statistics and replaces the
// fleet-wide figures that a single GPU type would give (MFU, KV
// utilisation, the GPU name) by the fleet's own.
func summarizeGroups(s *Summary, r *Result, bl *Billing, secs float64) {
	f, sc := r.Fleet, r.Scenario
	var names []string
	var flopsAll, peakAll, usedAll, totalAll float64
	for _, g := range f.Groups {
		gs := GroupStats{Name: g.Name, Model: g.Model, GPU: g.GPU, TP: g.TP, Replicas: g.Replicas, GPUs: g.Place.GPUs,
			Capacity: results.Round6(g.Capacity), BlocksPerReplica: g.Memory.KVBlocks, Tier: sc.GroupTier(g.GroupConfig),
			PricePerGPUHour: sc.GroupPrice(g.GroupConfig), DownReplicas: g.Down(), SparesFor: g.SparesFor}
		if rc := g.Replica; rc != nil {
			gs.Engine = &GroupEngine{Batching: rc.Batching, MaxSeqs: rc.MaxSeqs, MaxBatchedTokens: rc.MaxBatchedTokens,
				GPUMemoryUtilization: rc.GPUMemoryUtilization, KVAdmission: rc.KVAdmission, Weights: rc.Weights,
				KVDType: rc.KVDType, EngineProfile: hw.ProfileLabel(rc.Perf.Profile)}
		}
		var busy, flops, used, total float64
		for i := g.First; i < g.First+g.Replicas; i++ {
			rp := f.Replicas[i]
			gs.OutputTokens += rp.Stats.DecodeTokens
			busy += float64(rp.Stats.BusyNs)
			flops += rp.Stats.FLOPs * float64(g.TP)
			used += rp.Stats.KVUsedBlockNs
			total += float64(rp.KV().Total()) * float64(r.EndTime)
		}
		peak := float64(g.Place.GPUs) * g.PeakFLOPS * secs
		if a := f.Autoscaler; a != nil && gs.Tier != scenario.TierReserved {
			// Autoscaled: the group's GPUs could compute while provisioned;
			// reserved ones are counted for the whole run, as they are paid.
			gpuS := 0.0
			for i := g.First; i < g.First+g.Replicas; i++ {
				gpuS += f.Life.ProvisionedNs(i, r.EndTime).Seconds() * float64(g.TP)
			}
			peak = gpuS * g.PeakFLOPS
		}
		gs.BusyFraction = results.Round6(Ratio(busy, float64(g.Replicas)*float64(r.EndTime)))
		gs.MFU = results.Round6(Ratio(flops, peak))
		gs.KVUtilization = results.Round6(Ratio(used, total))
		gs.USD = results.Round6(bl.Primary.Bill(g.First, g.First+g.Replicas, r.EndTime, nil).USD)
		s.Fleet.Groups = append(s.Fleet.Groups, gs)
		if !slices.Contains(names, g.GPU) {
			names = append(names, g.GPU)
		}
		flopsAll, peakAll, usedAll, totalAll = flopsAll+flops, peakAll+peak, usedAll+used, totalAll+total
	}
	s.Fleet.GPU = strings.Join(names, "+")
	s.Fleet.MFU = results.Round6(Ratio(flopsAll, peakAll))
	s.KV.UtilizationMean = results.Round6(Ratio(usedAll, totalAll))
}

// SpotStats reports the spot replicas ([spot]) and their interruptions; the
// bill is split between the spot and on-demand slots (cost.usd is their
// sum, before energy).
type SpotStats struct {
	Replicas      int `json:"replicas"`
	Interruptions int `json:"interruptions"`
	// DownReplicaHours is spot replica-hours out of service (notice,
	// replacement).
	DownReplicaHours float64 `json:"down_replica_hours"`
	// FailedRequests is requests whose last copy a spot kill failed.
	FailedRequests int64   `json:"failed_requests"`
	SpotUSD        float64 `json:"spot_usd"`
	// OtherUSD is the other slots at the [cost] tier's price.
	OtherUSD float64 `json:"other_usd"`
	// FallbackUSD is the [fallback] pool's GPUs (absent without one):
	// spot_usd + other_usd + fallback_usd is the GPU bill.
	FallbackUSD float64 `json:"fallback_usd,omitempty"`
	// Group and PriceFraction, in a fleet of groups, are the group whose
	// last Replicas are on spot and their price over the group's
	// (spot.group, spot.price_fraction); absent for a fleet of one kind.
	// With spot replicas in several groups (their spot_replicas), Groups
	// lists them instead of Group.
	Group         string           `json:"group,omitempty"`
	PriceFraction float64          `json:"price_fraction,omitempty"`
	Groups        []SpotGroupStats `json:"groups,omitempty"`
}

// SpotGroupStats is one group's spot replicas, when several groups have
// some: how many, and what they cost at the spot price.
type SpotGroupStats struct {
	Name     string  `json:"name"`
	Replicas int     `json:"replicas"`
	SpotUSD  float64 `json:"spot_usd"`
}
