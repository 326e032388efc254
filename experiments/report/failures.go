package report

import (
	"github.com/fleetsim/fleetsim/experiments/results"
	"math"
	"sort"

	"github.com/fleetsim/fleetsim/models/failures"
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
	return DistS{N: len(xs), Mean: results.Round6(sum / float64(len(xs))), P50: results.Round6(q(0.5)), P99: results.Round6(q(0.99)), Max: results.Round6(xs[len(xs)-1])}
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
		to[name] = results.Round6(f)
	}
}

// FailureStatsOf reports r over a run of end with replicas serving slots.
func FailureStatsOf(r failures.FleetReport, end sim.Time, replicas int) *FailureStats {
	st := &FailureStats{Events: r.Events, ByCategory: r.ByCategory, ByXid: r.ByXid, ReplicaHits: r.ReplicaHits,
		MinAvailableR: r.MinAvailable, Drained: r.Drained, Averted: r.Averted, Spares: r.Spares, SparesUsed: r.SparesUsed,
		ReplicaDownS: results.Round6(r.DownNs.Seconds()), TimeDownFraction: map[string]float64{},
		DegradedReplicas: r.Degraded, DegradedReplicaS: results.Round6(r.DegradedNs.Seconds())}
	st.TimeToRecoverS = outageDistS(r.Outages)
	roundShares(st.TimeDownFraction, r.TimeDown)
	st.Availability = results.Round6(1 - Ratio(st.ReplicaDownS, float64(replicas)*end.Seconds()))
	if d := r.Decode; d != nil {
		ds := &PoolFailureStats{Replicas: d.Replicas, ReplicaHits: d.ReplicaHits, ReplicaDownS: results.Round6(d.DownNs.Seconds()),
			MinAvailableR: d.MinAvailable, TimeDownFraction: map[string]float64{}, Spares: d.Spares, SparesUsed: d.SparesUsed,
			IdleSpareS: results.Round6(d.IdleSpareNs.Seconds()), SpareRepairS: results.Round6(d.SpareRepairNs.Seconds())}
		ds.TimeToRecoverS = outageDistS(d.Outages)
		roundShares(ds.TimeDownFraction, d.TimeDown)
		ds.Availability = results.Round6(1 - Ratio(ds.ReplicaDownS, float64(d.Replicas)*end.Seconds()))
		st.Decode = ds
	}
	return st
}
