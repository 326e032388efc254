package failures

import (
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// SparePool keeps the fleet's warm spares: replicas beyond the serving
// slots, held out of service (fleet.HoldSpare) until a replica fails with
// a long repair; then an idle, healthy spare takes its place at once (warm
// standby, ByteRobust, CALIBRATION.md §1) and the failed replica, once
// repaired, becomes a spare. It measures the replica-time spares spent idle
// and the repairs they covered (down time that availability does not
// count, since capacity held).
type SparePool struct {
	fleet *fleet.Pool   // the primary pool, or a disaggregated fleet's decode pool
	avail *Availability // the timeline the swaps are logged on
	after sim.Time      // repairs shorter than this are waited out
	eng   *sim.Engine
	// swap is the reconfiguration delay of a swap: the spare serves only
	// after it (0: at once).
	swap sim.Time

	// idle[i]: spare i waits; replaced[i]: a spare took failed replica
	// i's place (it becomes a spare when repaired).
	idle, replaced []bool
	// pendingFor[j] is the replica whose place spare j is taking during
	// its swap delay, or -1.
	pendingFor []int
	idleSince  []sim.Time
	idleNs     sim.Time
	// replacedSince[i] is when replica i left service for a spare-covered
	// repair; repairs are the closed [from, to) spans.
	replacedSince []sim.Time
	repairs       []outage
	// idleNsOf[i] is idleNs's part that spare i waited.
	idleNsOf []sim.Time
	// repairUntil[i] is when the repair ends of serving replica i, down
	// with no spare in its place (waitRepair; read while it is down).
	repairUntil []sim.Time
	size        int
	usedAt      []sim.Time // when each swap was
	// kind[i] is replica i's kind (SpareKinds: its group in a fleet of
	// groups): a spare stands in only for a replica of its kind. nil: any.
	kind []int
}

// newSparePool holds fleet's replicas from slots on out of service as
// spares.
func newSparePool(eng *sim.Engine, fl *fleet.Pool, avail *Availability, slots int, after, swap sim.Time) *SparePool {
	n := len(fl.Replicas)
	sp := &SparePool{eng: eng, fleet: fl, avail: avail, after: after, swap: swap, size: n - slots,
		idle: make([]bool, n), replaced: make([]bool, n), idleSince: make([]sim.Time, n), replacedSince: make([]sim.Time, n),
		pendingFor: make([]int, n), idleNsOf: make([]sim.Time, n), repairUntil: make([]sim.Time, n)}
	for i := range sp.pendingFor {
		sp.pendingFor[i] = -1
	}
	for i := slots; i < n; i++ {
		sp.idle[i] = true
		fl.Hold(i, fleet.HoldSpare)
	}
	return sp
}

// out reports whether replica i is out of the serving slots: a spare
// waiting, or a failed replica whose place a spare took.
func (sp *SparePool) out(i int) bool { return sp.idle[i] || sp.replaced[i] || sp.pendingFor[i] >= 0 }

// pending reports whether spare i is in its swap delay.
func (sp *SparePool) pending(i int) bool { return sp.pendingFor[i] >= 0 }

// covers reports whether a repair of this length is covered by a spare
// (if one is idle).
func (sp *SparePool) covers(repair sim.Time) bool { return repair >= sp.after }

// swapIn puts an idle, healthy spare in failed replica i's place and
// reports whether there was one. With a swap delay the spare serves only
// after it; when failed is set (i has failed, not been drained ahead of
// its failure), i's slot is down until then.
func (sp *SparePool) swapIn(i int, now sim.Time, failed bool, detail string) bool {
	if !sp.standsFor(i) {
		return false
	}
	for j := range sp.idle {
		if !sp.spareFor(j, i) {
			continue
		}
		sp.idle[j] = false
		sp.idleNs += now - sp.idleSince[j]
		sp.idleNsOf[j] += now - sp.idleSince[j]
		sp.replaced[i], sp.replacedSince[i] = true, now
		sp.fleet.Hold(i, fleet.HoldSpare)
		sp.fleet.StandIn(i, j)
		sp.usedAt = append(sp.usedAt, now)
		if sp.swap <= 0 {
			sp.fleet.Release(j, fleet.HoldSpare)
			unit := fmt.Sprintf("%s %d for %d", sp.avail.name, j, i)
			if failed && sp.avail.down[i] >= 0 {
				// i was already down (a failure while in repair): its
				// slot serves again, through the spare.
				sp.avail.markUpAs(i, now, EventSpare, unit)
			} else {
				sp.avail.record(now, EventSpare, unit)
			}
			return true
		}
		if failed {
			sp.avail.markDownDetail(i, now, fmt.Sprintf("%s; spare swap %.0f s", detail, sp.swap.Seconds()))
		}
		sp.avail.recordDetail(now, EventSpare, fmt.Sprintf("%s %d for %d", sp.avail.name, j, i), fmt.Sprintf("serves after a %.0f s swap", sp.swap.Seconds()))
		sp.pendingFor[j] = i
		sp.eng.Schedule(now+sp.swap, sim.PriorityFailure, func(t sim.Time) {
			if sp.pendingFor[j] != i {
				return // the spare failed during its swap (failPending)
			}
			sp.pendingFor[j] = -1
			sp.fleet.Release(j, fleet.HoldSpare)
			sp.fleet.Refresh(j)
			unit := fmt.Sprintf("%s %d for %d", sp.avail.name, j, i)
			if failed && sp.avail.down[i] >= 0 {
				sp.avail.markUpAs(i, t, EventSpareIn, unit) // the slot serves again
			} else {
				sp.avail.record(t, EventSpareIn, unit)
			}
		})
		return true
	}
	return false
}

// failPending handles spare j failing during its swap delay: it is
// repaired as a spare, and the replica whose place it was taking gets
// another idle spare, or keeps its own place (it serves again once
// repaired).
func (sp *SparePool) failPending(j int, now sim.Time, failed bool, detail string) {
	i := sp.pendingFor[j]
	sp.pendingFor[j] = -1
	sp.replaced[j], sp.replacedSince[j] = true, now
	sp.avail.record(now, EventSpareFail, sp.avail.unit(j))
	sp.replaced[i] = false
	sp.fleet.StandIn(i, j) // i has its place back, unless another spare takes it
	if !sp.swapIn(i, now, failed, detail) {
		sp.fleet.Release(i, fleet.HoldSpare)
		sp.fleet.Refresh(i)
	}
}

// failIdle takes a waiting spare that failed out of the pool: it is
// repaired as a spare.
func (sp *SparePool) failIdle(i int, now sim.Time) {
	sp.idle[i] = false
	sp.idleNs += now - sp.idleSince[i]
	sp.idleNsOf[i] += now - sp.idleSince[i]
	sp.replaced[i], sp.replacedSince[i] = true, now
	sp.avail.record(now, EventSpareFail, sp.avail.unit(i))
}

// backAsSpare makes a repaired replica whose place a spare took a spare.
func (sp *SparePool) backAsSpare(i int, now sim.Time) {
	if !sp.replaced[i] {
		return
	}
	sp.replaced[i] = false
	sp.repairs = append(sp.repairs, outage{i, sp.replacedSince[i], now})
	sp.idle[i] = true
	sp.idleSince[i] = now
	sp.avail.record(now, EventSpareReady, sp.avail.unit(i))
	sp.coverWaiting(now)
}

// waitRepair notes that serving replica i went down at now for a repair
// that ends at until, with no spare to take its place.
func (sp *SparePool) waitRepair(i int, until sim.Time) { sp.repairUntil[i] = until }

// coverWaiting puts the idle spares in the places of serving replicas
// still down for a repair of spare_after_s or more from now (the longest
// first, then by index), as a spare of their kind is free: a spare
// repaired while a replica waits for a long repair takes its place then,
// not only at the replica's next failure. Hung replicas are left to
// detection, as at their failure.
func (sp *SparePool) coverWaiting(now sim.Time) {
	for {
		best := -1
		for i, d := range sp.avail.down {
			if d < 0 || !sp.standsFor(i) || sp.repairUntil[i]-now < sp.after || sp.fleet.Replicas[i].Hung() || !sp.idleOfKind(i) {
				continue
			}
			if best < 0 || sp.repairUntil[i] > sp.repairUntil[best] {
				best = i
			}
		}
		if best < 0 || !sp.swapIn(best, now, true, "") {
			return
		}
	}
}

// standsFor reports whether a spare may stand in for replica i: it holds
// a serving slot (it is not out of the slots itself), and the autoscaler,
// if any, has it in service (a spare never takes the place of a replica
// the autoscaler parked, starts or drains: fleet.AutoscaleHolds).
func (sp *SparePool) standsFor(i int) bool {
	return !sp.out(i) && !sp.fleet.Held(i, fleet.AutoscaleHolds)
}

// idleOfKind reports whether an idle, healthy spare could stand in for
// replica i.
func (sp *SparePool) idleOfKind(i int) bool {
	for j := range sp.idle {
		if sp.spareFor(j, i) {
			return true
		}
	}
	return false
}

// spareFor reports whether replica j is an idle, healthy spare that can
// stand in for replica i (one of its kind): its lifecycle phase is spare
// (up, not interrupted by spot), and it is not hung.
func (sp *SparePool) spareFor(j, i int) bool {
	return sp.idle[j] && sp.fleet.Life.Phase(j) == fleet.PhaseSpare && !sp.fleet.Replicas[j].Hung() &&
		(sp.kind == nil || sp.kind[j] == sp.kind[i])
}

// report fills r's spare figures up to end.
func (sp *SparePool) report(r *FleetReport, end sim.Time) {
	r.Spares = sp.size
	for _, t := range sp.usedAt { // (repairs, and so swaps, can come after the run's end)
		if t <= end {
			r.SparesUsed++
		}
	}
	// Replicas out of service in repair while a spare held their place
	// (and spares that failed idle).
	for _, s := range sp.repairs {
		d := max(0, min(s.to, end)-min(s.from, end))
		r.SpareRepairNs += d
		r.SpareRepairGPUNs += d * sim.Time(sp.avail.gpusOf(s.replica))
	}
	for i, rep := range sp.replaced {
		if rep && sp.replacedSince[i] < end {
			r.SpareRepairNs += end - sp.replacedSince[i]
			r.SpareRepairGPUNs += (end - sp.replacedSince[i]) * sim.Time(sp.avail.gpusOf(i))
		}
	}
	// Spares waiting. (A wait that ended after end counts whole.)
	r.IdleSpareNs = sp.idleNs
	r.IdleSpareNsOf = slices.Clone(sp.idleNsOf)
	for i, idle := range sp.idle {
		if idle && sp.idleSince[i] < end {
			r.IdleSpareNs += end - sp.idleSince[i]
			r.IdleSpareNsOf[i] += end - sp.idleSince[i]
		}
	}
}
