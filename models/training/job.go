package training

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/sim"
)

// State is what the job is doing.
type State uint8

const (
	// Running: computing or writing a checkpoint.
	Running State = iota
	// Detecting: stopped by a failure nobody has noticed yet.
	Detecting
	// WaitingSpares: detected, but too few spare hosts to restart at full
	// size.
	WaitingSpares
	// Restarting: rescheduling and loading the last checkpoint.
	Restarting
)

var stateNames = [...]string{"running", "detecting", "waiting-spares", "restarting"}

// States are the names of the job's states, as its timeline writes them.
var States = slices.Clone(stateNames[:])

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Deps are what a job runs on.
type Deps struct {
	Engine *sim.Engine
	// Topology is the cluster; the job holds GPUs [0, Config.GPUs) of it,
	// whole hosts.
	Topology failures.Topology
	// Failures yields the cluster's failures in time order; the job reacts
	// to those whose GPUs intersect its own.
	Failures failures.Source
	// Checkpoint sets the checkpoint interval from MTBF and the write time.
	Checkpoint CheckpointPolicy
	// MTBF is the job's mean time between failures, for Checkpoint
	// (Profile.MTBF(Config.GPUs)).
	MTBF sim.Time
	// Rand is the job's own stream (detection and restart draws), e.g.
	// sim.NewStream(seed, "training").
	Rand *rand.Rand
	// Lemons, when set, is the source's lemon wrapper: a retired host's
	// slot gets another server through it (Config.RetireAfterFailures).
	Lemons *failures.Lemons
}

// Job is a synchronous training job over whole hosts. It computes in
// intervals of CheckpointInterval (work at full speed) each followed by a
// blocking checkpoint write; any failure in its GPUs, except a fail-slow
// one, stops it: the work since the last completed checkpoint is lost, it
// waits for detection, for enough spare hosts to replace every host out
// for repair, and for the restart overhead, then resumes from the
// checkpoint. A failure while it is restarting aborts the restart. A
// fail-slow failure slows the whole job to the straggler's speed while it
// lasts (the slowest straggler sets the pace).
//
// Progress between events is computed in closed form: the job schedules
// events only for failures, detections, restarts, repairs and stragglers'
// ends, never per checkpoint or step. Failed hosts are out for the event's
// repair time from the failure; repaired, they join the spare pool.
//
// Job holds the state machine and its event handlers; the state each part
// alone changes lives in that part (parts.go): the checkpoint cycle, the
// stragglers, the host pool, the loss accounts and the failure tally.
type Job struct {
	cfg     Config
	eng     *sim.Engine
	src     failures.Source
	rng     *rand.Rand
	horizon sim.Time

	state   State
	since   sim.Time    // last settle
	pending sim.EventID // detection or restart completion
	done    bool        // Result has booked the time to the horizon

	ckpt cycle      // the checkpoint schedule and the work not yet committed
	slow stragglers // fail-slow failures in progress
	// nextSlowID numbers the stragglers, so an eviction removes its own.
	nextSlowID int
	hosts      hostPool // the job's hosts, those out for repair, the spares
	acc        accounts // wall-clock seconds by where they went
	lemons     *failures.Lemons
	// hostFails are the times of each host slot's recent failures that
	// took it out (Config.RetireAfterFailures).
	hostFails map[int][]sim.Time
	// retiredGPUHours is the capacity retired servers took out of the pool
	// up to the horizon.
	retiredGPUHours float64
	count           tally // failures and interruptions by category
	trace           []TracePoint
}

// New returns a job ready to Start. It validates cfg (problems keyed under
// "training") and the dependencies.
func New(cfg Config, d Deps) (*Job, error) {
	var ps config.Problems
	cfg.Validate("training", &ps)
	if err := ps.Err(); err != nil {
		return nil, fmt.Errorf("training: invalid configuration:\n%w", err)
	}
	if d.Engine == nil || d.Failures == nil || d.Checkpoint == nil || d.Rand == nil {
		return nil, errors.New("training: New needs an engine, a failure source, a checkpoint policy and a random stream")
	}
	if err := d.Topology.Check(); err != nil {
		return nil, err
	}
	if cfg.GPUs%d.Topology.HostGPUs != 0 || cfg.GPUs > d.Topology.GPUs() {
		return nil, fmt.Errorf("training: gpus must be a multiple of %d (GPUs per host) and at most %d (the topology), found %d",
			d.Topology.HostGPUs, d.Topology.GPUs(), cfg.GPUs)
	}
	if d.MTBF <= 0 {
		return nil, fmt.Errorf("training: MTBF must be > 0, found %v", d.MTBF)
	}
	write := sim.FromSeconds(cfg.CheckpointWriteS)
	iv := d.Checkpoint.CheckpointInterval(d.MTBF, write)
	if iv <= 0 {
		return nil, fmt.Errorf("training: checkpoint interval must be > 0, found %v", iv)
	}
	j := &Job{
		cfg: cfg, eng: d.Engine, src: d.Failures, rng: d.Rand,
		horizon: d.Engine.Now() + sim.FromSeconds(cfg.HorizonHours*3600),
		ckpt:    cycle{intervalS: iv.Seconds(), writeS: cfg.CheckpointWriteS},
		hosts:   newHostPool(d.Topology.HostGPUs, cfg.GPUs/d.Topology.HostGPUs, cfg.SpareServers),
		count:   newTally(),
		lemons:  d.Lemons, hostFails: map[int][]sim.Time{},
	}
	j.ckpt.restart()
	return j, nil
}

