package fleet

import (
	"github.com/fleetsim/fleetsim/sim"

	"github.com/fleetsim/fleetsim/models/engine"
)

// The decode pool's failures and health checks. The decode pool is a Pool
// like the prefill pool, with its own rotation, warm spares, breaker and
// health checker; a decode replica is hardware like a prefill replica:
// stochastic failures ([failures], package failures) strike it by its GPUs' place in the failure topology, probes
// ([policies.probe]) watch it and eject, restart and readmit it, and a
// drain takes it out of the decode choice. What it holds when it dies
// loses its KV: those requests are prefilled again (Disagg.rePrefill,
// counted in DisaggStats.RePrefills and DecodeLost).

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
func (d *Disagg) FailureDomains() (domains, domainGPUs int) { return d.topo.failureDomains() }

// failureDomains is Disagg.FailureDomains of the topology.
func (t *disaggTopology) failureDomains() (domains, domainGPUs int) {
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
func (d *Disagg) DecodeReplicaTP() int { return d.Decode.tp }

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
// cooldown ends; half-open, it takes only what the breaker admits. The
// breaker is the decode pool's (Pool.recordBreaker), as the primary
// pool's is the gateway's.

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
	d.Decode.recordBreaker(c.Replica-d.decBase, now, false, lat.Milliseconds())
	return true
}
