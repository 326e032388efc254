package fleet

import (
	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"slices"
)

// FleetConfig describes a homogeneous serving fleet (the scenario's
// [cluster] table).
type FleetConfig struct {
	// GPU names a catalog GPU (H100, H200, B200, GB200, A100-80GB, MI300X,
	// …: `fleetsim models gpus`), or a scenario's own.
	GPU string `toml:"gpu"`
	// Model names a catalog model: llama-3-8b, llama-3-70b, llama-3-405b, or
	// a scenario's own.
	Model string `toml:"model"`
	// TP is the tensor parallelism, inside one NVLink domain (it must
	// divide the domain size). A replica has tp·dp·pp GPUs.
	TP int `toml:"tp"`
	// DP is the attention data parallelism: ranks of tp GPUs, each serving
	// its share of the replica's sequences (default 1). EP is the expert
	// parallelism of an MoE model: 1 (default: experts tensor-sharded over
	// all tp·dp GPUs) or tp·dp (whole experts per GPU, all-to-all dispatch;
	// it must divide the experts). A replica wider than an NVLink domain
	// takes whole domains and needs ep = tp·dp. See hw.Layout.
	DP int `toml:"dp"`
	EP int `toml:"ep"`
	// PP is the number of pipeline stages (default 1), each tp GPUs holding
	// layers/pp of the model; it must divide the layers and needs dp = ep =
	// 1. A pipeline wider than the NVLink domain takes whole domains.
	PP int `toml:"pp"`
	// Replicas is the number of serving replicas.
	Replicas int `toml:"replicas"`
	// Placement of replicas on NVLink domains (servers, racks): "pack"
	// (default: fill each domain before the next, fewest domains) or
	// "spread" (round-robin over Domains domains, so one domain's failure
	// takes fewer replicas).
	Placement string `toml:"placement"`
	// Domains is how many domains "spread" uses; 0 means one per replica
	// (as far as TP allows). Ignored by "pack".
	Domains int                  `toml:"domains"`
	Replica engine.ReplicaConfig `toml:"replica"`
	// Groups make the fleet heterogeneous ([[cluster.groups]]): replica
	// groups each with its own GPU, TP, count and price, serving Model with
	// the Replica engine settings. With groups, GPU, TP and Replicas are not
	// written; the scenario loader sets Replicas to the total and GPU and TP
	// to the first group's.
	Groups []GroupConfig `toml:"groups"`
	// ServeModels, set by the scenario loader (never by a file), lists the
	// models of [[serve]] in order: Request.Model indexes it. Empty or one
	// model: every replica takes every request.
	ServeModels []string `toml:"-"`
}

