package experiments

import (
	"errors"
	"fmt"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/internal/tomlx"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// errDisaggSize is what `size` says of a disaggregated scenario: it
// searches one pool size and prices one pool.
var errDisaggSize = errors.New("a disaggregated fleet has two pool sizes: size it with SizeMix (fleetsim size does)")

// DisaggScenario is a scenario's [disagg] table: disaggregated prefill and
// decode pools (models.DisaggConfig) and the decode pool's router.
type DisaggScenario struct {
	fleet.DisaggConfig
	// Router chooses the decode replica for each prefilled request among
	// those with room for its KV ([disagg.router], the keys of [router]).
	// Default "least-outstanding".
	Router policies.RouterConfig `toml:"router"`
	// Faults are scripted faults on decode replicas ([[disagg.faults]], the
	// keys of [[faults]] with replica indexing the decode pool), in the
	// modes DecodeFaultModes. A decode replica that fails loses its
	// requests' KV; they are prefilled again. [policies.probe] watches the
	// decode pool as it does the prefill pool; without deep probes a hang
	// needs duration_s > 0 (nothing else would end it), and a crash with
	// restart_s = 0 stays down unless a probe restarts it.
	Faults []failures.Scripted `toml:"faults"`
}

// DecodeFaultModes are the scripted fault modes a decode replica takes.
var DecodeFaultModes = []string{failures.Fail, failures.Hang, failures.OOM, failures.Slow}

// DefaultDisaggScenario is [disagg] with every default (off).
func DefaultDisaggScenario() DisaggScenario {
	return DisaggScenario{DisaggConfig: fleet.DefaultDisaggConfig(), Router: policies.DefaultRouterConfig()}
}

// disaggCluster is the prefill pool as the runner builds it: the cluster
// with the failures' warm spares.
func (s *Scenario) disaggCluster() fleet.FleetConfig {
	c := s.Cluster
	if s.Failures.Enabled && s.Failures.Spares > 0 {
		c.Replicas += s.Failures.Spares
	}
	return c
}

// decodeReplicas is the decode pool as the runner builds it: its serving
// replicas and the failures' warm decode spares.
func (s *Scenario) decodeReplicas() int {
	n := s.Disagg.Decode.Replicas
	if s.Failures.Enabled && s.Failures.DecodeSpares > 0 {
		n += s.Failures.DecodeSpares
	}
	return n
}

// validateDisagg records the problems of [disagg] when it is enabled.
func (s *Scenario) validateDisagg(ps *config.Problems) {
	d := &s.Disagg
	if !d.Enabled {
		if s.Failures.Enabled && s.Failures.DecodeSpares > 0 {
			ps.Add("failures.decode_spares", "needs a disaggregated fleet ([disagg] enabled = true), found %d", s.Failures.DecodeSpares)
		}
		return
	}
	cluster := s.disaggCluster()
	d.ResolveDefaults(cluster)
	dv := d.DisaggConfig
	dv.Decode.Replicas = s.decodeReplicas()
	dv.Validate(s.Catalog(), cluster, "disagg", ps)
	d.Router.Validate("disagg.router", ps)
	if s.Fallback.Enabled {
		ps.Add("disagg.enabled", "cannot be combined with [fallback] yet")
	}
	if s.Rollout.Enabled {
		ps.Add("disagg.enabled", "cannot be combined with [rollout] yet")
	}
	// The handoff's topology and wire bytes assume dense TP-only replicas
	// of one kind that stay provisioned.
	for _, c := range []struct {
		key, what string
		on        bool
	}{
		{"cluster.groups", "[[cluster.groups]]", len(s.Cluster.Groups) > 0},
		{"autoscale.enabled", "[autoscale]", s.Autoscale.Enabled},
		{"spot.replicas", "[spot]", s.Spot.Replicas > 0},
	} {
		if c.on {
			ps.Add(c.key, "cannot be combined with [disagg] yet (%s)", c.what)
		}
	}
	if s.Cluster.Replica.Spec.Enabled {
		// The prefill pool computes one token per request: nothing to
		// speculate. The decode pool takes it.
		ps.Add("cluster.replica.speculative.enabled", "the prefill pool of a disaggregated fleet has no decode steps to speculate on; set [disagg.decode.replica.speculative] instead")
	}
	if l := s.Cluster.Layout(); l.DP != 1 || l.EP != 1 || l.PP != 1 {
		ps.Add("disagg.enabled", "cannot be combined with cluster.dp, cluster.ep or cluster.pp yet (the KV handoff assumes TP-only replicas)")
	}
	if l := d.Decode.Layout(); l.DP != 1 || l.EP != 1 || l.PP != 1 {
		ps.Add("disagg.decode", "dp, ep and pp must be 1 for now (the KV handoff assumes TP-only replicas), found dp = %d, ep = %d, pp = %d", l.DP, l.EP, l.PP)
	}
	for i := range d.Faults {
		fc := &d.Faults[i]
		key := fmt.Sprintf("disagg.faults.%d", i)
		fc.Validate(key, d.Decode.Replicas, ps)
		ok := false
		for _, m := range DecodeFaultModes {
			ok = ok || fc.Mode == m
		}
		if !ok {
			ps.Add(config.Key(key, "mode"), "a decode replica takes one of %v for now, found %q", DecodeFaultModes, fc.Mode)
		}
		if fc.Mode == failures.Hang && !(fc.DurationS > 0) && s.Policies.Probe.Kind != "deep" {
			ps.Add(config.Key(key, "duration_s"), "a decode replica's hang needs a duration > 0 unless deep probes ([policies.probe] kind = \"deep\") watch the pools, found %v", fc.DurationS)
		}
	}
	// Stochastic failures fall on one topology holding both pools: the
	// decode pool's GPUs after the prefill pool's, in domains of one size.
	if s.Failures.Enabled {
		cat := s.Catalog()
		gp, okP := cat.GPUs[cluster.GPU]
		gd, okD := cat.GPUs[d.Decode.GPU]
		if okP && okD && gp.DomainGPUs != gd.DomainGPUs {
			ps.Add("disagg.decode.gpu", "[failures] on a disaggregated fleet needs both pools' GPUs in NVLink domains of one size (one failure topology), found %s (%d GPUs) and %s (%d GPUs)",
				gp.Name, gp.DomainGPUs, gd.Name, gd.DomainGPUs)
		}
	}
}

// applyDisaggFaultDefaults gives each [[disagg.faults]] table the defaults
// of the keys it does not set, as applyFaultDefaults does for [[faults]].
func applyDisaggFaultDefaults(sc *Scenario, doc *tomlx.Doc) {
	def := failures.DefaultScripted()
	for i := range sc.Disagg.Faults {
		f := &sc.Disagg.Faults[i]
		has := func(k string) bool { return doc != nil && doc.Has(fmt.Sprintf("disagg.faults.%d.%s", i, k)) }
		if !has("factor") {
			f.Factor = def.Factor
		}
		if !has("restart_s") {
			f.RestartS = def.RestartS
		}
		if !has("cold_start_s") {
			f.ColdStartS = def.ColdStartS
		}
	}
}

// injectDecodeFault schedules scripted fault fc on decode replica j of d.
func injectDecodeFault(eng *sim.Engine, d *fleet.Disagg, j int, fc failures.Scripted) {
	r := d.Decode[j]
	at := sim.FromSeconds(fc.AtS)
	switch fc.Mode {
	case failures.Fail, failures.OOM:
		reason := engine.FailCrashed
		if fc.Mode == failures.OOM {
			reason = engine.FailOOM
		}
		cold := sim.FromSeconds(fc.ColdStartS)
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			if !r.Up() {
				return
			}
			d.DecodeMarkFault(j, now)
			r.Fail(now, reason)
			if fc.RestartS > 0 {
				eng.Schedule(now+sim.FromSeconds(fc.RestartS), sim.PriorityFailure, func(t sim.Time) {
					if !r.Up() && !r.Recovering() {
						r.Recover(t, cold, nil)
					}
				})
			}
		})
	case failures.Hang:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			d.DecodeMarkFault(j, now)
			r.Hang(now)
		})
		if fc.DurationS > 0 {
			eng.Schedule(at+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(now sim.Time) {
				if r.Hung() {
					r.Unhang(now)
				}
			})
		}
	case failures.Slow:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			d.DecodeMarkFault(j, now)
			r.SetSlow(fc.Factor)
		})
		if fc.DurationS > 0 {
			eng.Schedule(at+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(sim.Time) { r.SetSlow(1) })
		}
	}
}