// Horizon is when the job's observation ends.
func (j *Job) Horizon() sim.Time { return j.horizon }

// State is what the job is doing now.
func (j *Job) State() State { return j.state }

// Start begins running at the engine's current time and schedules the first
// failure. Run the engine to Horizon, then call Result.
func (j *Job) Start() {
	j.since = j.eng.Now()
	j.mark(j.since, EventStart, "")
	j.pull()
	j.schedulePlanned(j.since)
}

// schedulePlanned schedules the planned stop after the one at from, if
// planned stops are on and it falls before the horizon.
func (j *Job) schedulePlanned(from sim.Time) {
	if j.cfg.PlannedEveryHours <= 0 {
		return
	}
	at := from + sim.FromSeconds(j.cfg.PlannedEveryHours*3600)
	if at > j.horizon || at <= from {
		return
	}
	j.eng.Schedule(at, sim.PriorityNormal, j.onPlanned)
}

// onPlanned is a planned stop: a running job saves its work and restarts
// (the write is booked with the restart overhead); a stopped one has the
// maintenance done within its stop.
func (j *Job) onPlanned(now sim.Time) {
	j.schedulePlanned(now)
	j.settle(now)
	j.count.planned++
	if j.state != Running {
		j.mark(now, EventPlanned, "")
		return
	}
	j.ckpt.committed(&j.acc)
	j.state = Restarting
	j.pending = j.eng.Schedule(now+sim.FromSeconds(j.cfg.CheckpointWriteS)+j.uniform(j.cfg.RestartMinS, j.cfg.RestartMaxS),
		sim.PriorityNormal, j.onRestarted)
	j.mark(now, EventPlanned, "")
}

// pull schedules the next failure of the source, if before the horizon.
func (j *Job) pull() {
	ev, ok := j.src.Next()
	if !ok || ev.Time > j.horizon {
		return
	}
	if ev.Time < j.eng.Now() {
		panic(fmt.Sprintf("training: failure source went back in time: %v before %v", ev.Time, j.eng.Now()))
	}
	j.eng.Schedule(ev.Time, sim.PriorityFailure, func(sim.Time) { j.onFailure(ev) })
}

func (j *Job) onFailure(ev failures.Event) {
	j.pull()
	if !ev.Hits(0, j.cfg.GPUs) {
		return
	}
	now := j.eng.Now()
	j.settle(now)
	j.count.failure(ev.Category)
	// A straggler, or an NVLink domain running on fewer switch trays: the
	// job slows to the event's speed (the slowest member sets the pace) and
	// nothing is taken out.
	if ev.Mode == failures.ModeFailSlow || ev.Mode == failures.ModeNVLinkDegraded {
		j.count.nSlow++
		if ev.Repair > 0 && ev.SpeedFraction < 1 {
			until := min(now+ev.Repair, sim.Forever-1)
			j.nextSlowID++
			j.slow = append(j.slow, straggler{id: j.nextSlowID, speed: ev.SpeedFraction, until: until})
			j.eng.Schedule(until, sim.PriorityNormal, j.onStragglerEnd)
			if j.cfg.EvictStragglers && ev.Mode == failures.ModeFailSlow {
				id, at := j.nextSlowID, now+j.uniform(j.cfg.StragglerDetectionMinS, j.cfg.StragglerDetectionMaxS)
				if at < until {
					j.eng.Schedule(at, sim.PriorityNormal, func(t sim.Time) { j.onStragglerDetected(t, id, ev, until) })
				}
			}
		}
		j.mark(now, EventFailSlow, ev.Category)
		return
	}
	if ev.Repair > 0 && ev.Scope != failures.ScopeProcess {
		for range j.hosts.takeOut(ev) {
			j.eng.Schedule(min(now+ev.Repair, sim.Forever-1), sim.PriorityNormal, j.onRepaired)
		}
		j.watch(now, ev)
	}
	if ev.Mode == failures.ModeHang {
		j.overEvict(now, ev.FirstGPU/j.hosts.hostGPUs)
	}
	lost := 0.0
	switch j.state {
	case Running:
		lost = j.ckpt.uncommittedS
		j.acc.recompute += j.ckpt.uncommittedS
		j.ckpt.restart()
	case Restarting:
		j.eng.Cancel(j.pending)
	default: // already stopped: the failure is handled with the current one
		j.mark(now, EventFailure, ev.Category)
		return
	}
	j.count.interruption(ev.Category)
	j.state = Detecting
	j.pending = j.eng.Schedule(now+j.uniform(j.cfg.DetectionMinS, j.cfg.DetectionMaxS), sim.PriorityNormal, j.onDetected)
	j.markLost(now, EventFailure, ev.Category, lost)
}

