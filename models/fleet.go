package models

import (
	"errors"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// FleetConfig describes a homogeneous serving fleet (the scenario's
// [cluster] table).
type FleetConfig struct {
	// GPU names a catalog GPU: H100, H200, B200, GB200, or a scenario's own.
	GPU string `toml:"gpu"`
	// Model names a catalog model: llama-3-8b, llama-3-70b, llama-3-405b, or
	// a scenario's own.
	Model string `toml:"model"`
	// TP is the tensor parallelism: GPUs per replica, inside one NVLink
	// domain (it must divide the domain size).
	TP int `toml:"tp"`
	// Replicas is the number of serving replicas.
	Replicas int `toml:"replicas"`
	// Placement of replicas on NVLink domains (servers, racks): "pack"
	// (default: fill each domain before the next, fewest domains) or
	// "spread" (round-robin over Domains domains, so one domain's failure
	// takes fewer replicas).
	Placement string `toml:"placement"`
	// Domains is how many domains "spread" uses; 0 means one per replica
	// (as far as TP allows). Ignored by "pack".
	Domains int           `toml:"domains"`
	Replica ReplicaConfig `toml:"replica"`
}

// Validate records every problem of the fleet under prefix (e.g.
// "cluster"), resolving names in cat, and returns the memory plan when the
// configuration is otherwise sound.
func (c *FleetConfig) Validate(cat *Catalog, prefix string, ps *config.Problems) MemoryPlan {
	gpu, okG := cat.GPUs[c.GPU]
	if !okG {
		ps.OneOf(prefix+".gpu", c.GPU, cat.GPUNames())
	}
	llm, okM := cat.LLMs[c.Model]
	if !okM {
		ps.OneOf(prefix+".model", c.Model, cat.LLMNames())
	}
	ps.PositiveInt(prefix+".replicas", c.Replicas)
	ps.PositiveInt(prefix+".tp", c.TP)
	if okG && c.TP > 0 && (c.TP > gpu.DomainGPUs || gpu.DomainGPUs%c.TP != 0) {
		ps.Add(prefix+".tp", "a TP=%d replica does not fit %s's %d-GPU NVLink domain (TP must divide %d)",
			c.TP, gpu.Name, gpu.DomainGPUs, gpu.DomainGPUs)
	}
	if c.Placement == "" {
		c.Placement = "pack"
	}
	ps.OneOf(prefix+".placement", c.Placement, Placements)
	if c.Domains < 0 {
		ps.Add(prefix+".domains", "must be >= 0, found %d", c.Domains)
	}
	if okG && c.Placement == "spread" && c.TP > 0 && c.Replicas > 0 && c.TP <= gpu.DomainGPUs {
		d := c.Domains
		if d == 0 {
			d = c.Replicas
		}
		d = min(d, c.Replicas)
		if per := (c.Replicas + d - 1) / d; per > gpu.DomainGPUs/c.TP {
			ps.Add(prefix+".domains", "%d domains cannot hold %d TP=%d replicas (%d per domain at most)", d, c.Replicas, c.TP, gpu.DomainGPUs/c.TP)
		}
	}
	n := len(ps.List)
	c.Replica.Validate(prefix+".replica", ps)
	pp, okP := cat.Profiles[c.Replica.Perf.Profile]
	if !okP && c.Replica.Perf.Profile != "" && !c.Replica.Perf.IsPath() {
		ps.OneOf(prefix+".replica.perf.profile", c.Replica.Perf.Profile, BuiltinProfileNames())
	} else if !okP && c.Replica.Perf.Profile != "" && !ps.Has(prefix+".replica.perf.profile") {
		// The scenario loader reads profile files into the catalog and
		// reports a file it could not read under this key.
		ps.Add(prefix+".replica.perf.profile", "profile file %q was not loaded", c.Replica.Perf.Profile)
	}
	if okG && okM && c.TP > 0 {
		if err := CheckTP(llm, c.TP); err != nil {
			ps.Add(prefix+".tp", "%v", err)
		}
		if err := CheckPrecision(gpu, Precision(c.Replica.Weights), Precision(c.Replica.KVDType)); err != nil {
			ps.Add(prefix+".replica.weights", "%v", err)
		}
	}
	if !okG || !okM || !okP || len(ps.List) > n || c.TP <= 0 {
		return MemoryPlan{}
	}
	return PlanMemory(gpu, llm, c.TP, c.Replica, pp, prefix+".model", ps)
}

// Placement is where the fleet's replicas sit.
type Placement struct {
	GPUs       int // GPUs used by replicas
	Domains    int // NVLink domains (servers or racks) occupied
	DomainGPUs int
	TP         int
	Spread     bool
}

// Placements lists the placement policies.
var Placements = []string{"pack", "spread"}

// ReplicaGPUs is the first GPU and the GPU count of replica i: pack puts
// replica i on GPUs [i·TP, (i+1)·TP); spread puts it in domain i mod
// Domains, slot i div Domains.
func (p Placement) ReplicaGPUs(i int) (first, n int) {
	if !p.Spread {
		return i * p.TP, p.TP
	}
	return (i%p.Domains)*p.DomainGPUs + (i/p.Domains)*p.TP, p.TP
}

func placement(cfg FleetConfig, domainGPUs int) Placement {
	gpus := cfg.Replicas * cfg.TP
	p := Placement{GPUs: gpus, DomainGPUs: domainGPUs, TP: cfg.TP, Domains: (gpus + domainGPUs - 1) / domainGPUs}
	if cfg.Placement == "spread" {
		p.Spread = true
		p.Domains = cfg.Domains
		if p.Domains == 0 {
			p.Domains = cfg.Replicas
		}
		p.Domains = min(p.Domains, cfg.Replicas)
	}
	return p
}

// Fleet is a gateway with a router in front of N identical replicas. It pulls
// requests from a Source one at a time (one pending arrival event), so memory
// does not depend on the number of requests.
type Fleet struct {
	eng      *sim.Engine
	Replicas []*Replica
	states   []ReplicaState
	router   Router
	Rec      *Recorder
	Memory   MemoryPlan
	Place    Placement
	// PeakFLOPS is one GPU's dense peak at the weights' precision.
	PeakFLOPS float64
	// ParamsPerGPU is the model's parameters over the TP degree.
	ParamsPerGPU float64

	// GW counts copies, hedges, retries and cancellations.
	GW         GatewayStats
	pol        Policies
	rot        []bool         // in rotation
	reserved   []bool         // warm spares held out of service (SetReserved)
	brk        []BreakerState // last breaker state applied
	brkEv      []sim.EventID  // pending breaker re-checks
	faultAt    []sim.Time     // first fault time of a not-yet-isolated replica, or -1
	probeFails []int
	ro         *rollout
	tp         int

	// Fallback is a secondary pool that takes what the primary cannot
	// (AddFallback); its replicas' indices follow the primary's.
	Fallback     []*Replica
	fbStates     []ReplicaState
	fbRouter     Router
	FallbackGPUs int
	spareCR      []*clientReq
	spareCopy    []*Copy

	src       workloads.Source
	next      workloads.Request
	onArrival sim.Action
	srcErr    error
	srcDone   bool

	// DrainLimit stops the run this long after the last arrival even if
	// requests are still in flight (0: no limit); Truncated says it did.
	DrainLimit  sim.Time
	Truncated   bool
	lastArrival sim.Time

	// Samples is the fleet's time series (see StartSampling).
	Samples  []Sample
	sampleNs sim.Time
	onSample sim.Action
}

// Sample is the fleet's state at one instant of its time series.
type Sample struct {
	Time              sim.Time
	Arrived           int64 // cumulative
	Completed         int64 // cumulative
	InFlight          int64
	Waiting           int64
	KVUsedFrac        float64 // used blocks / total, over all replicas
	KVCachedFrac      float64 // cached-only blocks / total
	AvailableReplicas int
}

// NewFleet builds the fleet; problems in the configuration (unknown names,
// a model that does not fit, a TP group that does not fit its domain) are
// reported with key paths under prefix.
func NewFleet(eng *sim.Engine, cat *Catalog, cfg FleetConfig, router Router, rec *Recorder, prefix string) (*Fleet, error) {
	var ps config.Problems
	mem := cfg.Validate(cat, prefix, &ps)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	gpu, llm := cat.GPUs[cfg.GPU], cat.LLMs[cfg.Model]
	perf, err := NewStepModel(gpu, llm, cfg.TP, Precision(cfg.Replica.Weights), Precision(cfg.Replica.KVDType), cat.Profiles[cfg.Replica.Perf.Profile])
	if err != nil {
		return nil, err
	}
	f := &Fleet{eng: eng, router: router, Rec: rec, Memory: mem, PeakFLOPS: perf.PeakFLOPS(),
		ParamsPerGPU: llm.Params / float64(cfg.TP),
		states:       make([]ReplicaState, cfg.Replicas)}
	f.Place = placement(cfg, gpu.DomainGPUs)
	f.tp = cfg.TP
	for i := 0; i < cfg.Replicas; i++ {
		f.Replicas = append(f.Replicas, NewReplica(i, eng, cfg.Replica, perf, mem.KVBlocks, f, &f.states[i]))
	}
	f.rot = make([]bool, cfg.Replicas)
	f.reserved = make([]bool, cfg.Replicas)
	f.brk = make([]BreakerState, cfg.Replicas)
	f.brkEv = make([]sim.EventID, cfg.Replicas)
	f.faultAt = make([]sim.Time, cfg.Replicas)
	for i := range f.rot {
		f.rot[i] = true
		f.faultAt[i] = -1
	}
	for i, r := range f.Replicas {
		i := i
		r.onChange = func() { f.refresh(i) }
	}
	f.onArrival = f.arrive
	return f, nil
}

// Start pulls the first request from src and schedules its arrival.
func (f *Fleet) Start(src workloads.Source) error {
	f.src = src
	return f.pull()
}

// Err is the first error the source returned during the run, if any.
func (f *Fleet) Err() error { return f.srcErr }

func (f *Fleet) pull() error {
	req, err := f.src.Next()
	if errors.Is(err, io.EOF) {
		f.srcDone = true
		return nil
	}
	if err != nil {
		f.srcErr = err
		f.eng.Stop()
		return err
	}
	if req.Arrival < f.eng.Now() {
		f.srcErr = fmt.Errorf("workload: request %d arrives at %v, before the previous one (%v)", req.ID, req.Arrival, f.eng.Now())
		f.eng.Stop()
		return f.srcErr
	}
	f.next = req
	f.eng.Schedule(req.Arrival, sim.PriorityArrival, f.onArrival)
	return nil
}

func (f *Fleet) arrive(now sim.Time) {
	f.lastArrival = now
	f.Rec.Touch(now)
	f.Rec.Arrived++
	if f.pol.Retry != nil {
		f.pol.Retry.Observe(now)
	}
	cr := f.newClientReq(&f.next) // f.next is reused by pull below
	f.admit(cr, now, 0)
	_ = f.pull()
}

// admit applies admission control to a new request, then sends it. A
// refused request is shed, or, with a defer policy, held at the gateway
// and asked again every DeferNs up to DeferMax times before it is shed.
func (f *Fleet) admit(cr *clientReq, now sim.Time, tries int) {
	if f.pol.Admit != nil && !f.pol.Admit.Admit(&cr.req, f.states, now) {
		if tries < f.pol.DeferMax {
			f.GW.Deferred++
			f.eng.Schedule(now+f.pol.DeferNs, sim.PriorityArrival, func(at sim.Time) { f.admit(cr, at, tries+1) })
			return
		}
		f.Rec.Touch(now)
		f.Rec.Shed++
		f.releaseClientReq(cr)
		return
	}
	if !f.send(cr, CopyPrimary) {
		f.Rec.Touch(now)
		f.Rec.Shed++
		f.releaseClientReq(cr)
		return
	}
	f.startPolicies(cr, now)
}

// Finish closes time-weighted statistics at end, the end of the run.
func (f *Fleet) Finish(end sim.Time) {
	f.Rec.Touch(end)
	for _, r := range f.Replicas {
		r.Finish(end)
	}
	for _, r := range f.Fallback {
		r.Finish(end)
	}
}

// StartSampling records a Sample every interval from now on, until the
// workload is exhausted and every request has finished. One sample costs
// O(replicas); nothing else in the run depends on it.
func (f *Fleet) StartSampling(interval sim.Time) {
	if interval <= 0 {
		return
	}
	f.sampleNs = interval
	f.onSample = f.sample
	f.eng.Schedule(f.eng.Now(), sim.PriorityMetrics, f.onSample)
}

func (f *Fleet) sample(now sim.Time) {
	s := Sample{Time: now, Arrived: f.Rec.Arrived, Completed: f.Rec.Completed, InFlight: f.Rec.InFlight()}
	var used, cached, total int64
	for i, r := range f.Replicas {
		s.Waiting += int64(f.states[i].Waiting)
		if f.states[i].Available {
			s.AvailableReplicas++
		}
		used += r.kv.Used()
		cached += r.kv.Cached()
		total += r.kv.Total()
	}
	if total > 0 {
		s.KVUsedFrac = float64(used) / float64(total)
		s.KVCachedFrac = float64(cached) / float64(total)
	}
	f.Samples = append(f.Samples, s)
	if f.srcDone && f.Rec.InFlight() == 0 {
		return
	}
	if f.srcDone && f.DrainLimit > 0 && now-f.lastArrival > f.DrainLimit {
		// Requests stuck where they can never finish (a zombie nobody
		// restarts, no client timeout) would keep the run alive forever:
		// stop, and report them as in flight.
		f.Truncated = true
		f.eng.Stop()
		return
	}
	f.eng.Schedule(now+f.sampleNs, sim.PriorityMetrics, f.onSample)
}

// States is the routing snapshot (read-only; for tests and reports).
func (f *Fleet) States() []ReplicaState { return f.states }

// AddFallback builds a secondary pool (its own GPU, model and TP; often a
// smaller model) that the gateway uses when no primary replica can take a
// request: all down, ejected or breaker-open. Call before Start.
func (f *Fleet) AddFallback(cat *Catalog, cfg FleetConfig, router Router, prefix string) error {
	var ps config.Problems
	mem := cfg.Validate(cat, prefix, &ps)
	if err := ps.Err(); err != nil {
		return err
	}
	gpu, llm := cat.GPUs[cfg.GPU], cat.LLMs[cfg.Model]
	perf, err := NewStepModel(gpu, llm, cfg.TP, Precision(cfg.Replica.Weights), Precision(cfg.Replica.KVDType), cat.Profiles[cfg.Replica.Perf.Profile])
	if err != nil {
		return err
	}
	f.fbStates = make([]ReplicaState, cfg.Replicas)
	f.fbRouter = router
	f.FallbackGPUs = cfg.Replicas * cfg.TP
	for j := 0; j < cfg.Replicas; j++ {
		r := NewReplica(len(f.Replicas)+j, f.eng, cfg.Replica, perf, mem.KVBlocks, f, &f.fbStates[j])
		f.fbStates[j].Index = j
		f.Fallback = append(f.Fallback, r)
	}
	return nil
}

// Drained reports whether the workload is exhausted and no request is in
// flight: nothing left to simulate but background processes.
func (f *Fleet) Drained() bool { return f.srcDone && f.Rec.InFlight() == 0 }