// enableDisagg makes fleet disaggregated when the scenario says so;
// cluster is the prefill pool as built.
func enableDisagg(eng *sim.Engine, fl *fleet.Fleet, sc *Scenario, cluster fleet.FleetConfig) error {
	d := sc.Disagg
	if !d.Enabled {
		return nil
	}
	d.ResolveDefaults(cluster)
	d.Decode.Replicas = sc.decodeReplicas() // warm spares beyond the serving decode replicas
	router, err := policies.NewRouter(d.Router, max(d.Decode.Replicas, 1), sim.NewStream(sc.Seed, streams.DecodeRouter))
	if err != nil {
		return err
	}
	if err := fl.EnableDisagg(sc.Catalog(), d.DisaggConfig, cluster, router, "disagg"); err != nil {
		return err
	}
	for _, fc := range d.Faults {
		injectDecodeFault(eng, fl.Disagg, fc.Replica, fc)
	}
	return nil
}

// ttftStages names the stages of a disaggregated fleet's TTFT, in order
// (summary.json's disagg.ttft_split_ms keys; cdf.csv's ttft_STAGE metrics).
var ttftStages = []string{"prefill_queue", "prefill", "decode_wait", "transfer", "decode_first"}

// ttftSplitSketches is the run's TTFT stage sketches by stage, nil when
// co-located.
func ttftSplitSketches(r *Result) map[string]*quantile.Sketch {
	if r.Fleet == nil || r.Fleet.Disagg == nil {
		return nil
	}
	sp := r.Fleet.Disagg.Split
	return map[string]*quantile.Sketch{"prefill_queue": sp.PrefillQueue, "prefill": sp.Prefill,
		"decode_wait": sp.DecodeWait, "transfer": sp.Transfer, "decode_first": sp.DecodeFirst}
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
	// DecodeKVUtilization and DecodeBusyFraction are the decode pool's.
	DecodeKVUtilization float64 `json:"decode_kv_utilization"`
	DecodeBusyFraction  float64 `json:"decode_busy_fraction"`
	DecodePreemptions   int64   `json:"decode_preemptions"`
	// TTFTSplitMs splits the TTFT of completed requests: prefill_queue,
	// prefill, decode_wait (backpressure), transfer, decode_first (decode
	// queue and first step). The five means add up to latency_ms.ttft.mean.
	TTFTSplitMs map[string]Dist `json:"ttft_split_ms"`
}

