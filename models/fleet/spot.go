package fleet

import (
	"fmt"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/sim"
)

// SpotParams describe the fleet's spot capacity: the replicas of Ranges
// run on spot instances that the provider takes back at random.
type SpotParams struct {
	// Ranges are the spot replicas, [first, end) each, in order (a fleet
	// of groups may have spot replicas in several groups).
	Ranges [][2]int
	// RatePerHour is each spot replica's interruption rate while it serves
	// (a Poisson process), per hour.
	RatePerHour float64
	// Notice is the warning before the instance goes (drained meanwhile
	// when Drain); Replace is how long until a replacement serves
	// (acquiring capacity, boot, engine start, weight load).
	Notice, Replace sim.Time
	Drain           bool
}

// The steps of a spot interruption (failures.csv's event column, beside
// the failure timeline's; SpotEvents lists them).
const (
	SpotNotice = "spot-notice" // the provider's notice: the replica drains
	SpotKill   = "spot-kill"   // the instance is reclaimed
	SpotReady  = "spot-ready"  // its replacement serves
)

// SpotEvents are the events a spot interruption writes.
var SpotEvents = []string{SpotNotice, SpotKill, SpotReady}

// SpotEvent is one interruption step, for failures.csv.
type SpotEvent struct {
	Time    sim.Time
	Event   string // one of SpotEvents
	Replica int
	// Down is the number of spot replicas out of service after the event.
	Down int
}

// Spot interrupts the fleet's spot replicas: at each interruption the
// replica leaves rotation (drained through the notice, or killed at once),
// is killed when the notice ends (what it still holds fails with reason
// FailSpot and may be retried), and a replacement serves Replace later.
// Interruptions arrive only while a replica serves and the fleet is busy.
type Spot struct {
	eng  *sim.Engine
	pool *Pool
	busy func() bool
	p    SpotParams
	rng  *rand.Rand

	Events        []SpotEvent
	Interruptions int
	// down is the spot replicas out of service now (their time out of
	// service is the pool's PhaseInterrupted).
	down int
}

// FailSpot is the failure reason of copies a spot interruption kills.
const FailSpot = "spot interruption"

// StartSpot starts the interruptions of the primary pool's replicas of
// p.Ranges, drawing from rng (range by range, in order). Call before
// Start.
func (f *Fleet) StartSpot(p SpotParams, rng *rand.Rand) *Spot {
	f.Spot = f.startSpot(f.Pool, p, rng)
	return f.Spot
}

// StartDecodeSpot is StartSpot for a disaggregated fleet's decode pool
// (p.Ranges index its replicas).
func (f *Fleet) StartDecodeSpot(p SpotParams, rng *rand.Rand) *Spot {
	f.Disagg.Spot = f.startSpot(f.Disagg.Decode, p, rng)
	return f.Disagg.Spot
}

func (f *Fleet) startSpot(pool *Pool, p SpotParams, rng *rand.Rand) *Spot {
	s := &Spot{eng: pool.eng, pool: pool, busy: f.busy, p: p, rng: rng}
	for _, r := range p.Ranges {
		for i := r[0]; i < r[1]; i++ {
			s.arm(i, s.eng.Now())
		}
	}
	return s
}

// arm schedules replica i's next interruption after now.
func (s *Spot) arm(i int, now sim.Time) {
	gap := sim.FromSeconds(s.rng.ExpFloat64() / s.p.RatePerHour * 3600)
	s.eng.Schedule(now+gap, sim.PriorityNormal, func(at sim.Time) {
		if !s.busy() {
			return
		}
		if s.pool.Held(i, HoldParked|HoldStarting) {
			// Autoscaled: a parked replica has no instance to take back,
			// and one loading is not interrupted (assumption: its load is
			// short beside the mean time between interruptions). The
			// process is memoryless: draw the next from now.
			s.arm(i, at)
			return
		}
		s.interrupt(i, at)
	})
}

func (s *Spot) interrupt(i int, now sim.Time) {
	s.down++
	s.Interruptions++
	s.Events = append(s.Events, SpotEvent{Time: now, Event: SpotNotice, Replica: i, Down: s.down})
	kill := func(at sim.Time) {
		s.pool.Replicas[i].Fail(at, FailSpot)
		s.Events = append(s.Events, SpotEvent{Time: at, Event: SpotKill, Replica: i, Down: s.down})
		s.pool.Replicas[i].Recover(at, s.p.Replace, func() {
			t := s.eng.Now()
			s.down--
			s.pool.Release(i, HoldSpot)
			s.Events = append(s.Events, SpotEvent{Time: t, Event: SpotReady, Replica: i, Down: s.down})
			s.arm(i, t)
		})
	}
	if !s.p.Drain || s.p.Notice == 0 {
		s.pool.Hold(i, HoldSpot)
		kill(now)
		return
	}
	// Drain through the notice: no new traffic, what finishes in time
	// finishes; the rest fails when the instance goes.
	s.pool.Hold(i, HoldSpot)
	deadline := now + s.p.Notice
	var check sim.Action
	check = func(at sim.Time) {
		if s.pool.Replicas[i].Outstanding() > 0 && at < deadline {
			s.eng.Schedule(min(at+sim.Second, deadline), sim.PriorityNormal, check)
			return
		}
		// Empty before the notice ends: the instance still goes at the
		// deadline; the replica is idle out of rotation until then.
		if at < deadline {
			s.eng.Schedule(deadline, sim.PriorityNormal, kill)
			return
		}
		kill(at)
	}
	s.eng.Schedule(min(now+sim.Second, deadline), sim.PriorityNormal, check)
}

// Unit names replica i in failures.csv.
func (e SpotEvent) Unit() string { return fmt.Sprintf("replica %d", e.Replica) }
