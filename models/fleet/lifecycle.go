package fleet

// Hold is one mechanism's reason to keep a replica out of service. Every
// mechanism that takes replicas in and out of service (health probes,
// scripted maintenance, drains ahead of a failure, rollouts, spot
// interruptions, the autoscaler, warm spares) holds a replica with its own
// Hold and releases only its own (Pool.Hold, Pool.Release): a replica
// serves while it is up, no mechanism holds it, and its breaker is not open.
// So two mechanisms never undo each other: a spot replacement that comes
// up does not put back in rotation a replica the autoscaler is draining,
// and a probe's restart does not return a warm spare to service.
//
// A Hold is a bit: holding twice is holding once, and one release ends it.
type Hold uint16

// The holds, one per mechanism.
const (
	// HoldProbe: health probes ejected the replica; released when its
	// restart is ready (Health).
	HoldProbe Hold = 1 << iota
	// HoldMaintenance: a scripted maintenance ([[faults]] mode
	// "maintenance") drained it; released when it is back (failures).
	HoldMaintenance
	// HoldRepair: drained ahead of a predicted failure (a precursor),
	// released when repaired (failures).
	HoldRepair
	// HoldRollout: a green replica before its new version is loaded, or
	// after a rollback (rollout).
	HoldRollout
	// HoldSpot: a spot instance from the provider's notice until its
	// replacement serves (Spot).
	HoldSpot
	// HoldScaleIn: the autoscaler drains it before parking it.
	HoldScaleIn
	// HoldParked: the autoscaler has not provisioned it (no instance, no
	// engine, no cost).
	HoldParked
	// HoldSpare: a warm spare waiting, or a failed replica whose place a
	// spare took (failures' spare pool).
	HoldSpare
)

// rotationHolds are the holds that take a replica out of rotation: health
// probes skip such a replica. A parked replica is idle hardware and a warm
// spare a replica kept ready; both are probed.
const rotationHolds = HoldProbe | HoldMaintenance | HoldRepair | HoldRollout | HoldSpot | HoldScaleIn

// Hold takes replica i out of service for mechanism h (a no-op if h holds
// it already). A warm spare held out of service isolates a fault it had
// (for the time to isolate).
func (p *Pool) Hold(i int, h Hold) {
	if h&HoldSpare != 0 {
		p.health.noteIsolated(i, p.eng.Now())
	}
	p.holds[i] |= h
	p.refresh(i)
}

// Release ends mechanism h's hold on replica i (a no-op if h does not hold
// it); it serves again if nothing else holds it and it is up.
func (p *Pool) Release(i int, h Hold) {
	p.holds[i] &^= h
	p.refresh(i)
}

// Held reports whether mechanism h holds replica i.
func (p *Pool) Held(i int, h Hold) bool { return p.holds[i]&h != 0 }

// inRotation reports whether no mechanism holds replica i out of rotation
// (rotationHolds): health probes check it.
func (p *Pool) inRotation(i int) bool { return p.holds[i]&rotationHolds == 0 }
