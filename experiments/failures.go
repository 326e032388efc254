package experiments

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
)

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
	// DegradedReplicas counts replicas whose NVLink domain was degraded (a
	// switch tray out: slower, still serving); DegradedReplicaS is the
	// replica-seconds they ran degraded. Absent without such failures.
	DegradedReplicas int     `json:"degraded_replicas,omitempty"`
	DegradedReplicaS float64 `json:"degraded_replica_s,omitempty"`
	// Decode is a disaggregated fleet's decode pool (absent when
	// co-located); the availability figures above are then the prefill
	// pool's, and events, by_category, by_xid, replica_hits, drained and
	// averted count both pools.
	Decode *PoolFailureStats `json:"decode,omitempty"`
}

// PoolFailureStats is the availability of one pool of a disaggregated
// fleet (summary.json's failures.decode).
type PoolFailureStats struct {
	Replicas         int                `json:"replicas"`
	ReplicaHits      int                `json:"replica_hits"`
	ReplicaDownS     float64            `json:"replica_down_s"`
	Availability     float64            `json:"availability"`
	MinAvailableR    int                `json:"min_available_replicas"`
	TimeToRecoverS   DistS              `json:"time_to_recover_s"`
	TimeDownFraction map[string]float64 `json:"time_down_fraction"`
	// Spares is the pool's warm spares ([failures] decode_spares);
	// SparesUsed the times one was swapped in; IdleSpareS the
	// replica-seconds they waited unused; SpareRepairS those of replicas
	// repaired while a spare held their place.
	Spares       int     `json:"spares"`
	SparesUsed   int     `json:"spares_used"`
	IdleSpareS   float64 `json:"idle_spare_s"`
	SpareRepairS float64 `json:"spare_repair_s"`
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

// groupSpares is the warm spares of a fleet of groups (each group's
// spares), 0 without [failures] (nothing fails: no spares are built).
func (s *Scenario) groupSpares() int {
	n := 0
	if s.Failures.Enabled {
		for _, g := range s.Cluster.Groups {
			n += max(g.Spares, 0)
		}
	}
	return n
}

// startFailures starts the scenario's stochastic failures on fleet, whose
// replicas beyond cluster.replicas are warm spares (newFleet).
func startFailures(eng *sim.Engine, fl *fleet.Fleet, sc *Scenario, seed uint64) (*failures.Injector, error) {
	d := failures.Deps{Slots: sc.Cluster.Replicas, DecodeSlots: sc.Disagg.Decode.Replicas, Rand: sim.NewStream(seed, streams.Failures),
		DurationS: sc.Workload.DurationS, HorizonS: sc.Run.HorizonS}
	// Each group of a fleet of groups fails from a stream of its own; the
	// first draws the fleet's stream, so that a fleet of one group fails
	// as the same fleet of one kind does.
	d.GroupRand = func(k int) *rand.Rand {
		if k == 0 {
			return sim.NewStream(seed, streams.Failures)
		}
		return sim.NewStream(seed, streams.GroupFailures(fl.Groups[k].Name))
	}
	if c := sc.restartColdStart(); c != nil && !sc.has("failures.cold_start_s") {
		// Repairs end in a cold start from physics (a cold_start_s set
		// here is kept).
		d.ColdStart = fl.RestartColdStart(*c)
	}
	if sc.Failures.DrainOnPrecursor {
		d.Drainer = policies.PrecursorDrain{}
	}
	if sc.groupSpares() > 0 {
		d.SpareKind = fl.SpareKinds() // a group's spares stand in for its own replicas only
	}
	return failures.NewApplier(eng, fl).Start(sc.Failures, d)
}

// outageDistS is the distribution of the outages' lengths, in seconds.
func outageDistS(outages []sim.Time) DistS {
	ttr := make([]float64, 0, len(outages))
	for _, o := range outages {
		ttr = append(ttr, o.Seconds())
	}
	return distS(ttr)
}

// roundShares copies each time-down share of from into to, rounded.
func roundShares(to, from map[string]float64) {
	for name, f := range from {
		to[name] = round6(f)
	}
}

// failureStats reports r over a run of end with replicas serving slots.
func failureStats(r failures.FleetReport, end sim.Time, replicas int) *FailureStats {
	st := &FailureStats{Events: r.Events, ByCategory: r.ByCategory, ByXid: r.ByXid, ReplicaHits: r.ReplicaHits,
		MinAvailableR: r.MinAvailable, Drained: r.Drained, Averted: r.Averted, Spares: r.Spares, SparesUsed: r.SparesUsed,
		ReplicaDownS: round6(r.DownNs.Seconds()), TimeDownFraction: map[string]float64{},
		DegradedReplicas: r.Degraded, DegradedReplicaS: round6(r.DegradedNs.Seconds())}
	st.TimeToRecoverS = outageDistS(r.Outages)
	roundShares(st.TimeDownFraction, r.TimeDown)
	st.Availability = round6(1 - ratio(st.ReplicaDownS, float64(replicas)*end.Seconds()))
	if d := r.Decode; d != nil {
		ds := &PoolFailureStats{Replicas: d.Replicas, ReplicaHits: d.ReplicaHits, ReplicaDownS: round6(d.DownNs.Seconds()),
			MinAvailableR: d.MinAvailable, TimeDownFraction: map[string]float64{}, Spares: d.Spares, SparesUsed: d.SparesUsed,
			IdleSpareS: round6(d.IdleSpareNs.Seconds()), SpareRepairS: round6(d.SpareRepairNs.Seconds())}
		ds.TimeToRecoverS = outageDistS(d.Outages)
		roundShares(ds.TimeDownFraction, d.TimeDown)
		ds.Availability = round6(1 - ratio(ds.ReplicaDownS, float64(d.Replicas)*end.Seconds()))
		st.Decode = ds
	}
	return st
}

// resolveServingSpares sets failures.spares from failures.spare_coverage,
// if given: the fewest warm spare replicas that cover the replicas in
// repair with that probability, for replicas packed on the cluster's GPUs
// (HGX servers, ServersPerRack to a rack, or NVL72 racks for a 72-GPU
// NVLink domain). Its problems, and those of the keys it reads, are left
// to Validate.
func (s *Scenario) resolveServingSpares(has func(string) bool, ps *config.Problems) {
	f := &s.Failures
	if f.SpareCoverage == 0 {
		return
	}
	switch {
	case has("failures.spares"):
		ps.Add("failures.spare_coverage", "sizes the spares: remove failures.spares (%d) or this key", f.Spares)
		return
	case len(s.Cluster.Groups) > 0 || s.Disagg.Enabled:
		what := "failures.spares"
		if len(s.Cluster.Groups) > 0 {
			what = "spares in each [[cluster.groups]] table"
		}
		ps.Add("failures.spare_coverage", "cannot be combined with [[cluster.groups]] or [disagg] yet (set %s)", what)
		return
	}
	gpu, ok := s.Catalog().GPUs[s.Cluster.GPU]
	w := s.Cluster.GPUsPerReplica()
	if !f.Enabled || !ok || w <= 0 || s.Cluster.Replicas <= 0 || !(f.SpareCoverage > 0 && f.SpareCoverage < 1) ||
		!(f.RateMultiplier > 0) || f.ServersPerRack <= 0 {
		return
	}
	prof, err := f.BuildProfile()
	if err != nil {
		return
	}
	gpus := s.Cluster.Replicas * w
	var topo failures.Topology
	if gpu.DomainGPUs == 72 {
		topo = failures.NVL72((gpus + 71) / 72)
	} else {
		topo = failures.HGX((gpus+7)/8, f.ServersPerRack)
	}
	if f.RacksPerRow > 0 {
		topo.RacksPerRow = f.RacksPerRow
	}
	f.Spares = prof.Scaled(f.RateMultiplier).UnitSparesAt(topo, gpus, w, f.SpareCoverage)
	if f.Spares > s.Cluster.Replicas {
		// M/G/∞ counts failures in repair as if the fleet were endless: past
		// the fleet's own size the count means nothing.
		ps.Add("failures.spare_coverage", "would hold %d replicas in repair at once, more than cluster.replicas (%d): "+
			"the sizing assumes few are out at once; lower failures.rate_multiplier or set failures.spares", f.Spares, s.Cluster.Replicas)
	}
}
