package failures

import (
	"fmt"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// Deps are what stochastic failures need beside the fleet and their
// configuration.
type Deps struct {
	// Slots is the number of serving replicas (cluster.replicas); the
	// fleet's replicas beyond them are warm spares. DecodeSlots is the
	// same for a disaggregated fleet's decode pool (disagg.decode.replicas).
	Slots, DecodeSlots int
	// Rand is the failure stream, sim.NewStream(seed, "failures").
	Rand *rand.Rand
	// GroupRand, for a fleet of groups, is group k's own failure stream
	// (each group's servers fail on their own); unused for a fleet of one
	// kind.
	GroupRand func(k int) *rand.Rand
	// Drainer decides which precursors drain their replica
	// (policies.PrecursorDrain); nil drains none.
	Drainer fleet.PrecursorPolicy
	// DurationS is how long the workload arrives, in seconds (0: until the
	// source ends); HorizonS is the run's hard stop (0: none). Failures stop
	// with the first of them: a failure after the workload ends would only
	// keep a drained run alive.
	DurationS, HorizonS float64
	// ColdStart, when set, is replica i's cold start after a repair (the
	// cold-start model, fleet.Fleet.RestartColdStart); nil: the fixed
	// Config.ColdStartS. A disaggregated fleet's decode replicas keep
	// Config.ColdStartS.
	ColdStart func(i int) sim.Time
	// SpareKind, in a fleet of groups with spares or beside a rollout, is
	// each replica's kind (fleet.Pool.SpareKinds; -1 for a rollout's green
	// replicas, which no spare has): a spare stands in only for a replica
	// of its kind. nil: any spare for any replica.
	SpareKind []int
}

// Injector feeds a failure source into a serving fleet, one pending event
// at a time: each failure hits the replicas placed on its GPUs
// (Placement.ReplicaGPUs) through the Applier, and is repaired after its
// repair time plus a cold start; a precursor may drain its replicas first.
// It keeps the spare pool and the availability tally.
type Injector struct {
	ap      *Applier
	srcs    []source
	drainer fleet.PrecursorPolicy
	grace   sim.Time
	cold    sim.Time
	coldOf  func(i int) sim.Time // nil: cold for every replica
	stop    sim.Time             // no events after this
	drained []bool
	averted map[avertKey]bool // failures headed off by a proactive drain and repair
	spares  *SparePool
	avail   *Availability
	counts  FleetReport // the counts; the rest is filled by Report
	// nvl[i] are the NVLink bandwidth fractions of the degradations of
	// replica i's domain under way (their product is what it runs at);
	// nvlSince[i] is when the current spell of degradation began.
	nvl      [][]float64
	nvlSince []sim.Time
	// A disaggregated fleet's decode replicas follow the prefill pool's
	// nPre replicas in the injector's numbering (index nPre+j is decode
	// replica j); decAvail is the decode pool's availability, decHits the
	// decode replicas hit. nPre is 0 when co-located.
	nPre      int
	decAvail  *Availability
	decSpares *SparePool
	decHits   int
}

// source is one failure source: the failures of one placement's GPUs
// (the fleet's, or one group's servers of its own GPU type) hitting
// replicas [first, first+n), and with decode set (a disaggregated fleet)
// the decode pool's replicas too, whose GPUs follow the prefill pool's.
type source struct {
	sig      *Signals
	group    int // index in fleet.Groups, -1 for a fleet of one kind
	place    fleet.Placement
	first, n int
	decode   bool
}

// avertKey names a failure headed off: its source and the event.
type avertKey struct {
	src int
	ev  Event
}

// topology is the failure topology of domains NVLink domains of
// domainGPUs GPUs: NVL72 racks for a 72-GPU domain, else HGX servers,
// ServersPerRack to a rack.
func topology(c Config, domains, domainGPUs int) Topology {
	var topo Topology
	if n := max(domains, 1); domainGPUs == 72 {
		topo = NVL72(n)
	} else {
		topo = HGX(n, c.ServersPerRack)
	}
	if c.RacksPerRow > 0 {
		topo.RacksPerRow = c.RacksPerRow
	}
	return topo
}

// Start draws c's failures on the fleet's GPUs and schedules the first.
// The failure topology is the fleet's placement (topology). A fleet of
// groups ([[cluster.groups]]) has one topology and one failure stream per
// group: each group's replicas sit on servers of their own GPU type (a
// GB200 group in NVL72 racks, an H100 group in HGX servers), at the
// profile's rate per GPU-hour times the group's GPUs. A disaggregated
// fleet has one topology holding both pools, the decode pool's GPUs after
// the prefill pool's (Disagg.DecodeReplicaGPUs).
func (a *Applier) Start(c Config, d Deps) (*Injector, error) {
	fl := a.fleet
	prof, err := c.BuildProfile()
	if err != nil {
		return nil, err
	}
	scaled := prof.Scaled(c.RateMultiplier)
	type part struct {
		src  source
		topo Topology
		rng  *rand.Rand
	}
	var parts []part
	n, m := len(fl.Replicas), 0
	if len(fl.Groups) == 0 {
		domains, domainGPUs := fl.Place.Domains, fl.Place.DomainGPUs
		if dis := fl.Disagg; dis != nil {
			m = len(dis.Decode.Replicas)
			domains, domainGPUs = dis.FailureDomains()
		}
		parts = []part{{source{group: -1, place: fl.Place, n: n, decode: fl.Disagg != nil}, topology(c, domains, domainGPUs), d.Rand}}
	}
	for k, g := range fl.Groups {
		if g.Replicas > 0 {
			parts = append(parts, part{source{group: k, place: g.Place, first: g.First, n: g.Replicas},
				topology(c, g.Place.Domains, g.Place.DomainGPUs), d.GroupRand(k)})
		}
	}
	gpus := 0
	for _, pt := range parts {
		gpus += pt.topo.GPUs()
	}
	if d.DurationS > 0 {
		if err := c.CheckRate(prof, gpus, d.DurationS); err != nil {
			return nil, fmt.Errorf("failures.rate_multiplier: %w", err)
		}
	}
	in := &Injector{ap: a, drainer: d.Drainer,
		grace: sim.FromSeconds(c.DrainGraceS), cold: sim.FromSeconds(c.ColdStartS), coldOf: d.ColdStart,
		drained: make([]bool, n+m), averted: map[avertKey]bool{},
		nvl: make([][]float64, n+m), nvlSince: make([]sim.Time, n+m),
		avail:  newAvailability(n, d.Slots, fl.Place.TP),
		counts: FleetReport{ByCategory: map[string]int{}, ByXid: map[string]int{}}}
	for _, pt := range parts {
		gen, err := NewGenerator(scaled, pt.topo, pt.rng)
		if err != nil {
			return nil, err
		}
		pt.src.sig = NewSignals(gen, scaled.MaxPrecursorLead())
		in.srcs = append(in.srcs, pt.src)
	}
	if len(fl.Groups) > 0 {
		in.avail.named(fl)
	}
	if dis := fl.Disagg; dis != nil {
		// The pools' rows in failures.csv say which pool they are in.
		in.nPre = n
		in.avail.name = "prefill replica"
		in.decAvail = newAvailability(m, d.DecodeSlots, dis.DecodeReplicaTP())
		in.decAvail.name, in.decAvail.timeline, in.decAvail.decode = "decode replica", in.avail.timeline, true
	}
	in.spares = newSparePool(a.eng, fl.Pool, in.avail, d.Slots, sim.FromSeconds(c.SpareAfterS), sim.FromSeconds(c.SpareSwapS))
	in.spares.kind = d.SpareKind
	if in.decAvail != nil {
		in.decSpares = newSparePool(a.eng, fl.Disagg.Decode, in.decAvail, d.DecodeSlots, sim.FromSeconds(c.SpareAfterS), sim.FromSeconds(c.SpareSwapS))
	}
	in.stop = sim.Forever
	if d.DurationS > 0 {
		in.stop = sim.FromSeconds(d.DurationS)
	}
	if d.HorizonS > 0 {
		in.stop = min(in.stop, sim.FromSeconds(d.HorizonS))
	}
	for k := range in.srcs {
		in.pull(k)
	}
	return in, nil
}

// pull schedules source k's next signal. Each source keeps one pending
// event of its own; the engine orders them.
func (in *Injector) pull(k int) {
	sig, ok := in.srcs[k].sig.Next()
	if !ok || sig.Time > in.stop {
		return
	}
	in.ap.eng.Schedule(sig.Time, sim.PriorityFailure, func(now sim.Time) {
		if in.ap.fleet.Drained() {
			return // the workload is over and every request done: stop failing
		}
		if sig.Precursor {
			in.precursor(k, sig.Event, now)
		} else {
			in.apply(k, sig.Event, now)
		}
		in.pull(k)
	})
}

// replicasOn calls fn for every replica of source k on the event's GPUs:
// the GPUs out of service for its repair, or the failed unit's when none
// are.
func (in *Injector) replicasOn(k int, ev Event, fn func(i int, r *engine.Replica)) {
	first, n := ev.FirstGPU, ev.GPUs
	if ev.DownGPUs > 0 {
		first, n = ev.DownFirstGPU, ev.DownGPUs
	}
	src, fl := &in.srcs[k], in.ap.fleet
	for j := 0; j < src.n; j++ {
		rf, rn := src.place.ReplicaGPUs(j)
		if first < rf+rn && first+n > rf {
			i := src.first + j
			fn(i, fl.Replicas[i])
		}
	}
	if dis := fl.Disagg; src.decode && dis != nil && in.decAvail != nil {
		for j, r := range dis.Decode.Replicas {
			rf, rn := dis.DecodeReplicaGPUs(j)
			if first < rf+rn && first+n > rf {
				fn(in.nPre+j, r)
			}
		}
	}
}

// decode is the decode replica that injector index i is, or -1 for a
// prefill (or co-located) replica.
func (in *Injector) decode(i int) int {
	if in.decAvail == nil || i < in.nPre {
		return -1
	}
	return i - in.nPre
}

// poolOf is the pool replica i (an injector index) is in, and its index
// there: the primary (or prefill) pool, or a disaggregated fleet's decode
// pool.
func (in *Injector) poolOf(i int) (*fleet.Pool, int) {
	if j := in.decode(i); j >= 0 {
		return in.ap.fleet.Disagg.Decode, j
	}
	return in.ap.fleet.Pool, i
}

// markFault records replica i's fault for its pool's time to isolate.
func (in *Injector) markFault(i int, now sim.Time) {
	p, j := in.poolOf(i)
	p.MarkFault(j, now)
}

// refresh recomputes replica i's availability in its pool.
func (in *Injector) refresh(i int) {
	p, j := in.poolOf(i)
	p.Refresh(j)
}

// release ends the repair's hold on replica i (drained ahead of a
// failure) in its pool.
func (in *Injector) release(i int) {
	p, j := in.poolOf(i)
	p.Release(j, fleet.HoldRepair)
}

// drain drains replica i in its pool, held out for its repair.
func (in *Injector) drain(i int, then func(sim.Time)) {
	p, j := in.poolOf(i)
	p.Drain(j, fleet.HoldRepair, in.grace, then)
}

// sparesOf is replica i's pool's spare pool and its index there.
func (in *Injector) sparesOf(i int) (*SparePool, int) {
	if j := in.decode(i); j >= 0 {
		return in.decSpares, j
	}
	return in.spares, i
}

// availOf is replica i's pool's availability and its index there.
func (in *Injector) availOf(i int) (*Availability, int) {
	if j := in.decode(i); j >= 0 {
		return in.decAvail, j
	}
	return in.avail, i
}

// Precursor is precursor for a fleet of one kind (its one source).
func (in *Injector) Precursor(ev Event, now sim.Time) { in.precursor(0, ev, now) }

// precursor drains the replicas a coming failure ev of source k will
// hit, if the drainer says so, and repairs them at once: the part is
// replaced before it fails, so the failure is averted.
func (in *Injector) precursor(src int, ev Event, now sim.Time) {
	if in.drainer == nil || !in.drainer.Drain(string(ev.Component)) {
		return
	}
	eng := in.ap.eng
	in.averted[avertKey{src, ev}] = true
	in.replicasOn(src, ev, func(i int, r *engine.Replica) {
		sp, k := in.sparesOf(i)
		if in.drained[i] || !r.Up() || sp.out(k) {
			return // spares are not serving: nothing to drain
		}
		in.drained[i] = true
		in.counts.Drained++
		// With a warm spare, the spare takes the replica's place before it
		// drains (ByteRobust's warm standby, CALIBRATION.md §1): no capacity
		// is lost to the drain or the repair.
		swapped := sp.covers(ev.Repair) && sp.swapIn(k, now, false, "")
		av, _ := in.availOf(i)
		in.drain(i, func(t sim.Time) {
			if !swapped {
				sp.waitRepair(k, t+ev.Repair)
				av.markDown(k, t)
			}
			eng.Schedule(t+ev.Repair, sim.PriorityFailure, func(t sim.Time) {
				r.Recover(t, in.coldStart(i), func() {
					av.markUp(k, eng.Now())
					in.drained[i] = false
					in.release(i)
					sp.backAsSpare(k, eng.Now())
				})
			})
		})
	})
}

// Apply is apply for a fleet of one kind (its one source).
func (in *Injector) Apply(ev Event, now sim.Time) { in.apply(0, ev, now) }

// apply hits every replica of source src on the failure ev's GPUs at now,
// and schedules their repair.
func (in *Injector) apply(src int, ev Event, now sim.Time) {
	if key := (avertKey{src, ev}); in.averted[key] {
		delete(in.averted, key)
		in.counts.Averted++
		return
	}
	eng := in.ap.eng
	hit := false
	if ev.Mode == ModeNVLinkDegraded {
		in.replicasOn(src, ev, func(i int, r *engine.Replica) {
			hit = true
			in.countHit(i)
			in.counts.Degraded++
			in.degrade(i, r, ev.NVLinkFraction, now, ev.Repair)
		})
		in.count(&ev, hit)
		return
	}
	in.replicasOn(src, ev, func(i int, r *engine.Replica) {
		hit = true
		in.countHit(i)
		spares, k := in.sparesOf(i)
		if !spares.out(k) {
			in.markFault(i, now) // (spares serve nothing: nothing to isolate)
		}
		var reason string
		switch ev.Mode {
		case ModeFailSlow, ModeHang, ModeLinkFlap:
		default:
			reason = crashReason(&ev)
		}
		strike(r, now, ev.Mode, reason, 1/ev.SpeedFraction)
		if ev.Mode == ModeFailSlow {
			eng.Schedule(now+ev.Repair, sim.PriorityFailure, func(sim.Time) { r.SetSlow(1) })
			return
		}
		av, _ := in.availOf(i)
		switch {
		case spares.idle[k]: // a waiting spare failed: it is repaired as a spare
			spares.failIdle(k, now)
		case spares.pending(k): // a spare failed during its swap
			spares.failPending(k, now, true, repairDetail(&ev))
		case spares.replaced[k]: // already out, repairing as a spare
		case spares.covers(ev.Repair) && ev.Mode != ModeHang && spares.swapIn(k, now, true, repairDetail(&ev)):
			// A long repair, and a spare took its place at once. (A hang is
			// not swapped: it must first be detected, by probes or timeouts.)
		default:
			if av.down[k] < 0 { // (a replica already down keeps its first repair's end)
				spares.waitRepair(k, now+ev.Repair)
			}
			av.markDownDetail(k, now, repairDetail(&ev))
		}
		in.refresh(i)
		eng.Schedule(now+ev.Repair, sim.PriorityFailure, func(t sim.Time) {
			if r.Up() && !r.Hung() {
				av.markUp(k, t) // already back (an earlier repair, a probe's restart)
				spares.backAsSpare(k, t)
				return
			}
			r.Recover(t, in.coldStart(i), func() {
				av.markUp(k, eng.Now())
				if in.drained[i] {
					in.drained[i] = false
					in.release(i)
				}
				spares.backAsSpare(k, eng.Now())
				in.refresh(i)
			})
			in.refresh(i)
		})
	})
	in.count(&ev, hit)
}

// coldStart is replica i's cold start after a repair now: the cold-start
// model's when one is configured (a decode replica keeps cold).
func (in *Injector) coldStart(i int) sim.Time {
	if in.coldOf != nil && in.decode(i) < 0 {
		return in.coldOf(i)
	}
	return in.cold
}

// countHit counts replica i hit by a failure.
func (in *Injector) countHit(i int) {
	in.counts.ReplicaHits++
	if in.decode(i) >= 0 {
		in.decHits++
	}
}

// repairDetail is failures.csv's detail of a failure: its category, and
// its repair path and time when it escalated.
func repairDetail(ev *Event) string {
	if ev.RepairPath == "" {
		return ev.Category
	}
	return fmt.Sprintf("%s: %s, %.2f h", ev.Category, ev.RepairPath, ev.Repair.Seconds()/3600)
}

// count books an event that hit the fleet.
func (in *Injector) count(ev *Event, hit bool) {
	if hit {
		in.counts.Events++
		in.counts.ByCategory[ev.Category]++
		if ev.Xid != 0 {
			in.counts.ByXid[fmt.Sprint(ev.Xid)]++
		}
	}
}

// degrade runs replica i's NVLink at fraction f of its bandwidth (on top
// of any degradation under way) from now for repair: its TP group's
// all-reduce slows (Replica.SetNVLinkFraction). It stays in service.
func (in *Injector) degrade(i int, r *engine.Replica, f float64, now, repair sim.Time) {
	if len(in.nvl[i]) == 0 {
		in.nvlSince[i] = now
	}
	in.nvl[i] = append(in.nvl[i], f)
	r.SetNVLinkFraction(product(in.nvl[i]))
	in.ap.eng.Schedule(now+repair, sim.PriorityFailure, func(t sim.Time) {
		l := in.nvl[i]
		for k, x := range l {
			if x == f {
				in.nvl[i] = append(l[:k], l[k+1:]...)
				break
			}
		}
		r.SetNVLinkFraction(product(in.nvl[i]))
		if len(in.nvl[i]) == 0 {
			in.counts.DegradedNs += t - in.nvlSince[i]
		}
	})
}

func product(xs []float64) float64 {
	p := 1.0
	for _, x := range xs {
		p *= x
	}
	return p
}

// Report is what stochastic failures did to the fleet over a run.
type FleetReport struct {
	Events      int            // failures that hit the fleet's GPUs
	ByCategory  map[string]int // events per profile row
	ByXid       map[string]int // events per Xid code
	ReplicaHits int            // replicas hit (one event can hit several)
	Drained     int            // replicas drained ahead of their failure
	Averted     int            // failures headed off by a proactive drain
	// Degraded counts replicas whose NVLink domain was degraded (a switch
	// tray out); DegradedNs is the replica-time they ran degraded.
	Degraded   int
	DegradedNs sim.Time
	// Spares is the number of warm spares; SparesUsed counts the times one
	// was swapped in for a long repair.
	Spares, SparesUsed int
	// MinAvailable is the fewest serving slots in service at once.
	MinAvailable int
	// DownNs is the serving-slot time out of service within the run;
	// DownGPUNs is the same in GPU-time (each replica's own GPUs).
	DownNs, DownGPUNs sim.Time
	// Outages are the completed outages' lengths, failure to back in
	// service (repair plus cold start), in the order they ended.
	Outages []sim.Time
	// TimeDown is, for each of DownShares by name, the fraction of the run
	// with at least that share of the slots out of service.
	TimeDown map[string]float64
	// IdleSpareNs is the replica-time spares spent waiting (IdleSpareNsOf:
	// by replica, nil without spares to wait); SpareRepairNs that of
	// replicas repaired while a spare held their place, SpareRepairGPUNs
	// the same in GPU-time (each replica's own GPUs).
	IdleSpareNs, SpareRepairNs, SpareRepairGPUNs sim.Time
	IdleSpareNsOf                                []sim.Time
	// Timeline is every replica going down or coming back, and every swap,
	// up to the end of the run.
	Timeline []TimelinePoint
	// Decode is the decode pool's availability in a disaggregated fleet
	// (nil when co-located); the figures above are then the prefill
	// pool's, but for Events, ByCategory, ByXid, ReplicaHits, Drained,
	// Averted and Degraded, which count both pools, and Timeline, which
	// holds both pools' rows.
	Decode *PoolReport
}

// PoolReport is the availability of a disaggregated fleet's decode pool.
type PoolReport struct {
	Replicas     int // serving decode replicas (disagg.decode.replicas)
	ReplicaHits  int // decode replicas hit (one event can hit several)
	MinAvailable int
	DownNs       sim.Time
	Outages      []sim.Time
	TimeDown     map[string]float64
	// The decode pool's warm spares ([failures] decode_spares), as
	// Report's.
	Spares, SparesUsed         int
	IdleSpareNs, SpareRepairNs sim.Time
}

// Report closes the books at end, the end of the run.
func (in *Injector) Report(end sim.Time) FleetReport {
	r := in.counts
	for i, l := range in.nvl {
		if len(l) > 0 && in.nvlSince[i] < end {
			r.DegradedNs += end - in.nvlSince[i]
		}
	}
	in.avail.report(&r, end)
	in.spares.report(&r, end)
	if in.decAvail != nil {
		var d FleetReport
		in.decAvail.report(&d, end)
		in.decSpares.report(&d, end)
		r.Decode = &PoolReport{Replicas: in.decAvail.slots, ReplicaHits: in.decHits, MinAvailable: d.MinAvailable,
			DownNs: d.DownNs, Outages: d.Outages, TimeDown: d.TimeDown, Spares: d.Spares, SparesUsed: d.SparesUsed,
			IdleSpareNs: d.IdleSpareNs, SpareRepairNs: d.SpareRepairNs}
	}
	return r
}