// Validate records every problem of the fleet under prefix (e.g.
// "cluster"), resolving names in cat, and returns the memory plan when the
// configuration is otherwise sound.
func (c *FleetConfig) Validate(cat *hw.Catalog, prefix string, ps *config.Problems) engine.MemoryPlan {
	if len(c.Groups) > 0 {
		plans := c.validateGroups(cat, prefix, ps)
		return plans[0]
	}
	gpu, okG := cat.GPUs[c.GPU]
	if !okG {
		ps.OneOf(config.Key(prefix, "gpu"), c.GPU, cat.GPUNames())
	}
	llm, okM := cat.LLMs[c.Model]
	if !okM {
		ps.OneOf(config.Key(prefix, "model"), c.Model, cat.LLMNames())
	}
	ps.PositiveInt(config.Key(prefix, "replicas"), c.Replicas)
	ps.PositiveInt(config.Key(prefix, "tp"), c.TP)
	if okG && c.TP > 0 && (c.TP > gpu.DomainGPUs || gpu.DomainGPUs%c.TP != 0) {
		ps.Add(config.Key(prefix, "tp"), "a TP=%d replica does not fit %s's %d-GPU NVLink domain (TP must divide %d)",
			c.TP, gpu.Name, gpu.DomainGPUs, gpu.DomainGPUs)
	}
	c.validateLayout(gpu, llm, okG && okM, prefix, ps)
	w := c.GPUsPerReplica()
	if c.Placement == "" {
		c.Placement = "pack"
	}
	ps.OneOf(config.Key(prefix, "placement"), c.Placement, Placements)
	if c.Domains < 0 {
		ps.Add(config.Key(prefix, "domains"), "must be >= 0, found %d", c.Domains)
	}
	if okG && c.Placement == "spread" && c.TP > 0 && c.Replicas > 0 && w <= gpu.DomainGPUs {
		d := c.Domains
		if d == 0 {
			d = c.Replicas
		}
		d = min(d, c.Replicas)
		if per := (c.Replicas + d - 1) / d; per > gpu.DomainGPUs/w {
			ps.Add(config.Key(prefix, "domains"), "%d domains cannot hold %d %d-GPU replicas (%d per domain at most)", d, c.Replicas, w, gpu.DomainGPUs/w)
		}
	}
	n := len(ps.List)
	c.Replica.Validate(config.Key(prefix, "replica"), ps)
	pp, okP := cat.Profiles[c.Replica.Perf.Profile]
	if !okP && c.Replica.Perf.Profile != "" && !c.Replica.Perf.IsPath() {
		ps.OneOf(config.Key(prefix, "replica", "perf", "profile"), c.Replica.Perf.Profile, hw.BuiltinProfileNames())
	} else if !okP && c.Replica.Perf.Profile != "" && !ps.Has(config.Key(prefix, "replica", "perf", "profile")) {
		// The scenario loader reads profile files into the catalog and
		// reports a file it could not read under this key.
		ps.Add(config.Key(prefix, "replica", "perf", "profile"), "profile file %q was not loaded", c.Replica.Perf.Profile)
	}
	if okG && okM && c.TP > 0 {
		if err := hw.CheckTP(llm, c.TP); err != nil {
			ps.Add(config.Key(prefix, "tp"), "%v", err)
		}
		if err := hw.CheckPrecision(gpu, hw.Precision(c.Replica.Weights), hw.Precision(c.Replica.KVDType)); err != nil {
			ps.Add(config.Key(prefix, "replica", "kv_dtype"), "%v", err)
		}
		if c.Replica.Compute != "" && slices.Contains(hw.ComputePrecisions, c.Replica.Compute) && slices.Contains(hw.WeightPrecisions, c.Replica.Weights) {
			if err := hw.CheckCompute(gpu, hw.Precision(c.Replica.Weights), hw.Precision(c.Replica.Compute)); err != nil {
				ps.Add(config.Key(prefix, "replica", "compute"), "%v", err)
			}
		}
	}
	if !okG || !okM || !okP || len(ps.List) > n || c.TP <= 0 {
		return engine.MemoryPlan{}
	}
	return engine.PlanMemoryLayout(gpu, llm, c.Layout(), c.Replica, pp, config.Key(prefix, "model"), ps)
}

// Placement is where the fleet's replicas sit.
type Placement struct {
	GPUs       int // GPUs used by replicas
	Domains    int // NVLink domains (servers or racks) occupied
	DomainGPUs int
	TP         int // GPUs per replica (tp·dp): a failure of any takes the replica
	Spread     bool
}

// Placements lists the placement policies.
var Placements = []string{"pack", "spread"}

// ReplicaGPUs is the first GPU and the GPU count of replica i: pack puts
// replica i on GPUs [i·TP, (i+1)·TP); spread puts it in domain i mod
// Domains, slot i div Domains.
func (p Placement) ReplicaGPUs(i int) (first, n int) {
	if !p.Spread {
		if per := p.DomainGPUs / p.TP; p.TP <= p.DomainGPUs && p.DomainGPUs%p.TP != 0 {
			// A replica that does not divide its domain (64 GPUs of a
			// 72-GPU rack): as many per domain as fit, the rest spare.
			return (i/per)*p.DomainGPUs + (i%per)*p.TP, p.TP
		}
		return i * p.TP, p.TP
	}
	return (i%p.Domains)*p.DomainGPUs + (i/p.Domains)*p.TP, p.TP
}

