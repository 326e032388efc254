package experiments

import (
	"fmt"
	"math"
	"sort"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
)

// FailuresConfig is a scenario's [failures] table: hardware and software
// failures of the serving fleet, drawn from a calibrated profile
// (models/failures; `fleetsim failures show PROFILE` prints its rates).
type FailuresConfig struct {
	// Enabled turns failures on. Default false.
	Enabled bool `toml:"enabled"`
	// Profile: "llama3" (default; Llama 3 Table 5 counts), "byterobust",
	// "meta-rsc", ... (see `fleetsim failures list`).
	Profile string `toml:"profile"`
	// RateMultiplier scales every rate, to see in hours what a fleet sees
	// in months (a stress test, not a forecast). Default 1.
	RateMultiplier float64 `toml:"rate_multiplier"`
	// ServersPerRack groups HGX servers behind a ToR switch. Default 4
	// (assumption).
	ServersPerRack int `toml:"servers_per_rack"`
	// ColdStartS is the weight loading of a serving replica after its
	// repair. Default 180 (the seeds' 2–4 min, CALIBRATION.md §4).
	ColdStartS float64 `toml:"cold_start_s"`
	// DrainOnPrecursor drains a replica gracefully when a precursor of its
	// failure is seen (policies.PrecursorDrain), so the failure finds it
	// empty. Default false.
	DrainOnPrecursor bool `toml:"drain_on_precursor"`
	// DrainGraceS is how long a drained replica may finish what it holds.
	// Default 60 (the seed's drain grace, CALIBRATION.md §6).
	DrainGraceS float64 `toml:"drain_grace_s"`
	// Spares is the number of warm spare replicas (the k of N+k), built
	// beyond cluster.replicas and paid for. When a replica fails with a
	// repair longer than SpareAfterS, an idle spare takes its place at once
	// (warm standby, ByteRobust, CALIBRATION.md §1); the repaired replica
	// becomes a spare. Default 0.
	Spares int `toml:"spares"`
	// SpareAfterS: repairs shorter than this are waited out. Default 600.
	SpareAfterS float64 `toml:"spare_after_s"`
}

// DefaultFailuresConfig is off, with the llama3 profile ready.
func DefaultFailuresConfig() FailuresConfig {
	return FailuresConfig{Profile: failures.ProfileLlama3, RateMultiplier: 1, ServersPerRack: 4, ColdStartS: 180, DrainGraceS: 60,
		SpareAfterS: 600}
}

// Validate records problems under prefix.
func (c *FailuresConfig) Validate(prefix string, ps *config.Problems) {
	ps.OneOf(prefix+".profile", c.Profile, failures.ProfileNames())
	ps.Positive(prefix+".rate_multiplier", c.RateMultiplier)
	ps.PositiveInt(prefix+".servers_per_rack", c.ServersPerRack)
	ps.NonNegative(prefix+".cold_start_s", c.ColdStartS)
	ps.NonNegative(prefix+".drain_grace_s", c.DrainGraceS)
	if c.Spares < 0 || c.Spares > 10000 {
		ps.Add(prefix+".spares", "must be between 0 and 10000, found %d", c.Spares)
	}
	ps.NonNegative(prefix+".spare_after_s", c.SpareAfterS)
}

// FailureStats is summary.json's failures block.
type FailureStats struct {
	Events        int            `json:"events"`         // failures that hit the fleet's GPUs
	ByCategory    map[string]int `json:"by_category"`    // events per profile row
	ByXid         map[string]int `json:"by_xid"`         // events per Xid code
	ReplicaHits   int            `json:"replica_hits"`   // replicas hit (one event can hit several)
	ReplicaDownS  float64        `json:"replica_down_s"` // replica-seconds out of service
	Availability  float64        `json:"availability"`   // 1 − down / (replicas × duration)
	MinAvailableR int            `json:"min_available_replicas"`
	Drained       int            `json:"drained_on_precursor"` // replicas drained ahead of their failure
	// TimeToRecoverS is how long replicas were out, failure to back in
	// service (repair plus cold start), over completed outages.
	TimeToRecoverS DistS `json:"time_to_recover_s"`
	// TimeDownFraction is the fraction of the run with at least the given
	// share of replicas out of service.
	TimeDownFraction map[string]float64 `json:"time_down_fraction"`
	Averted          int                `json:"averted"` // failures headed off by a proactive drain
	// Spares is the number of warm spare replicas held out of rotation;
	// SparesUsed counts the times one was swapped in for a long repair.
	Spares     int `json:"spares"`
	SparesUsed int `json:"spares_used"`
}

