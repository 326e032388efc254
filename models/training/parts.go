package training

import (
	"math"

	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/sim"
)

// The parts a Job owns, each with the state it alone changes.

// cycle is the checkpoint schedule: compute intervals of intervalS seconds
// of work at full speed, each followed by a blocking write of writeS.
type cycle struct {
	intervalS, writeS float64
	inWrite           bool
	leftS             float64 // compute: work left in the interval; write: time left
	uncommittedS      float64 // work since the last completed checkpoint
	done              int64   // checkpoint writes completed
}

// restart begins a fresh compute interval with nothing uncommitted.
func (c *cycle) restart() {
	c.uncommittedS, c.inWrite, c.leftS = 0, false, c.intervalS
}

// committed books the checkpoint just written.
func (c *cycle) committed(a *accounts) {
	a.committed += c.uncommittedS
	c.done++
	c.restart()
}

// run advances the schedule by dt wall seconds at speed s, in closed form,
// booking the time to a.
func (c *cycle) run(dt, s float64, a *accounts) {
	for dt > 0 {
		if !c.inWrite {
			wall := c.leftS / s
			if dt < wall {
				w := dt * s
				c.uncommittedS += w
				c.leftS -= w
				a.slowdown += dt - w
				return
			}
			dt -= wall
			c.uncommittedS += c.leftS
			a.slowdown += wall - c.leftS
			c.inWrite, c.leftS = true, c.writeS
			continue
		}
		if dt < c.leftS {
			a.checkpoint += dt
			c.leftS -= dt
			return
		}
		dt -= c.leftS
		a.checkpoint += c.leftS
		c.committed(a)
		// Whole cycles at once.
		period := c.intervalS/s + c.writeS
		if n := math.Floor(dt / period); n >= 1 {
			a.committed += n * c.intervalS
			c.done += int64(n)
			a.checkpoint += n * c.writeS
			a.slowdown += n * (c.intervalS/s - c.intervalS)
			dt -= n * period
		}
	}
}

// straggler is a fail-slow failure in progress.
type straggler struct {
	id    int
	speed float64
	until sim.Time
}

// stragglers are the fail-slow failures in progress; the slowest sets the
// job's pace.
type stragglers []straggler

// speed is the job's speed relative to a healthy one.
func (ss stragglers) speed() float64 {
	s := 1.0
	for _, st := range ss {
		s = min(s, st.speed)
	}
	return s
}

// expire drops the stragglers that have ended by now.
func (ss *stragglers) expire(now sim.Time) {
	k := 0
	for _, s := range *ss {
		if s.until > now {
			(*ss)[k] = s
			k++
		}
	}
	*ss = (*ss)[:k]
}

// remove drops straggler id and reports whether it was still slowing the
// job.
func (ss *stragglers) remove(id int) bool {
	for i, s := range *ss {
		if s.id == id {
			*ss = append((*ss)[:i], (*ss)[i+1:]...)
			return true
		}
	}
	return false
}

// hostPool is the job's host positions and the spare hosts that fill them:
// failed hosts are out for repair, then join the spares.
type hostPool struct {
	hostGPUs, hosts int
	empty           map[int]bool // job host positions whose host is out for repair
	spares          int          // spare hosts ready
	out             int          // job hosts out for repair, counted at failure
	minSpares       int          // the fewest spares left after a restart
	maxOut          int          // the most job hosts out at once
	waits           int          // restarts that had to wait for spares
	toRetire        int          // hosts in repair that are retired, not returned
	retired         int          // hosts retired so far
}

func newHostPool(hostGPUs, hosts, spares int) hostPool {
	return hostPool{hostGPUs: hostGPUs, hosts: hosts, empty: map[int]bool{}, spares: spares, minSpares: spares}
}

// takeOut sends the job's hosts under ev to repair and returns how many it
// took (each comes back, repaired, after ev.Repair).
func (p *hostPool) takeOut(ev failures.Event) int {
	lo := ev.FirstGPU / p.hostGPUs
	hi := (ev.FirstGPU + ev.GPUs - 1) / p.hostGPUs
	n := 0
	for h := max(lo, 0); h <= min(hi, p.hosts-1); h++ {
		if p.empty[h] {
			continue // no host in that position yet
		}
		p.empty[h] = true
		p.out++
		p.maxOut = max(p.maxOut, p.out)
		n++
	}
	return n
}

// takeOutAfter sends up to n of the job's hosts in the positions after h
// (wrapping round the job) to repair and returns how many it took;
// positions already empty, and h itself, are skipped.
func (p *hostPool) takeOutAfter(h, n int) int {
	took := 0
	for k := 1; k < p.hosts && took < n; k++ {
		pos := (h + k) % p.hosts
		if p.empty[pos] {
			continue
		}
		p.empty[pos] = true
		p.out++
		p.maxOut = max(p.maxOut, p.out)
		took++
	}
	return took
}

// repaired returns a repaired host to the spares.
func (p *hostPool) repaired() {
	p.out--
	if p.toRetire > 0 { // hosts in repair are alike: this one is retired
		p.toRetire--
		p.retired++
		return
	}
	p.spares++
}

// fill fills every empty position from the spares, or reports false
// (changing nothing) when there are too few.
func (p *hostPool) fill() bool {
	need := len(p.empty)
	if need > p.spares {
		return false
	}
	p.spares -= need
	p.minSpares = min(p.minSpares, p.spares)
	clear(p.empty)
	return true
}

// accounts are wall-clock seconds by where they went; they sum to the
// elapsed time.
type accounts struct {
	committed, recompute, checkpoint, slowdown, detection, waiting, restart float64
}

// stopped books dt seconds of a stopped job in state st.
func (a *accounts) stopped(st State, dt float64) {
	switch st {
	case Detecting:
		a.detection += dt
	case WaitingSpares:
		a.waiting += dt
	case Restarting:
		a.restart += dt
	}
}

// tally counts the failures that hit the job, in all and by category.
type tally struct {
	failures, interrupts map[string]int
	nFail, nInterrupt    int
	nSlow                int // fail-slow failures
	evictions            int // stragglers evicted (EvictStragglers)
	overEvicted          int // healthy hosts evicted with a suspect one
	planned              int // planned stops (Config.PlannedEveryHours)
	retired              int // servers retired (Config.RetireAfterFailures)
	retiredLemons        int // of them, lemons (Deps.Lemons)
}

func newTally() tally {
	return tally{failures: map[string]int{}, interrupts: map[string]int{}}
}

func (t *tally) failure(category string) {
	t.nFail++
	t.failures[category]++
}

func (t *tally) interruption(category string) {
	t.nInterrupt++
	t.interrupts[category]++
}