func placement(cfg FleetConfig, domainGPUs int) Placement {
	w := cfg.GPUsPerReplica()
	gpus := cfg.Replicas * w
	p := Placement{GPUs: gpus, DomainGPUs: domainGPUs, TP: w, Domains: (gpus + domainGPUs - 1) / domainGPUs}
	if w <= domainGPUs && domainGPUs%w != 0 {
		per := domainGPUs / w
		p.Domains = (cfg.Replicas + per - 1) / per
	}
	if cfg.Placement == "spread" && w <= domainGPUs {
		p.Spread = true
		p.Domains = cfg.Domains
		if p.Domains == 0 {
			p.Domains = cfg.Replicas
		}
		p.Domains = min(p.Domains, cfg.Replicas)
	}
	return p
}

// Fleet is a serving fleet: a gateway with a router in front of a pool of
// identical replicas. It is wired from parts with one job each, embedded so
// that their methods and fields are the fleet's:
//
//	Pool     the replicas, their routing snapshot, the mechanisms'
//	         holds on them (lifecycle.go), drains              pool.go
//	Gateway  the request path and its policies (admission, timeouts,
//	         hedges, retries, breakers, fallback, rollout split) gateway*.go
//	Health   probes, ejection and time to isolate               health.go
//	Sampler  the time series and the drain limit                sampling.go
//	intake   the workload, pulled one request at a time         intake.go
//
// The parts share the pool and the gateway's statistics by pointer; only
// NewFleet (through newFleet) connects them.
type Fleet struct {
	*Pool
	*Gateway
	*Health
	*Sampler
	*intake

	Rec *Recorder
	// Autoscaler, when StartAutoscaler was called, adds and removes
	// replicas as its policy asks; nil for a static fleet.
	Autoscaler *Autoscaler
	// Spot, when StartSpot was called, interrupts the spot replicas.
	Spot *Spot
	// Disagg is the decode pool and KV handoff of a disaggregated fleet
	// (EnableDisagg); nil when co-located.
	Disagg *Disagg
	// KVTiers are the KV tiers below HBM (EnableKVTiers); nil without.
	KVTiers *engine.KVTiers
}

// NewFleet builds the fleet; problems in the configuration (unknown names,
// a model that does not fit, a TP group that does not fit its domain) are
// reported with key paths under prefix.
func NewFleet(eng *sim.Engine, cat *hw.Catalog, cfg FleetConfig, router Router, rec *Recorder, prefix string) (*Fleet, error) {
	var ps config.Problems
	mem := cfg.Validate(cat, prefix, &ps)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	if len(cfg.Groups) > 0 {
		plans := cfg.validateGroups(cat, prefix, &ps)
		if err := ps.Err(); err != nil {
			return nil, err
		}
		return newGroupFleet(eng, cat, cfg, plans, router, rec)
	}
	gpu, llm := cat.GPUs[cfg.GPU], cat.LLMs[cfg.Model]
	perf, err := hw.NewDeployedStepModel(gpu, llm, cfg.Deployment(), hw.Precision(cfg.Replica.Weights), hw.Precision(cfg.Replica.KVDType), cat.Profiles[cfg.Replica.Perf.Profile])
	if err != nil {
		return nil, err
	}
	f := newFleet(eng, router, rec, cfg.Replicas)
	p := f.Pool
	p.Memory, p.PeakFLOPS, p.ParamsPerGPU = mem, perf.PeakFLOPS(), llm.ActiveParamsDerived()/float64(cfg.GPUsPerReplica())
	p.Place = placement(cfg, gpu.DomainGPUs)
	p.tp = cfg.GPUsPerReplica()
	for i := 0; i < cfg.Replicas; i++ {
		p.Replicas = append(p.Replicas, engine.NewReplica(i, eng, cfg.Replica, perf, mem.KVBlocks, f.Gateway, &p.states[i]))
		p.states[i].Capacity = 1
	}
	p.watch()
	return f, nil
}

// newFleet wires the parts of a fleet of n replicas (not built yet).
func newFleet(eng *sim.Engine, router Router, rec *Recorder, n int) *Fleet {
	pool := newPool(eng, n)
	gw := newGateway(eng, pool, router, rec)
	in := newIntake(eng, gw)
	f := &Fleet{Pool: pool, Gateway: gw, intake: in, Rec: rec,
		Sampler: &Sampler{eng: eng, rec: rec, pool: pool, in: in}}
	f.Health = newHealth(eng, pool, &gw.GW, f.busy)
	pool.health = f.Health
	return f
}