// onStragglerDetected evicts straggler id (ev, repaired at until): the
// job stops and loses its uncommitted work, the straggler's host goes to
// repair until then (with OverEvictHosts healthy neighbours), and the job
// restarts on spares.
func (j *Job) onStragglerDetected(now sim.Time, id int, ev failures.Event, until sim.Time) {
	j.settle(now) // at the straggler's pace up to now
	if !j.slow.remove(id) {
		return
	}
	j.count.evictions++
	for range j.hosts.takeOut(ev) {
		j.eng.Schedule(until, sim.PriorityNormal, j.onRepaired)
	}
	j.overEvict(now, ev.FirstGPU/j.hosts.hostGPUs)
	lost := 0.0
	switch j.state {
	case Running:
		lost = j.ckpt.uncommittedS
		j.acc.recompute += j.ckpt.uncommittedS
		j.ckpt.restart()
	case Restarting: // the restart began without the evicted host's replacement
		j.eng.Cancel(j.pending)
	default: // stopped: the restart to come fills the position
		j.markLost(now, EventEvicted, ev.Category, 0)
		return
	}
	j.count.interruption(ev.Category)
	j.tryRestart(now)
	j.markLost(now, EventEvicted, ev.Category, lost)
}

// overEvict takes OverEvictHosts healthy hosts after job host h out with
// the suspect one (ByteRobust's over-eviction); each rejoins the spares
// after OverEvictReturnS.
func (j *Job) overEvict(now sim.Time, h int) {
	if j.cfg.OverEvictHosts == 0 {
		return
	}
	back := min(now+sim.FromSeconds(j.cfg.OverEvictReturnS), sim.Forever-1)
	for range j.hosts.takeOutAfter(h, j.cfg.OverEvictHosts) {
		j.count.overEvicted++
		j.eng.Schedule(back, sim.PriorityNormal, j.onRepaired)
	}
}

// watch applies the retirement policy (Config.RetireAfterFailures) to a
// failure that took a host of the job out: a slot with that many such
// failures within the window has its server retired — it will not rejoin
// the spares once repaired — and another put in its slot.
func (j *Job) watch(now sim.Time, ev failures.Event) {
	n := j.cfg.RetireAfterFailures
	if n <= 0 || ev.Scope > failures.ScopeHost {
		return
	}
	h := ev.FirstGPU / j.hosts.hostGPUs
	w := sim.FromSeconds(j.cfg.RetireWindowHours * 3600)
	ts := append(j.hostFails[h], now)
	k := 0
	for k < len(ts) && ts[k] < now-w {
		k++
	}
	ts = ts[k:]
	if len(ts) < n {
		j.hostFails[h] = ts
		return
	}
	delete(j.hostFails, h)
	j.hosts.toRetire++
	j.count.retired++
	j.retiredGPUHours += float64(j.hosts.hostGPUs) * max(0, (j.horizon-now).Seconds()) / 3600
	if j.lemons != nil {
		j.count.retiredLemons += b2i(j.lemons.IsLemon(h))
		j.lemons.Replace(h)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (j *Job) onRepaired(now sim.Time) {
	j.settle(now)
	j.hosts.repaired()
	if j.state == WaitingSpares {
		j.tryRestart(now)
	}
	j.mark(now, EventRepaired, "")
}

func (j *Job) onDetected(now sim.Time) {
	j.settle(now)
	j.tryRestart(now)
	j.mark(now, EventDetected, "")
}

// tryRestart fills every empty position from the spares and restarts, or
// waits for repairs.
func (j *Job) tryRestart(now sim.Time) {
	if !j.hosts.fill() {
		if j.state != WaitingSpares {
			j.hosts.waits++
		}
		j.state = WaitingSpares
		return
	}
	j.state = Restarting
	j.pending = j.eng.Schedule(now+j.uniform(j.cfg.RestartMinS, j.cfg.RestartMaxS), sim.PriorityNormal, j.onRestarted)
}

func (j *Job) onRestarted(now sim.Time) {
	j.settle(now)
	j.state = Running
	j.ckpt.restart()
	j.mark(now, EventRestarted, "")
}

func (j *Job) onStragglerEnd(now sim.Time) {
	j.settle(now)
	j.slow.expire(now)
	j.mark(now, EventStragglerEnd, "")
}

// uniform draws a duration uniform in [lo, hi] seconds (one Float64 always,
// so that changing the bounds never shifts later draws).
func (j *Job) uniform(lo, hi float64) sim.Time {
	return sim.FromSeconds(lo + (hi-lo)*j.rng.Float64())
}

// settle books the time since the last settle to the current state.
func (j *Job) settle(now sim.Time) {
	dt := (now - j.since).Seconds()
	j.since = now
	if dt <= 0 {
		return
	}
	if j.state == Running {
		j.ckpt.run(dt, j.slow.speed(), &j.acc)
		return
	}
	j.acc.stopped(j.state, dt)
}
