package fleet

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

// TestPhasePrecedence: the one order between the mechanisms' holds and the
// engine's state (phaseOf's documentation), case by case.
func TestPhasePrecedence(t *testing.T) {
	for _, c := range []struct {
		name         string
		h            Hold
		up, starting bool
		want         Phase
	}{
		{"nothing", 0, true, false, PhaseServing},
		{"parked wins over a failure", HoldParked, false, false, PhaseParked},
		{"parked wins over spot", HoldParked | HoldSpot, true, false, PhaseParked},
		{"spot notice, still up", HoldSpot, true, false, PhaseInterrupted},
		{"spot, killed", HoldSpot, false, false, PhaseInterrupted},
		{"spot, replacement loading", HoldSpot, false, true, PhaseInterrupted},
		{"failed", 0, false, false, PhaseDown},
		{"restarting", 0, false, true, PhaseLoading},
		{"a spare in repair is down", HoldSpare, false, false, PhaseDown},
		{"a spare restarting", HoldSpare, false, true, PhaseLoading},
		{"a spare", HoldSpare, true, false, PhaseSpare},
		{"a spare drained for a repair", HoldSpare | HoldRepair, true, false, PhaseSpare},
		{"scaling in", HoldScaleIn, true, false, PhaseDraining},
		{"maintenance", HoldMaintenance, true, false, PhaseDraining},
		{"ejected, before its restart", HoldProbe, true, false, PhaseDraining},
		{"rollout, green waiting", HoldRollout, true, false, PhaseDraining},
		{"maintenance, restarting", HoldMaintenance, false, true, PhaseLoading},
	} {
		require.Equal(t, c.want, phaseOf(c.h, c.up, c.starting), c.name)
	}
}

// TestLifecycleIntervals: holds and the engine's changes close the phase
// intervals at the right times, two mechanisms' holds compose (one's
// release leaves the other's), and a change that bypasses the pool is
// caught by CheckLifecycle.
func TestLifecycleIntervals(t *testing.T) {
	eng, f := testFleet(t, defaultFleet(2))
	p := f.Pool
	at := func(t sim.Time, fn func()) { eng.Schedule(t, sim.PriorityNormal, func(sim.Time) { fn() }) }
	at(10*sim.Second, func() { p.Hold(0, HoldMaintenance) })
	at(20*sim.Second, func() { p.Hold(0, HoldSpot) })
	at(25*sim.Second, func() { p.Release(0, HoldMaintenance) })
	at(30*sim.Second, func() {
		require.False(t, p.States()[0].Available, "spot still holds it")
		p.Release(0, HoldSpot)
		require.True(t, p.States()[0].Available)
	})
	at(40*sim.Second, func() { p.Replicas[1].Fail(eng.Now(), "test") })
	at(50*sim.Second, func() { p.Replicas[1].Recover(eng.Now(), 5*sim.Second, nil) })
	at(60*sim.Second, func() { p.Hold(1, HoldParked) })
	eng.Run(100 * sim.Second)
	require.NoError(t, p.CheckLifecycle())
	end := 100 * sim.Second
	l := &p.Life
	require.Equal(t, 80*sim.Second, l.PhaseNs(0, PhaseServing, end))
	require.Equal(t, 10*sim.Second, l.PhaseNs(0, PhaseDraining, end))
	require.Equal(t, 10*sim.Second, l.PhaseNs(0, PhaseInterrupted, end))
	require.Equal(t, 40*sim.Second+5*sim.Second, l.PhaseNs(1, PhaseServing, end))
	require.Equal(t, 10*sim.Second, l.PhaseNs(1, PhaseDown, end))
	require.Equal(t, 5*sim.Second, l.PhaseNs(1, PhaseLoading, end))
	require.Equal(t, 40*sim.Second, l.PhaseNs(1, PhaseParked, end))
	require.Equal(t, 60*sim.Second, l.ProvisionedNs(1, end))
	require.Equal(t, 40*sim.Second, l.PhaseNs(1, PhaseParked, end), "a phase counted to end")
	require.Zero(t, l.PhaseNs(1, PhaseParked, 50*sim.Second), "a phase that began after end adds nothing")
	require.Equal(t, 1, l.Count(PhaseParked))

	// A replica that goes down behind its pool's back.
	p.Replicas[0].SetOnChange(nil)
	p.Replicas[0].Fail(eng.Now(), "test")
	require.ErrorContains(t, p.CheckLifecycle(), "replica 0's phase is down, recorded serving")
}