// DistS summarises durations in seconds (exact: outages are few).
type DistS struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func distS(xs []float64) DistS {
	if len(xs) == 0 {
		return DistS{}
	}
	sort.Float64s(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	q := func(p float64) float64 { return xs[int(math.Ceil(p*float64(len(xs))))-1] }
	return DistS{N: len(xs), Mean: round6(sum / float64(len(xs))), P50: round6(q(0.5)), P99: round6(q(0.99)), Max: round6(xs[len(xs)-1])}
}

// failureInjector feeds a failure source into a serving fleet, one pending
// event at a time, mapping each event's GPUs onto the replicas placed on
// them (replica i holds GPUs [i·TP, (i+1)·TP)).
type failureInjector struct {
	eng     *sim.Engine
	fleet   *models.Fleet
	src     *failures.Signals
	drainer models.PrecursorPolicy
	grace   sim.Time
	drained []bool
	averted map[failures.Event]bool // failures headed off by a proactive drain and repair
	tp      int
	cold    sim.Time
	stop    sim.Time // no events after this
	stats   FailureStats
	down    []sim.Time // when each replica went down, or -1
	spans   [][2]sim.Time
	// Timeline records every replica going down or coming back.
	Timeline []TimelinePoint
	gpusPer  int
	slots    int // serving replicas (cluster.replicas; spares are extra)

	// warm spares: idle[i] for a spare waiting; replaced[i] for a failed
	// replica whose place a spare took (it becomes a spare when repaired).
	idle, replaced []bool
	spareAfter     sim.Time
	idleSince      []sim.Time
	idleNs         sim.Time
	// replacedSince[i] is when replica i left service for a spare-pool
	// repair; spareRepairs are the closed [from, to) spans.
	replacedSince []sim.Time
	spareRepairs  [][2]sim.Time
}

// TimelinePoint is one line of failures.csv.
type TimelinePoint struct {
	Time     sim.Time
	Event    string // "fail" or "repair"
	Unit     string // what failed: the category, or the replica that came back
	GPUsDown int
	Capacity float64 // fraction of replicas up
}

// maxFailureEvents bounds the failures one serving run may draw.
const maxFailureEvents = 1e6

// startFailures starts the failure injector on fleet, whose replicas
// beyond cluster.replicas are warm spares (newFleet).
func startFailures(eng *sim.Engine, fleet *models.Fleet, sc *Scenario, seed uint64) (*failureInjector, error) {
	c := sc.Failures
	spares := len(fleet.Replicas) - sc.Cluster.Replicas
	prof, err := failures.LookupProfile(c.Profile)
	if err != nil {
		return nil, err
	}
	scaled := *prof
	scaled.Rows = append([]failures.Row(nil), prof.Rows...)
	for i := range scaled.Rows {
		scaled.Rows[i].PerGPUHour *= c.RateMultiplier
	}
	gpu := sc.Catalog().GPUs[sc.Cluster.GPU]
	n := fleet.Place.Domains
	var topo failures.Topology
	if gpu.DomainGPUs == 72 {
		topo = failures.NVL72(n)
	} else {
		topo = failures.HGX(n, c.ServersPerRack)
	}
	if sc.Workload.DurationS > 0 {
		// Failures stop with the arrivals; a multiplier that would draw
		// more than maxFailureEvents in that time is a mistake, not a study.
		expect := scaled.RatePerGPUHour() * float64(topo.GPUs()) * sc.Workload.DurationS / 3600
		if expect > maxFailureEvents {
			return nil, fmt.Errorf("failures.rate_multiplier: %g gives about %.3g failures on %d GPUs in workload.duration_s = %g; at most %g (lower the multiplier)",
				c.RateMultiplier, expect, topo.GPUs(), sc.Workload.DurationS, float64(maxFailureEvents))
		}
	}
	gen, err := failures.NewGenerator(&scaled, topo, sim.NewStream(seed, "failures"))
	if err != nil {
		return nil, err
	}
	fi := &failureInjector{eng: eng, fleet: fleet, src: failures.NewSignals(gen, scaled.MaxPrecursorLead()), tp: sc.Cluster.TP, cold: sim.FromSeconds(c.ColdStartS), gpusPer: sc.Cluster.TP,
		stats: FailureStats{ByCategory: map[string]int{}, ByXid: map[string]int{}, MinAvailableR: sc.Cluster.Replicas, Spares: spares},
		down:  make([]sim.Time, len(fleet.Replicas)), slots: sc.Cluster.Replicas}
	for i := range fi.down {
		fi.down[i] = -1
	}
	fi.drained = make([]bool, len(fleet.Replicas))
	fi.idle = make([]bool, len(fleet.Replicas))
	fi.replaced = make([]bool, len(fleet.Replicas))
	fi.idleSince = make([]sim.Time, len(fleet.Replicas))
	fi.replacedSince = make([]sim.Time, len(fleet.Replicas))
	fi.spareAfter = sim.FromSeconds(c.SpareAfterS)
	for i := sc.Cluster.Replicas; i < len(fleet.Replicas); i++ {
		fi.idle[i] = true
		fleet.SetReserved(i, true)
	}
	fi.averted = map[failures.Event]bool{}
	fi.grace = sim.FromSeconds(c.DrainGraceS)
	if c.DrainOnPrecursor {
		fi.drainer = policies.PrecursorDrain{}
	}
	// Failures stop with the arrivals: a failure after the workload ends
	// would only keep a drained run alive.
	fi.stop = sim.Forever
	if sc.Workload.DurationS > 0 {
		fi.stop = sim.FromSeconds(sc.Workload.DurationS)
	}
	if sc.Run.HorizonS > 0 {
		fi.stop = min(fi.stop, sim.FromSeconds(sc.Run.HorizonS))
	}
	fi.pull()
	return fi, nil
}

func (fi *failureInjector) pull() {
	sig, ok := fi.src.Next()
	if !ok || sig.Time > fi.stop {
		return
	}
	fi.eng.Schedule(sig.Time, sim.PriorityFailure, func(now sim.Time) {
		if fi.fleet.Drained() {
			return // the workload is over and every request done: stop failing
		}
		if sig.Precursor {
			fi.precursor(sig.Event, now)
		} else {
			fi.apply(sig.Event, now)
		}
		fi.pull()
	})
}

// replicasOn calls fn for every replica on the event's GPUs.
func (fi *failureInjector) replicasOn(ev failures.Event, fn func(i int, r *models.Replica)) {
	first, n := ev.FirstGPU, ev.GPUs
	if ev.DownGPUs > 0 {
		first, n = ev.DownFirstGPU, ev.DownGPUs
	}
	for i, r := range fi.fleet.Replicas {
		rf, rn := fi.fleet.Place.ReplicaGPUs(i)
		if first < rf+rn && first+n > rf {
			fn(i, r)
		}
	}
}

// precursor drains the replicas a coming failure will hit, if the policy
// says so, and repairs them at once: the part is replaced before it fails,
// so the failure is averted.
func (fi *failureInjector) precursor(ev failures.Event, now sim.Time) {
	if fi.drainer == nil || !fi.drainer.Drain(string(ev.Component)) {
		return
	}
	fi.averted[ev] = true
	fi.replicasOn(ev, func(i int, r *models.Replica) {
		if fi.drained[i] || !r.Up() || fi.idle[i] || fi.replaced[i] {
			return // spares are not serving: nothing to drain
		}
		fi.drained[i] = true
		fi.stats.Drained++
		// With a warm spare, the spare takes the replica's place before it
		// drains (ByteRobust's warm standby, CALIBRATION.md §1): no capacity
		// is lost to the drain or the repair.
		swapped := ev.Repair >= fi.spareAfter && fi.swapInSpare(i, now)
		fi.fleet.Drain(i, fi.grace, func(t sim.Time) {
			if !swapped {
				fi.markDown(i, t)
			}
			fi.eng.Schedule(t+ev.Repair, sim.PriorityFailure, func(t sim.Time) {
				r.Recover(t, fi.cold, func() {
					fi.markUp(i, fi.eng.Now())
					fi.drained[i] = false
					fi.fleet.SetInRotation(i, true)
					fi.backAsSpare(i, fi.eng.Now())
				})
			})
		})
	})
}

// apply hits every replica on the event's GPUs.
func (fi *failureInjector) apply(ev failures.Event, now sim.Time) {
	if fi.averted[ev] {
		delete(fi.averted, ev)
		fi.stats.Averted++
		return
	}
	hit := false
	fi.replicasOn(ev, func(i int, r *models.Replica) {
		hit = true
		fi.stats.ReplicaHits++
		if !fi.idle[i] && !fi.replaced[i] {
			fi.fleet.MarkFault(i, now) // (spares serve nothing: nothing to isolate)
		}
		switch ev.Mode {
		case failures.ModeFailSlow:
			r.SetSlow(1 / ev.SpeedFraction)
			fi.eng.Schedule(now+ev.Repair, sim.PriorityFailure, func(sim.Time) { r.SetSlow(1) })
			return
		case failures.ModeHang:
			r.Hang(now)
		case failures.ModeLinkFlap:
			r.FailInFlight(now, models.FailNVLink)
		default:
			reason := fmt.Sprintf("%s (%s)", models.FailCrashed, ev.Category)
			if ev.Mode == failures.ModeOOM {
				reason = models.FailOOM
			}
			r.Fail(now, reason)
		}
		switch {
		case fi.idle[i]: // a waiting spare failed: it is repaired as a spare
			fi.idle[i] = false
			fi.idleNs += now - fi.idleSince[i]
			fi.replaced[i], fi.replacedSince[i] = true, now
			fi.record(now, "spare-fail", fmt.Sprintf("replica %d", i))
		case fi.replaced[i]: // already out, repairing as a spare
		case ev.Repair >= fi.spareAfter && ev.Mode != failures.ModeHang && fi.swapInSpare(i, now):
			// A long repair, and a spare took its place at once. (A hang is
			// not swapped: it must first be detected, by probes or timeouts.)
		default:
			fi.markDown(i, now)
		}
		fi.fleet.Refresh(i)
		fi.eng.Schedule(now+ev.Repair, sim.PriorityFailure, func(t sim.Time) {
			if r.Up() && !r.Hung() {
				fi.markUp(i, t) // already back (an earlier repair, a probe's restart)
				fi.backAsSpare(i, t)
				return
			}
			r.Recover(t, fi.cold, func() {
				fi.markUp(i, fi.eng.Now())
				if fi.drained[i] {
					fi.drained[i] = false
					fi.fleet.SetInRotation(i, true)
				}
				fi.backAsSpare(i, fi.eng.Now())
				fi.fleet.Refresh(i)
			})
			fi.fleet.Refresh(i)
		})
	})
	if hit {
		fi.stats.Events++
		fi.stats.ByCategory[ev.Category]++
		if ev.Xid != 0 {
			fi.stats.ByXid[fmt.Sprint(ev.Xid)]++
		}
	}
}

// swapInSpare puts an idle, healthy spare in failed replica i's place and
// reports whether there was one.
func (fi *failureInjector) swapInSpare(i int, now sim.Time) bool {
	for j, idle := range fi.idle {
		if r := fi.fleet.Replicas[j]; !idle || !r.Up() || r.Hung() {
			continue
		}
		fi.idle[j] = false
		fi.idleNs += now - fi.idleSince[j]
		fi.replaced[i], fi.replacedSince[i] = true, now
		fi.fleet.SetReserved(i, true)
		fi.fleet.SetReserved(j, false)
		fi.stats.SparesUsed++
		fi.record(now, "spare", fmt.Sprintf("replica %d for %d", j, i))
		return true
	}
	return false
}

// backAsSpare makes a repaired replica whose place a spare took a spare.
func (fi *failureInjector) backAsSpare(i int, now sim.Time) {
	if !fi.replaced[i] {
		return
	}
	fi.replaced[i] = false
	fi.spareRepairs = append(fi.spareRepairs, [2]sim.Time{fi.replacedSince[i], now})
	fi.idle[i] = true
	fi.idleSince[i] = now
	fi.record(now, "spare-ready", fmt.Sprintf("replica %d", i))
}

// spareRepairS is the replica-seconds replicas spent out of service in
// repair while a spare held their place (and spares that failed idle), up
// to end: down time that availability does not count, since capacity held.
func (fi *failureInjector) spareRepairS(end sim.Time) float64 {
	var t sim.Time
	for _, sp := range fi.spareRepairs {
		t += max(0, min(sp[1], end)-min(sp[0], end))
	}
	for i, rep := range fi.replaced {
		if rep && fi.replacedSince[i] < end {
			t += end - fi.replacedSince[i]
		}
	}
	return round6(t.Seconds())
}

// idleSpareS is the replica-seconds spares spent waiting, up to end.
func (fi *failureInjector) idleSpareS(end sim.Time) float64 {
	t := fi.idleNs
	for i, idle := range fi.idle {
		if idle && fi.idleSince[i] < end {
			t += end - fi.idleSince[i]
		}
	}
	return round6(t.Seconds())
}

func (fi *failureInjector) markDown(i int, now sim.Time) {
	if fi.down[i] < 0 {
		fi.down[i] = now
		fi.record(now, "fail", fmt.Sprintf("replica %d", i))
	}
	fi.stats.MinAvailableR = min(fi.stats.MinAvailableR, fi.slots-fi.downCount())
}

func (fi *failureInjector) markUp(i int, now sim.Time) {
	if fi.down[i] >= 0 {
		fi.spans = append(fi.spans, [2]sim.Time{fi.down[i], now})
		fi.down[i] = -1
		fi.record(now, "repair", fmt.Sprintf("replica %d", i))
	}
}

func (fi *failureInjector) record(now sim.Time, event, unit string) {
	down := fi.downCount()
	fi.Timeline = append(fi.Timeline, TimelinePoint{Time: now, Event: event, Unit: unit, GPUsDown: down * fi.gpusPer,
		Capacity: 1 - float64(down)/float64(fi.slots)})
}

// downCount is the number of serving replicas out (spares are not serving).
func (fi *failureInjector) downCount() int {
	n := 0
	for _, d := range fi.down {
		if d >= 0 {
			n++
		}
	}
	return n
}

// finish closes down intervals at end and returns the block.
func (fi *failureInjector) finish(end sim.Time, replicas int) *FailureStats {
	// Repairs can end after the run (the engine fires them anyway): clip
	// every down interval to the run.
	var down sim.Time
	for _, sp := range fi.spans {
		down += max(0, min(sp[1], end)-min(sp[0], end))
	}
	for _, d := range fi.down {
		if d >= 0 && d < end {
			down += end - d
		}
	}
	fi.stats.ReplicaDownS = round6(down.Seconds())
	var ttr []float64
	type edge struct {
		t sim.Time
		d int
	}
	var edges []edge
	for _, sp := range fi.spans {
		ttr = append(ttr, (sp[1] - sp[0]).Seconds())
		if a, b := min(sp[0], end), min(sp[1], end); b > a {
			edges = append(edges, edge{a, 1}, edge{b, -1})
		}
	}
	for _, d := range fi.down {
		if d >= 0 && d < end {
			edges = append(edges, edge{d, 1}, edge{end, -1})
		}
	}
	fi.stats.TimeToRecoverS = distS(ttr)
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].d < edges[j].d
	})
	shares := []struct {
		name string
		frac float64
	}{{"any", 1e-9}, {"10%", 0.10}, {"25%", 0.25}, {"50%", 0.50}}
	fi.stats.TimeDownFraction = map[string]float64{}
	for _, sh := range shares {
		var at sim.Time
		var total sim.Time
		count := 0
		for _, e := range edges {
			if float64(count)/float64(replicas) >= sh.frac && count > 0 {
				total += e.t - at
			}
			count += e.d
			at = e.t
		}
		fi.stats.TimeDownFraction[sh.name] = round6(ratio(float64(total), float64(end)))
	}
	fi.stats.Availability = round6(1 - ratio(fi.stats.ReplicaDownS, float64(replicas)*end.Seconds()))
	return &fi.stats
}
