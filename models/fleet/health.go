package fleet

import (
	"github.com/fleetsim/fleetsim/sim"

	"github.com/fleetsim/fleetsim/models/engine"
)

// Health is a pool's health checking: periodic probes that eject a
// replica after consecutive failures, restart it and let it rejoin after
// its cold start; and the time-to-isolate statistic (from a replica's
// first fault to its leaving rotation, by any means). It counts into its
// GatewayStats (the gateway's for the primary pool).
type Health struct {
	eng        *sim.Engine
	pool       *Pool
	stats      *GatewayStats
	cfg        ProbeConfig
	faultAt    []sim.Time // first fault time of a not-yet-isolated replica, or -1
	probeFails []int
	// busy reports whether the fleet still has work (arrivals to come or
	// requests in flight): probing stops when it has none.
	busy func() bool
}

func (p *Pool) size() int                     { return len(p.states) }
func (p *Pool) replica(i int) *engine.Replica { return p.Replicas[i] }

func newHealth(eng *sim.Engine, pool *Pool, stats *GatewayStats, busy func() bool) *Health {
	h := &Health{eng: eng, pool: pool, stats: stats, busy: busy, faultAt: make([]sim.Time, pool.size())}
	for i := range h.faultAt {
		h.faultAt[i] = -1
	}
	return h
}

// start probes every replica every cfg.IntervalNs (none when it is 0),
// staggered across the interval.
func (h *Health) start(cfg ProbeConfig) {
	h.cfg = cfg
	if cfg.IntervalNs <= 0 {
		return
	}
	n := h.pool.size()
	h.probeFails = make([]int, n)
	for i := 0; i < n; i++ {
		i := i
		// Stagger the probes across the interval (deterministically).
		first := cfg.IntervalNs * sim.Time(i+1) / sim.Time(n+1)
		var tick sim.Action
		tick = func(now sim.Time) {
			h.probe(i, now)
			if h.busy() {
				h.eng.Schedule(now+cfg.IntervalNs, sim.PriorityMetrics-1, tick)
			}
		}
		h.eng.Schedule(first, sim.PriorityMetrics-1, tick)
	}
}

// noteIsolated records how long replica i served traffic after its fault.
func (h *Health) noteIsolated(i int, now sim.Time) {
	if t := h.faultAt[i]; t >= 0 {
		h.stats.IsolationNs = append(h.stats.IsolationNs, int64(now-t))
		h.faultAt[i] = -1
	}
}

// markFault records that replica i became faulty at now (for the time to
// isolate it; Pool.MarkFault).
func (h *Health) markFault(i int, now sim.Time) {
	if h.faultAt[i] < 0 {
		h.faultAt[i] = now
	}
}

// probe runs one health probe of replica i.
func (h *Health) probe(i int, now sim.Time) {
	p := h.pool
	r := p.replica(i)
	if !p.inRotation(i) || r.Recovering() || r.Retired() {
		return // out of rotation, being repaired, or in repair for the run
	}
	res := r.Probe(h.cfg.Kind, h.cfg.TimeoutNs, h.cfg.KVPressure)
	h.stats.Probes++
	if h.cfg.Kind == engine.ProbeDeep {
		// The probe's own load: its canned inference's time on the replica's
		// GPUs (an upper bound: it rides in the running batch).
		h.stats.ProbeGPUSeconds += res.LatencyMs / 1000 * float64(p.ReplicaTP(i))
	}
	if res.OK {
		h.probeFails[i] = 0
		return
	}
	h.probeFails[i]++
	if h.probeFails[i] < h.cfg.FailuresToEject {
		return
	}
	// Eject, restart, rejoin after the cold start.
	h.probeFails[i] = 0
	h.stats.Ejections++
	h.noteIsolated(i, now)
	p.Hold(i, HoldProbe)
	restart := h.cfg.RestartNs
	h.eng.Schedule(now+restart, sim.PriorityFailure, func(at sim.Time) {
		if r.Recovering() {
			// Already restarting (a supervisor got there first): rejoin
			// when it is ready.
			r.WhenRecovered(func() { p.Release(i, HoldProbe) })
			return
		}
		if r.Up() && !r.Hung() {
			// The restart kills a process that was still serving (ejected
			// for KV pressure or a slow probe, say): what it holds fails and
			// may be retried. (Before, its batch kept running state through
			// the restart, and the step it had under way could end after a
			// new one began: a negative inter-token gap.)
			r.Fail(at, engine.FailReplicaDown)
		}
		r.Recover(at, h.cfg.ColdStartNs, func() { p.Release(i, HoldProbe) })
		p.refresh(i)
	})
}
