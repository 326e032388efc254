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
	Replicas int           `toml:"replicas"`
	Replica  ReplicaConfig `toml:"replica"`
	Perf     PerfConfig    `toml:"perf"`
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
	n := len(ps.List)
	c.Replica.Validate(prefix+".replica", ps)
	c.Perf.Validate(prefix+".perf", ps)
	if !okG || !okM || len(ps.List) > n || c.TP <= 0 {
		return MemoryPlan{}
	}
	return PlanMemory(gpu, llm, c.TP, c.Replica, prefix+".model", ps)
}

// Placement is where the fleet's replicas sit.
type Placement struct {
	GPUs       int // GPUs used by replicas
	Domains    int // NVLink domains (servers or racks) occupied
	DomainGPUs int
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
	brk        []BreakerState // last breaker state applied
	brkEv      []sim.EventID  // pending breaker re-checks
	faultAt    []sim.Time     // first fault time of a not-yet-isolated replica, or -1
	probeFails []int
	ro         *rollout

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
	Samples    []Sample
	sampleNs   sim.Time
	onSample   sim.Action
	lastSample Sample
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
	perf, err := NewStepModel(gpu, llm, cfg.TP, Precision(cfg.Replica.Weights), Precision(cfg.Replica.KVDType), cfg.Perf)
	if err != nil {
		return nil, err
	}
	f := &Fleet{eng: eng, router: router, Rec: rec, Memory: mem, PeakFLOPS: perf.PeakFLOPS(),
		ParamsPerGPU: llm.Params / float64(cfg.TP),
		states:       make([]ReplicaState, cfg.Replicas)}
	gpus := cfg.Replicas * cfg.TP
	f.Place = Placement{GPUs: gpus, DomainGPUs: gpu.DomainGPUs, Domains: (gpus + gpu.DomainGPUs - 1) / gpu.DomainGPUs}
	for i := 0; i < cfg.Replicas; i++ {
		f.Replicas = append(f.Replicas, NewReplica(i, eng, cfg.Replica, perf, mem.KVBlocks, f, &f.states[i]))
	}
	f.rot = make([]bool, cfg.Replicas)
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
	if f.pol.Admit != nil && !f.pol.Admit.Admit(&f.next, f.states, now) {
		f.Rec.Shed++
		_ = f.pull()
		return
	}
	cr := f.newClientReq(&f.next) // f.next is reused by pull below
	if !f.send(cr, CopyPrimary) {
		f.Rec.Shed++
		f.releaseClientReq(cr)
	} else {
		f.startPolicies(cr, now)
	}
	_ = f.pull()
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
	perf, err := NewStepModel(gpu, llm, cfg.TP, Precision(cfg.Replica.Weights), Precision(cfg.Replica.KVDType), cfg.Perf)
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
