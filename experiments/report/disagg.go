package report

import (
	"github.com/fleetsim/fleetsim/experiments/results"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// TTFTStages names the stages of a disaggregated fleet's TTFT, in order
// (summary.json's disagg.ttft_split_ms keys; cdf.csv's ttft_STAGE metrics).
var TTFTStages = []string{"prefill_queue", "prefill", "decode_wait", "transfer", "decode_first", "to_client"}

// TTFTSplitSketches is the run's TTFT stage sketches by stage, nil when
// co-located.
func TTFTSplitSketches(r *Result) map[string]*quantile.Sketch {
	if r.Fleet == nil || r.Fleet.Disagg == nil {
		return nil
	}
	sp := r.Fleet.Disagg.Split
	return map[string]*quantile.Sketch{"prefill_queue": sp.PrefillQueue, "prefill": sp.Prefill,
		"decode_wait": sp.DecodeWait, "transfer": sp.Transfer, "decode_first": sp.DecodeFirst, "to_client": sp.ToClient}
}

// DisaggSummary is summary.json's "disagg" block (disaggregated fleets
// only). With it, fleet.gpus and cost count both pools; fleet.mfu,
// fleet.busy_fraction, kv and prefix_cache are the prefill pool's.
type DisaggSummary struct {
	Link           string `json:"link"`
	PrefillGPUs    int    `json:"prefill_gpus"`
	DecodeGPU      string `json:"decode_gpu"`
	DecodeTP       int    `json:"decode_tp"`
	DecodeReplicas int    `json:"decode_replicas"`
	DecodeGPUs     int    `json:"decode_gpus"`
	// Transfers and KVBytesMoved: completed KV transfers and their bytes
	// (sum over transferred requests of wire bytes per token × prompt
	// tokens), in all and per link kind.
	Transfers       int64   `json:"transfers"`
	KVBytesMoved    float64 `json:"kv_bytes_moved"`
	NVLinkTransfers int64   `json:"nvlink_transfers"`
	RDMATransfers   int64   `json:"rdma_transfers"`
	NVLinkBytes     float64 `json:"nvlink_bytes"`
	RDMABytes       float64 `json:"rdma_bytes"`
	// Backpressure: requests that waited holding their prefill KV for a
	// decode replica with free KV, the most at once, and the KV blocks
	// held that way on average over the run.
	Backpressured  int64   `json:"backpressured"`
	WaitingPeak    int     `json:"waiting_peak"`
	HeldBlocksMean float64 `json:"held_blocks_mean"`
	// Waste: requests prefilled again because their KV was lost with a
	// replica, and those prompt tokens; transfers sent elsewhere because
	// their decode replica failed under them.
	RePrefills      int64 `json:"reprefills"`
	RePrefillTokens int64 `json:"reprefill_tokens"`
	Rerouted        int64 `json:"rerouted"`
	// DecodeLost is the re-prefills whose KV was lost with a decode
	// replica (absent when none was).
	DecodeLost int64 `json:"decode_lost,omitempty"`
	// DecodeProbes and DecodeEjections are the health probes of the decode
	// pool and the decode replicas they ejected (and restarted); absent
	// without probes.
	DecodeProbes    int64 `json:"decode_probes,omitempty"`
	DecodeEjections int64 `json:"decode_ejections,omitempty"`
	// DecodeIsolationMsMax is the longest a faulty decode replica served
	// before it left the decode choice (a probe's ejection, a warm spare
	// taking its place); absent when none was isolated.
	DecodeIsolationMsMax float64 `json:"decode_isolation_ms_max,omitempty"`
	// DecodeBreakerOpens is the times the [policies.breaker] of a decode
	// replica opened (took it out of the decode choice); absent when none
	// did.
	DecodeBreakerOpens int64 `json:"decode_breaker_opens,omitempty"`
	// Autoscale is the decode pool's autoscaling ([disagg.autoscale]; its
	// gpu_hours are the decode pool's paid GPU-hours), Spot its spot
	// replicas (spot.decode_replicas: their interruptions, replica-hours
	// out of service, spot_usd and the decode pool's other_usd); absent
	// without.
	Autoscale *AutoscaleStats `json:"autoscale,omitempty"`
	Spot      *SpotStats      `json:"spot,omitempty"`
	// DecodeKVUtilization and DecodeBusyFraction are the decode pool's.
	DecodeKVUtilization float64 `json:"decode_kv_utilization"`
	DecodeBusyFraction  float64 `json:"decode_busy_fraction"`
	DecodePreemptions   int64   `json:"decode_preemptions"`
	// TTFTSplitMs splits the TTFT of completed requests: prefill_queue,
	// prefill, decode_wait (backpressure), transfer, decode_first (decode
	// queue and first step), to_client (the output lag and the stream). The
	// six means add up to latency_ms.ttft.mean.
	TTFTSplitMs map[string]Dist `json:"ttft_split_ms"`
}

// decodeIsolationMsMax is the decode pool's longest time to isolate a
// fault, in milliseconds (0 when none was isolated).
func decodeIsolationMsMax(d *fleet.Disagg) float64 {
	var iso int64
	for _, x := range d.ProbeStats.IsolationNs {
		iso = max(iso, x)
	}
	return results.Round6(sim.Time(iso).Milliseconds())
}

// decodePrice is what a decode-pool GPU costs per hour
// (scenario.DecodePrice: the one SizeMix prices the decode pool at).
func decodePrice(sc *scenario.Scenario) float64 { return sc.DecodePrice() }

// summarizeDisagg adds the disaggregated fleet's block to s and counts
// the decode pool's GPUs in fleet and cost, and its NVLink domains in
// fleet.nvlink_domains (the run header's).
func summarizeDisagg(s *Summary, r *Result, bl *Billing) {
	d := r.Fleet.Disagg
	if d == nil {
		return
	}
	sc := r.Scenario
	dc := sc.Disagg
	dc.ResolveDefaults(sc.Cluster)
	secs := r.EndTime.Seconds()
	end := float64(r.EndTime)
	var used, busy, total float64
	var preempt, wasted int64
	var flops float64
	for _, rp := range d.Decode.Replicas {
		wasted += rp.Stats.WastedDecodeTokens
		flops += rp.Stats.FLOPs * float64(d.DecodeReplicaTP())
		used += rp.Stats.KVUsedBlockNs
		busy += float64(rp.Stats.BusyNs)
		total += float64(rp.KV().Total()) * end
		preempt += rp.Stats.Preemptions
	}
	n := float64(len(d.Decode.Replicas))
	st := d.Stats
	out := &DisaggSummary{Link: dc.Link, PrefillGPUs: s.Fleet.GPUs, DecodeGPU: dc.Decode.GPU, DecodeTP: dc.Decode.TP,
		DecodeReplicas: dc.Decode.Replicas, DecodeGPUs: d.DecodeGPUs,
		Transfers: st.Transfers, KVBytesMoved: results.Round6(st.BytesMoved),
		NVLinkTransfers: st.TransfersByLink[0], RDMATransfers: st.TransfersByLink[1],
		NVLinkBytes: results.Round6(st.BytesByLink[0]), RDMABytes: results.Round6(st.BytesByLink[1]),
		Backpressured: st.Backpressured, WaitingPeak: st.WaitingPeak, HeldBlocksMean: results.Round6(Ratio(st.HeldBlockNs, end)),
		RePrefills: st.RePrefills, RePrefillTokens: st.RePrefillTokens, Rerouted: st.Rerouted, DecodeLost: st.DecodeLost,
		DecodeProbes: d.ProbeStats.Probes, DecodeEjections: d.ProbeStats.Ejections, DecodeIsolationMsMax: decodeIsolationMsMax(d),
		DecodeBreakerOpens:  d.Decode.BreakerOpens,
		DecodeKVUtilization: results.Round6(Ratio(used, total)), DecodeBusyFraction: results.Round6(Ratio(busy, n*end)),
		DecodePreemptions: preempt,
		TTFTSplitMs:       map[string]Dist{}}
	for st, sk := range TTFTSplitSketches(r) {
		out.TTFTSplitMs[st] = dist(sk)
	}
	s.Disagg = out

	g := sc.Catalog().GPUs[dc.Decode.GPU]
	bill := bl.Decode.All(r.EndTime)
	hours := bill.GPUHours
	if a := d.Autoscaler; a != nil {
		out.Autoscale = autoscaleStats(r, d.Decode, a, sc.Disagg.Autoscale, d.DecodeReplicaTP(), false, hours, secs)
	}
	if sp := d.Spot; sp != nil {
		spot := bl.Decode.Bill(0, len(d.Decode.Replicas), r.EndTime, func(x Rate) bool { return x.Spot })
		out.Spot = &SpotStats{Replicas: sc.DecodeSpotReplicas(), Interruptions: sp.Interruptions,
			DownReplicaHours: results.Round6(float64(d.Decode.Life.TotalNs(fleet.PhaseInterrupted, r.EndTime)) / 1e9 / 3600),
			SpotUSD:          results.Round6(spot.USD), OtherUSD: results.Round6(bill.USD - spot.USD)}
	}
	watts := sc.Cost.WattsPerGPU
	if watts == 0 {
		watts = g.TDPWatts
	}
	kwh := hours * watts * sc.Cost.PUE / 1000
	usd := bill.USD
	usdPerMonth := Ratio(usd*3600, secs) * HoursPerMonth
	if sc.Cost.Power {
		usd += kwh * sc.Cost.USDPerKWh
	}
	c := &s.Cost
	if wasted > 0 {
		// Work discarded with the decode pool's failed copies: their
		// decoded tokens (the prompt KV they held was transferred, not
		// computed there; prefilling it again is recompute), as a share of
		// the decode pool's FLOPs and its $.
		perToken := 2 * r.Fleet.ParamsPerGPU * float64(sc.Cluster.GPUsPerReplica())
		c.Wasted.DiscardedUSD = results.Round6(c.Wasted.DiscardedUSD + Ratio(float64(wasted)*perToken, flops)*usd)
	}
	c.USD = results.Round6(c.USD + usd)
	c.GPUHours = results.Round6(c.GPUHours + hours)
	c.EnergyKWh = results.Round6(c.EnergyKWh + kwh)
	c.EnergyUSD = results.Round6(c.EnergyKWh * sc.Cost.USDPerKWh)
	c.USDPerMonth = results.Round6(c.USDPerMonth + usdPerMonth)
	c.USDPerMillionOutputRaw = results.Round6(Ratio(c.USD*1e6, float64(r.Rec.OutputTokens)))
	if r.Rec.GoodOutputTokens > 0 {
		c.USDPerMillionOutputTokens = ptr(results.Round6(c.USD * 1e6 / float64(r.Rec.GoodOutputTokens)))
	}
	s.Fleet.GPUs += d.DecodeGPUs
	s.Fleet.Domains = d.NVLinkDomains()
}
