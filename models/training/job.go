package training

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

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
type Job struct {
	cfg      Config
	eng      *sim.Engine
	topo     failures.Topology
	src      failures.Source
	rng      *rand.Rand
	horizon  sim.Time
	hostGPUs int
	hosts    int

	intervalS, writeS float64
	state             State
	since             sim.Time // last settle
	inWrite           bool
	leftS             float64 // compute: work left in the interval; write: time left
	uncommittedS      float64
	stragglers        []straggler
	pending           sim.EventID // detection or restart completion

	empty map[int]bool // job host positions whose host is out for repair
	pool  int          // spare hosts ready

	acc        accounts
	failures   map[string]int
	interrupts map[string]int
	nFail      int
	nInterrupt int
	nSlow      int
	nWaits     int
	minPool    int
	maxOut     int
	out        int // job hosts out for repair, counted at failure
	done       bool
}

type straggler struct {
	speed float64
	until sim.Time
}

// accounts are wall-clock seconds by where they went; they sum to the
// elapsed time.
type accounts struct {
	committed, recompute, checkpoint, slowdown, detection, waiting, restart float64
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
		cfg: cfg, eng: d.Engine, topo: d.Topology, src: d.Failures, rng: d.Rand,
		horizon:  d.Engine.Now() + sim.FromSeconds(cfg.HorizonHours*3600),
		hostGPUs: d.Topology.HostGPUs, hosts: cfg.GPUs / d.Topology.HostGPUs,
		intervalS: iv.Seconds(), writeS: cfg.CheckpointWriteS,
		empty: map[int]bool{}, pool: cfg.SpareServers, minPool: cfg.SpareServers,
		failures: map[string]int{}, interrupts: map[string]int{},
	}
	j.leftS = j.intervalS
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
	j.pull()
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
	j.nFail++
	j.failures[ev.Category]++
	if ev.Mode == failures.ModeFailSlow {
		j.nSlow++
		if ev.Repair > 0 && ev.SpeedFraction < 1 {
			j.stragglers = append(j.stragglers, straggler{ev.SpeedFraction, now + ev.Repair})
			j.eng.Schedule(min(now+ev.Repair, sim.Forever-1), sim.PriorityNormal, j.onStragglerEnd)
		}
		return
	}
	if ev.Repair > 0 && ev.Scope != failures.ScopeProcess {
		j.takeHostsOut(ev, now)
	}
	switch j.state {
	case Running:
		j.acc.recompute += j.uncommittedS
		j.uncommittedS, j.inWrite, j.leftS = 0, false, j.intervalS
	case Restarting:
		j.eng.Cancel(j.pending)
	default: // already stopped: the failure is handled with the current one
		return
	}
	j.nInterrupt++
	j.interrupts[ev.Category]++
	j.state = Detecting
	j.pending = j.eng.Schedule(now+j.uniform(j.cfg.DetectionMinS, j.cfg.DetectionMaxS), sim.PriorityNormal, j.onDetected)
}

// takeHostsOut sends the job's hosts under ev to repair.
func (j *Job) takeHostsOut(ev failures.Event, now sim.Time) {
	lo := ev.FirstGPU / j.hostGPUs
	hi := (ev.FirstGPU + ev.GPUs - 1) / j.hostGPUs
	for h := max(lo, 0); h <= min(hi, j.hosts-1); h++ {
		if j.empty[h] {
			continue // no host in that position yet
		}
		j.empty[h] = true
		j.out++
		j.maxOut = max(j.maxOut, j.out)
		j.eng.Schedule(min(now+ev.Repair, sim.Forever-1), sim.PriorityNormal, j.onRepaired)
	}
}

func (j *Job) onRepaired(now sim.Time) {
	j.settle(now)
	j.out--
	j.pool++
	if j.state == WaitingSpares {
		j.tryRestart(now)
	}
}

func (j *Job) onDetected(now sim.Time) {
	j.settle(now)
	j.tryRestart(now)
}

// tryRestart fills every empty position from the pool and restarts, or
// waits for repairs.
func (j *Job) tryRestart(now sim.Time) {
	need := len(j.empty)
	if need > j.pool {
		if j.state != WaitingSpares {
			j.nWaits++
		}
		j.state = WaitingSpares
		return
	}
	j.pool -= need
	j.minPool = min(j.minPool, j.pool)
	clear(j.empty)
	j.state = Restarting
	j.pending = j.eng.Schedule(now+j.uniform(j.cfg.RestartMinS, j.cfg.RestartMaxS), sim.PriorityNormal, j.onRestarted)
}

func (j *Job) onRestarted(now sim.Time) {
	j.settle(now)
	j.state = Running
	j.inWrite, j.leftS, j.uncommittedS = false, j.intervalS, 0
}

func (j *Job) onStragglerEnd(now sim.Time) {
	j.settle(now)
	k := 0
	for _, s := range j.stragglers {
		if s.until > now {
			j.stragglers[k] = s
			k++
		}
	}
	j.stragglers = j.stragglers[:k]
}

// uniform draws a duration uniform in [lo, hi] seconds (one Float64 always,
// so that changing the bounds never shifts later draws).
func (j *Job) uniform(lo, hi float64) sim.Time {
	return sim.FromSeconds(lo + (hi-lo)*j.rng.Float64())
}

func (j *Job) speed() float64 {
	s := 1.0
	for _, st := range j.stragglers {
		s = min(s, st.speed)
	}
	return s
}

// settle books the time since the last settle to the current state.
func (j *Job) settle(now sim.Time) {
	dt := (now - j.since).Seconds()
	j.since = now
	if dt <= 0 {
		return
	}
	switch j.state {
	case Running:
		j.run(dt)
	case Detecting:
		j.acc.detection += dt
	case WaitingSpares:
		j.acc.waiting += dt
	case Restarting:
		j.acc.restart += dt
	}
}

// run advances a running job by dt wall seconds, in closed form.
func (j *Job) run(dt float64) {
	s := j.speed()
	for dt > 0 {
		if !j.inWrite {
			wall := j.leftS / s
			if dt < wall {
				w := dt * s
				j.uncommittedS += w
				j.leftS -= w
				j.acc.slowdown += dt - w
				return
			}
			dt -= wall
			j.uncommittedS += j.leftS
			j.acc.slowdown += wall - j.leftS
			j.inWrite, j.leftS = true, j.writeS
			continue
		}
		if dt < j.leftS {
			j.acc.checkpoint += dt
			j.leftS -= dt
			return
		}
		dt -= j.leftS
		j.acc.checkpoint += j.leftS
		j.acc.committed += j.uncommittedS
		j.uncommittedS, j.inWrite, j.leftS = 0, false, j.intervalS
		// Whole cycles at once.
		cycle := j.intervalS/s + j.writeS
		if n := math.Floor(dt / cycle); n >= 1 {
			j.acc.committed += n * j.intervalS
			j.acc.checkpoint += n * j.writeS
			j.acc.slowdown += n * (j.intervalS/s - j.intervalS)
			dt -= n * cycle
		}
	}
}
