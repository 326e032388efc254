package models

import "github.com/fleetsim/fleetsim/sim"

// The decode pool's failures and health checks. A decode replica is
// hardware like a prefill replica: stochastic failures ([failures], package
// faults) strike it by its GPUs' place in the failure topology, probes
// ([policies.probe]) watch it and eject, restart and readmit it, and a
// drain takes it out of the decode choice. What it holds when it dies
// loses its KV: those requests are prefilled again (Disagg.rePrefill,
// counted in DisaggStats.RePrefills and DecodeLost).

// decodeProbed is the decode pool as the health checker sees it.
type decodeProbed struct{ d *Disagg }

var _ probed = decodeProbed{}

func (p decodeProbed) size() int                    { return len(p.d.Decode) }
func (p decodeProbed) replica(j int) *Replica       { return p.d.Decode[j] }
func (p decodeProbed) inRotation(j int) bool        { return p.d.decRot[j] }
func (p decodeProbed) SetInRotation(j int, in bool) { p.d.DecodeSetInRotation(j, in) }
func (p decodeProbed) ReplicaTP(int) int            { return p.d.topo.dec.TP }
func (p decodeProbed) refresh(j int)                { p.d.DecodeRefresh(j) }

// DecodeRefresh recomputes decode replica j's availability to the decode
// choice: up, in rotation (not ejected by a probe, not draining) and not a
// warm spare held out of service.
func (d *Disagg) DecodeRefresh(j int) {
	d.decStates[j].Available = d.Decode[j].Up() && d.decRot[j] && !d.decReserved[j]
	if d.decStates[j].Available {
		d.pump(d.eng.Now())
	}
}

// DecodeSetInRotation puts decode replica j in or out of rotation.
func (d *Disagg) DecodeSetInRotation(j int, in bool) {
	d.decRot[j] = in
	d.DecodeRefresh(j)
}

// DecodeSetReserved holds decode replica j out of service as a warm spare
// ([failures] decode_spares), or returns it (Fleet.SetReserved for the
// decode pool).
func (d *Disagg) DecodeSetReserved(j int, reserved bool) {
	if reserved {
		d.Health.noteIsolated(j, d.eng.Now()) // out of service now: a fault is isolated
	}
	d.decReserved[j] = reserved
	d.DecodeRefresh(j)
}

// DecodeMarkFault records that decode replica j became faulty at now (for
// the decode pool's time to isolate).
func (d *Disagg) DecodeMarkFault(j int, now sim.Time) { d.Health.MarkFault(j, now) }

// DecodeDrain takes decode replica j out of rotation and lets what it holds
// finish: it stops as soon as it is empty (checked every second) or at the
// end of grace, failing what is left (prefilled again). Then it calls then,
// if set. (Pool.Drain for the decode pool.)
func (d *Disagg) DecodeDrain(j int, grace sim.Time, then func(now sim.Time)) {
	d.DecodeSetInRotation(j, false)
	drainOut(d.eng, func() *Replica { return d.Decode[j] }, grace, then)
}

// DecodeReplicaGPUs is the first GPU and the GPU count of decode replica j in the
// failure topology's numbering, which the prefill pool's placement starts
// (Pool.Place): the decode pool packs the GPUs after the prefill pool's
// (the link model's placement), from the next NVLink domain when its GPU
// type differs (another kind of server).
func (d *Disagg) DecodeReplicaGPUs(j int) (first, n int) {
	f, n := d.topo.dec.ReplicaGPUs(j)
	return d.topo.failOffset() + f, n
}

// FailureDomains is the number of NVLink domains both pools occupy in the
// failure topology, and the size of one (the prefill GPU's domain; the
// scenario loader refuses [failures] when the decode GPU's differs).
func (d *Disagg) FailureDomains() (domains, domainGPUs int) {
	t := d.topo
	end := t.dec.GPUs
	if t.dec.Spread {
		end = t.dec.Domains * t.gpuD.DomainGPUs
	}
	end += t.failOffset()
	g := t.gpuP.DomainGPUs
	return (end + g - 1) / g, g
}

// failOffset is the first GPU of the decode pool in the failure topology:
// the link model's offset when both pools use one GPU type, else the first
// GPU of the next whole domain.
func (t *disaggTopology) failOffset() int {
	if t.sameGPU {
		return t.decOffset
	}
	g := t.gpuP.DomainGPUs
	return (t.decOffset + g - 1) / g * g
}

// DecodeReplicaTP is the GPUs of one decode replica.
func (d *Disagg) DecodeReplicaTP() int { return d.topo.dec.TP }
