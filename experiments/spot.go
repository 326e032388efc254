package experiments

import (
	"sort"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// mergeSpotTimeline merges failures' timeline (fail and repair rows) with
// the spot events up to end, in time order (failures first at a tie), and
// recomputes each row's GPUs down and capacity over the replicas down for
// either cause (a spot replica is down from its notice to its
// replacement's readiness, as in the spot timeline alone).
func mergeSpotTimeline(tl []failures.TimelinePoint, evs []fleet.SpotEvent, sc *scenario.Scenario, fl *fleet.Fleet, end sim.Time) []failures.TimelinePoint {
	type row struct {
		p       failures.TimelinePoint
		replica int
		down    bool
		spot    bool
	}
	var rows []row
	for _, p := range tl {
		rows = append(rows, row{p: p, replica: p.Replica, down: p.Event == failures.EventFail})
	}
	for _, e := range evs {
		if e.Time > end {
			continue
		}
		unit := sc.SpotUnit(e)
		rows = append(rows, row{p: failures.TimelinePoint{Time: e.Time, Event: e.Event, Unit: unit}, replica: e.Replica,
			down: e.Event != fleet.SpotReady, spot: true})
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].p.Time < rows[b].p.Time })
	n := sc.Cluster.Replicas
	downF, downS := make([]bool, len(fl.Replicas)), make([]bool, len(fl.Replicas))
	out := make([]failures.TimelinePoint, 0, len(rows))
	for _, r := range rows {
		switch {
		case r.replica < 0: // a row about no slot (a swap, a spare's own failure)
		case r.spot:
			downS[r.replica] = r.down
		default:
			downF[r.replica] = r.down
		}
		gpus, count := 0, 0
		for i := range downF {
			// A spot replica held as a warm spare (waiting, or in repair
			// while a spare took its place) holds no slot.
			if downF[i] || downS[i] && !fl.Life.HeldAt(i, r.p.Time, fleet.HoldSpare) {
				count++
				gpus += fl.ReplicaTP(i)
			}
		}
		p := r.p
		p.GPUsDown, p.Capacity = gpus, 1-float64(count)/float64(n)
		out = append(out, p)
	}
	return out
}