// busy reports whether the fleet still has work: arrivals to come or
// requests in flight.
func (f *Fleet) busy() bool { return !f.srcDone || f.Rec.InFlight() > 0 }

// SetPolicies installs the gateway's policies and starts the health
// probes they configure; call before Start.
func (f *Fleet) SetPolicies(p Policies) {
	f.Gateway.pol = p
	f.Pool.breaker = p.Breaker
	f.Health.start(p.Probe)
	if f.Disagg != nil {
		f.Disagg.Decode.health.start(p.Probe) // the decode pool is probed as the prefill pool is
		if p.Breaker != nil && p.DecodeBreaker == nil {
			// A programming error, not user input: the decode pool would
			// go unwatched without a word.
			panic("models: SetPolicies: a disaggregated fleet with a breaker needs Policies.DecodeBreaker")
		}
		f.Disagg.Decode.breaker = p.DecodeBreaker
	}
}

// Finish closes time-weighted statistics at end, the end of the run.
func (f *Fleet) Finish(end sim.Time) {
	f.Rec.Touch(end)
	if f.Autoscaler != nil {
		f.Autoscaler.Finish(end)
	}
	for _, r := range f.Replicas {
		r.Finish(end)
	}
	for _, r := range f.Fallback.Replicas {
		r.Finish(end)
	}
	if f.Disagg != nil {
		f.Disagg.finish(end)
	}
	f.collectITL()
	f.Rec.Finish()
}

// collectITL merges every replica's inter-token gaps into the Recorder
// (and, with several models, into each model's), in replica order.
func (f *Fleet) collectITL() {
	for i, r := range f.Replicas {
		sk := r.ITL()
		f.Rec.ITL.Merge(sk)
		if f.Rec.PerModel != nil && f.Pool.model != nil {
			f.Rec.PerModel[f.Pool.model[i]].ITL.Merge(sk)
		}
	}
	for _, r := range f.Fallback.Replicas {
		f.Rec.ITL.Merge(r.ITL())
	}
	if f.Disagg != nil {
		for _, r := range f.Disagg.Decode.Replicas {
			f.Rec.ITL.Merge(r.ITL())
		}
	}
}

// FallbackGPUs is the fallback pool's GPUs (0 without one).
func (f *Fleet) FallbackGPUs() int { return len(f.Fallback.Replicas) * f.Fallback.tp }

// AddFallback builds a secondary pool (its own GPU, model and TP; often a
// smaller model) that the gateway uses when no primary replica can take a
// request: all down, ejected or breaker-open. Call before Start.
func (f *Fleet) AddFallback(cat *hw.Catalog, cfg FleetConfig, router Router, prefix string) error {
	var ps config.Problems
	mem := cfg.Validate(cat, prefix, &ps)
	if err := ps.Err(); err != nil {
		return err
	}
	gpu, llm := cat.GPUs[cfg.GPU], cat.LLMs[cfg.Model]
	perf, err := hw.NewDeployedStepModel(gpu, llm, cfg.Deployment(), hw.Precision(cfg.Replica.Weights), hw.Precision(cfg.Replica.KVDType), cat.Profiles[cfg.Replica.Perf.Profile])
	if err != nil {
		return err
	}
	fb := newPool(f.Pool.eng, cfg.Replicas)
	fb.Base, fb.tp, fb.Memory, fb.Place = len(f.Replicas), cfg.GPUsPerReplica(), mem, placement(cfg, gpu.DomainGPUs)
	for j := 0; j < cfg.Replicas; j++ {
		r := engine.NewReplica(fb.Base+j, f.Pool.eng, cfg.Replica, perf, mem.KVBlocks, f.Gateway, &fb.states[j])
		fb.states[j].Index = j
		fb.Replicas = append(fb.Replicas, r)
	}
	f.Gateway.Fallback, f.Gateway.fbRouter = fb, router
	f.Gateway.pools[1] = fb
	return nil
}
