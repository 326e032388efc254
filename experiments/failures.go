package experiments

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models"
	"github.com/fleetsim/fleetsim/models/faults"
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

// startFailures starts the scenario's stochastic failures on fleet, whose
// replicas beyond cluster.replicas are warm spares (newFleet).
func startFailures(eng *sim.Engine, fleet *models.Fleet, sc *Scenario, seed uint64) (*faults.Injector, error) {
	d := faults.Deps{Slots: sc.Cluster.Replicas, Rand: sim.NewStream(seed, streams.Failures),
		DurationS: sc.Workload.DurationS, HorizonS: sc.Run.HorizonS}
	// Each group of a fleet of groups fails from a stream of its own; the
	// first draws the fleet's stream, so that a fleet of one group fails
	// as the same fleet of one kind does.
	d.GroupRand = func(k int) *rand.Rand {
		if k == 0 {
			return sim.NewStream(seed, streams.Failures)
		}
		return sim.NewStream(seed, streams.GroupFailures(fleet.Groups[k].Name))
	}
	if c := sc.restartColdStart(); c != nil && !sc.has("failures.cold_start_s") {
		// Repairs end in a cold start from physics (a cold_start_s set
		// here is kept).
		d.ColdStart = fleet.RestartColdStart(*c)
	}
	if sc.Failures.DrainOnPrecursor {
		d.Drainer = policies.PrecursorDrain{}
	}
	return faults.NewApplier(eng, fleet).Start(sc.Failures, d)
}

// failureStats reports r over a run of end with replicas serving slots.
func failureStats(r faults.Report, end sim.Time, replicas int) *FailureStats {
	st := &FailureStats{Events: r.Events, ByCategory: r.ByCategory, ByXid: r.ByXid, ReplicaHits: r.ReplicaHits,
		MinAvailableR: r.MinAvailable, Drained: r.Drained, Averted: r.Averted, Spares: r.Spares, SparesUsed: r.SparesUsed,
		ReplicaDownS: round6(r.DownNs.Seconds()), TimeDownFraction: map[string]float64{},
		DegradedReplicas: r.Degraded, DegradedReplicaS: round6(r.DegradedNs.Seconds())}
	var ttr []float64
	for _, d := range r.Outages {
		ttr = append(ttr, d.Seconds())
	}
	st.TimeToRecoverS = distS(ttr)
	for name, f := range r.TimeDown {
		st.TimeDownFraction[name] = round6(f)
	}
	st.Availability = round6(1 - ratio(st.ReplicaDownS, float64(replicas)*end.Seconds()))
	return st
}