// TestPhaseAt: the phase at a time is the last change at or before it.
func TestPhaseAt(t *testing.T) {
	l := newLifecycle(1)
	l.note(0, PhaseDown, 0, 10)
	l.note(0, PhaseLoading, 0, 20)
	l.note(0, PhaseLoading, 0, 25) // no change: not logged
	l.note(0, PhaseLoading, HoldSpare, 27)
	l.note(0, PhaseServing, 0, 30)
	for _, c := range []struct {
		t    sim.Time
		want Phase
	}{{0, PhaseServing}, {9, PhaseServing}, {10, PhaseDown}, {19, PhaseDown}, {20, PhaseLoading}, {29, PhaseLoading}, {30, PhaseServing}, {1000, PhaseServing}} {
		require.Equal(t, c.want, l.PhaseAt(0, c.t), "at %d", c.t)
	}
	require.Len(t, l.log[0], 4)
	require.False(t, l.HeldAt(0, 26, HoldSpare))
	require.True(t, l.HeldAt(0, 27, HoldSpare), "a change of holds alone is logged")
	require.False(t, l.HeldAt(0, 30, HoldSpare))
	require.Equal(t, sim.Time(10), l.PhaseNs(0, PhaseDown, 1000))
	require.Equal(t, sim.Time(5), l.PhaseNs(0, PhaseDown, 15), "clipped at end")
}

// TestSpotDuringMaintenance: a spot interruption of a replica in scripted
// maintenance. The replacement comes up while the maintenance still holds
// the replica: it stays out of service (one shared rotation flag put it
// back), interrupted from the notice to its replacement, and serves once
// the maintenance returns it.
func TestSpotDuringMaintenance(t *testing.T) {
	eng, f := testFleet(t, defaultFleet(2))
	p := f.Pool
	s := &Spot{eng: eng, pool: p, busy: func() bool { return false }, p: SpotParams{Replace: 30 * sim.Second, RatePerHour: 1}, rng: rand.New(rand.NewPCG(1, 2))}
	at := func(t sim.Time, fn func()) { eng.Schedule(t, sim.PriorityNormal, func(sim.Time) { fn() }) }
	at(10*sim.Second, func() {
		p.Drain(1, HoldMaintenance, 0, func(now sim.Time) {
			eng.Schedule(100*sim.Second, sim.PriorityNormal, func(now sim.Time) {
				p.Replicas[1].Recover(now, 5*sim.Second, func() { p.Release(1, HoldMaintenance) })
			})
		})
	})
	at(20*sim.Second, func() { s.interrupt(1, eng.Now()) })
	at(60*sim.Second, func() {
		require.True(t, p.Replicas[1].Up(), "the replacement serves from 50 s")
		require.False(t, p.States()[1].Available, "but the maintenance still holds it")
		require.Equal(t, PhaseDraining, p.Life.Phase(1))
	})
	eng.Run(200 * sim.Second)
	require.True(t, p.States()[1].Available, "back after the maintenance")
	require.NoError(t, p.CheckLifecycle())
	end := 200 * sim.Second
	require.Equal(t, 30*sim.Second, p.Life.PhaseNs(1, PhaseInterrupted, end), "from the notice at 20 s to the replacement at 50 s")
	require.Equal(t, 5*sim.Second, p.Life.PhaseNs(1, PhaseLoading, end), "the maintenance's restart")
	require.Equal(t, []SpotEvent{{20 * sim.Second, SpotNotice, 1, 1}, {20 * sim.Second, SpotKill, 1, 1}, {50 * sim.Second, SpotReady, 1, 0}}, s.Events)
}
