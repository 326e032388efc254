package experiments

import (
	"sort"

	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// mergeSpotTimeline merges failures' timeline (fail and repair rows) with
// the spot events of one pool (the decode pool's when decode, of its
// slots serving replicas, whose unit unit names) up to end, in time order
// (failures first at a tie), and recomputes each of that pool's rows' GPUs
// down and capacity over its replicas down for either cause (a spot
// replica is down from its notice to its replacement's readiness, as in
// the spot timeline alone, unless it is held as a warm spare then: it
// holds no slot). The other pool's rows pass through.
func mergeSpotTimeline(tl []failures.TimelinePoint, evs []fleet.SpotEvent, pool *fleet.Pool, decode bool, slots int, unit func(fleet.SpotEvent) string, end sim.Time) []failures.TimelinePoint {
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
		rows = append(rows, row{p: failures.TimelinePoint{Time: e.Time, Event: e.Event, Unit: unit(e), Decode: decode}, replica: e.Replica,
			down: e.Event != fleet.SpotReady, spot: true})
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].p.Time < rows[b].p.Time })
	n := len(pool.Replicas)
	downF, downS := make([]bool, n), make([]bool, n)
	out := make([]failures.TimelinePoint, 0, len(rows))
	for _, r := range rows {
		if r.p.Decode != decode {
			out = append(out, r.p) // the other pool's
			continue
		}
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
			if downF[i] || downS[i] && !pool.Life.HeldAt(i, r.p.Time, fleet.HoldSpare) {
				count++
				gpus += pool.ReplicaTP(i)
			}
		}
		p := r.p
		p.GPUsDown, p.Capacity = gpus, 1-float64(count)/float64(slots)
		out = append(out, p)
	}
	return out
}