// decodeIsolationMsMax is the decode pool's longest time to isolate a
// fault, in milliseconds (0 when none was isolated).
func decodeIsolationMsMax(d *fleet.Disagg) float64 {
	var iso int64
	for _, x := range d.ProbeStats.IsolationNs {
		iso = max(iso, x)
	}
	return round6(sim.Time(iso).Milliseconds())
}

// decodePrice is what a decode-pool GPU costs per hour: its GPU's price
// for the tier (the scenario's price_per_gpu_hour when it is the
// cluster's GPU).
func decodePrice(sc *Scenario) float64 {
	dc := sc.Disagg
	dc.ResolveDefaults(sc.Cluster)
	if dc.Decode.GPU == sc.Cluster.GPU {
		return sc.Price()
	}
	g := sc.Catalog().GPUs[dc.Decode.GPU]
	if sc.Cost.Tier == TierReserved {
		return g.ReservedPricePerGPUHour
	}
	return g.PricePerGPUHour
}

// summarizeDisagg adds the disaggregated fleet's block to s and counts
// the decode pool's GPUs in fleet and cost, and its NVLink domains in
// fleet.nvlink_domains (the run header's).
func summarizeDisagg(s *Summary, r *Result) {
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
	for _, rp := range d.Decode {
		wasted += rp.Stats.WastedDecodeTokens
		flops += rp.Stats.FLOPs * float64(d.DecodeReplicaTP())
		used += rp.Stats.KVUsedBlockNs
		busy += float64(rp.Stats.BusyNs)
		total += float64(rp.KV().Total()) * end
		preempt += rp.Stats.Preemptions
	}
	n := float64(len(d.Decode))
	st := d.Stats
	out := &DisaggSummary{Link: dc.Link, PrefillGPUs: s.Fleet.GPUs, DecodeGPU: dc.Decode.GPU, DecodeTP: dc.Decode.TP,
		DecodeReplicas: dc.Decode.Replicas, DecodeGPUs: d.DecodeGPUs,
		Transfers: st.Transfers, KVBytesMoved: round6(st.BytesMoved),
		NVLinkTransfers: st.TransfersByLink[0], RDMATransfers: st.TransfersByLink[1],
		NVLinkBytes: round6(st.BytesByLink[0]), RDMABytes: round6(st.BytesByLink[1]),
		Backpressured: st.Backpressured, WaitingPeak: st.WaitingPeak, HeldBlocksMean: round6(ratio(st.HeldBlockNs, end)),
		RePrefills: st.RePrefills, RePrefillTokens: st.RePrefillTokens, Rerouted: st.Rerouted, DecodeLost: st.DecodeLost,
		DecodeProbes: d.ProbeStats.Probes, DecodeEjections: d.ProbeStats.Ejections, DecodeIsolationMsMax: decodeIsolationMsMax(d),
		DecodeBreakerOpens:  st.DecodeBreakerOpens,
		DecodeKVUtilization: round6(ratio(used, total)), DecodeBusyFraction: round6(ratio(busy, n*end)),
		DecodePreemptions: preempt,
		TTFTSplitMs:       map[string]Dist{}}
	for st, sk := range ttftSplitSketches(r) {
		out.TTFTSplitMs[st] = dist(sk)
	}
	s.Disagg = out

	g := sc.Catalog().GPUs[dc.Decode.GPU]
	price := decodePrice(sc)
	gpus := float64(d.DecodeGPUs)
	hours := gpus * secs / 3600
	watts := sc.Cost.WattsPerGPU
	if watts == 0 {
		watts = g.TDPWatts
	}
	kwh := hours * watts * sc.Cost.PUE / 1000
	usd := hours * price
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
		c.Wasted.DiscardedUSD = round6(c.Wasted.DiscardedUSD + ratio(float64(wasted)*perToken, flops)*usd)
	}
	c.USD = round6(c.USD + usd)
	c.GPUHours = round6(c.GPUHours + hours)
	c.EnergyKWh = round6(c.EnergyKWh + kwh)
	c.EnergyUSD = round6(c.EnergyKWh * sc.Cost.USDPerKWh)
	c.USDPerMonth = round6(c.USDPerMonth + gpus*price*HoursPerMonth)
	c.USDPerMillionOutputRaw = round6(ratio(c.USD*1e6, float64(r.Rec.OutputTokens)))
	if r.Rec.GoodOutputTokens > 0 {
		c.USDPerMillionOutputTokens = ptr(round6(c.USD * 1e6 / float64(r.Rec.GoodOutputTokens)))
	}
	s.Fleet.GPUs += d.DecodeGPUs
	s.Fleet.Domains = d.NVLinkDomains()
}
