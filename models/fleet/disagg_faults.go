package fleet

import (
	"github.com/fleetsim/fleetsim/sim"

	"github.com/fleetsim/fleetsim/models/engine"
)

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

func (p decodeProbed) size() int                     { return len(p.d.Decode) }
func (p decodeProbed) replica(j int) *engine.Replica { return p.d.Decode[j] }
func (p decodeProbed) inRotation(j int) bool         { return p.d.decRot[j] }
func (p decodeProbed) SetInRotation(j int, in bool)  { p.d.DecodeSetInRotation(j, in) }
func (p decodeProbed) ReplicaTP(int) int             { return p.d.topo.dec.TP }
func (p decodeProbed) refresh(j int)                 { p.d.DecodeRefresh(j) }

// DecodeRefresh recomputes decode replica j's availability to the decode
// choice: up, in rotation (not ejected by a probe, not draining), not a
// warm spare held out of service and its breaker not open.
func (d *Disagg) DecodeRefresh(j int) {
	d.decStates[j].Available = d.Decode[j].Up() && d.decRot[j] && !d.decReserved[j] && d.decBrk[j] != BreakerOpen
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
	drainOut(d.eng, func() *engine.Replica { return d.Decode[j] }, grace, then)
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

// The decode pool's circuit breaker ([policies.breaker], its own state per
// decode replica). What it hears, each attributed to the decode replica
// that held the request:
//   - a success when the request completes there, with the decode
//     replica's own share of the TTFT (its KV landing → first token: the
//     decode queue and first step) as the latency the p99 rule looks at;
//     the transfer and prefill are not this replica's doing;
//   - an error when the replica loses the request's KV (it failed, was
//     restarted by a probe or its drain ended): the request is prefilled
//     again, so the client sees no error, but the replica did;
//   - a client timeout (or total timeout) of a request it held, with the
//     time since it landed.
// A request too long for any decode replica is the request's fault, not
// the replica's: not recorded. Timeouts of requests still in the prefill
// pool or between the pools go to the prefill replica, as before.
// An open breaker takes the replica out of the decode choice until its
// cooldown ends; half-open, it takes only what the breaker admits.

// setBreaker installs the decode pool's breaker (nil: none).
func (d *Disagg) setBreaker(b Breaker) { d.brk = b }

// recordBreaker feeds decode replica j's breaker an outcome and applies
// its state.
func (d *Disagg) recordBreaker(j int, now sim.Time, ok bool, latencyMs float64) {
	if d.brk == nil || j < 0 || j >= len(d.Decode) {
		return
	}
	d.brk.Record(j, now, ok, latencyMs)
	d.applyBreaker(j, now)
}

func (d *Disagg) applyBreaker(j int, now sim.Time) {
	st, until := d.brk.State(j, now)
	was := d.decBrk[j]
	if st == BreakerOpen && was != BreakerOpen {
		d.Stats.DecodeBreakerOpens++
		d.Health.noteIsolated(j, now)
	}
	d.decBrk[j] = st
	if st != was {
		d.DecodeRefresh(j)
	}
	if st == BreakerOpen && until > now {
		d.eng.Cancel(d.brkEv[j])
		d.brkEv[j] = d.eng.Schedule(until, sim.PriorityNormal, func(at sim.Time) {
			d.brkEv[j] = sim.EventID{}
			d.applyBreaker(j, at)
		})
	}
}

// breakerRefuses reports whether decode replica j's breaker is half-open
// and refuses one more request now (Admit counts it when it does not).
func (d *Disagg) breakerRefuses(j int, now sim.Time) bool {
	return d.brk != nil && d.decBrk[j] == BreakerHalfOpen && !d.brk.Admit(j, now)
}

// DecodeBreakerState is decode replica j's breaker state as last applied
// (BreakerClosed without a breaker).
func (d *Disagg) DecodeBreakerState(j int) BreakerState { return d.decBrk[j] }

// timedOut is the gateway's client timeout of c: a copy held by a decode
// replica counts against that replica's breaker; false when c is not.
func (d *Disagg) timedOut(c *engine.Copy, now sim.Time) bool {
	if !d.isDecode(c.Replica) {
		return false
	}
	lat := now - c.SentAt
	if h := d.live[c]; h != nil && h.state >= hsLanded {
		lat = now - h.landed
	}
	d.recordBreaker(c.Replica-d.decBase, now, false, lat.Milliseconds())
	return true
}
