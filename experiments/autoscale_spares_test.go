package experiments

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// autoscaledSpareFleet is oneSpareFleet autoscaled: three 70B TP=8
// replicas of which the autoscaler keeps two serving (its policy asks
// for fewer than its minimum: replica 2 stays parked), and one warm spare
// (replica 3), with a swap delay of swapS; tests apply their own
// failures.
func autoscaledSpareFleet(t *testing.T, swapS int) (*sim.Engine, *fleet.Fleet, *failuresDriver) {
	t.Helper()
	sc := mustParse(t, small+fmt.Sprintf(`
[failures]
enabled = true
rate_multiplier = 1e-9
cold_start_s = 60
spares = 1
spare_after_s = 600
spare_swap_s = %d
[autoscale]
enabled = true
min_replicas = 2
target = 100000
interval_s = 10
scale_up_cooldown_s = 0
`, swapS))
	sc, err := sc.Derive(OverrideOverlay("cluster.tp", "8"), OverrideOverlay("cluster.replicas", "3"),
		OverrideOverlay("workload.duration_s", "7200"), OverrideOverlay("workload.arrival.rate_per_s", "5"))
	require.NoError(t, err)
	eng := sim.NewEngine()
	fl, err := newFleet(eng, sc, fleet.NewRecorder(sc.SLO))
	require.NoError(t, err)
	fi, err := startFailures(eng, fl, sc, sc.Seed)
	require.NoError(t, err)
	src, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	require.NoError(t, fl.Start(src))
	return eng, fl, &failuresDriver{eng: eng, apply: func(i int, repair sim.Time, now sim.Time) { fi.Apply(hostFailure(i, repair), now) }}
}

// failuresDriver applies hand-made host failures at given times.
type failuresDriver struct {
	eng   *sim.Engine
	apply func(i int, repair, now sim.Time)
}

func (d *failuresDriver) failAt(s float64, i int, repair sim.Time) {
	d.eng.Schedule(sim.FromSeconds(s), sim.PriorityFailure, func(now sim.Time) { d.apply(i, repair, now) })
}

// autoscaleView is what the tests compare: which replicas are available,
// which the autoscaler has parked, and which are outside its range
// (spares).
type autoscaleView struct {
	Available, Parked, Spare [4]bool
	Provisioned              int
}

func viewOf(fl *fleet.Fleet) (v autoscaleView) {
	a := fl.Autoscaler
	for i := range 4 {
		v.Available[i] = fl.States()[i].Available
		v.Parked[i] = a.Parked(i)
		v.Spare[i] = a.Spare(i)
	}
	v.Provisioned = a.Provisioned()
	return v
}

// TestAutoscaleWithSpares: warm spares beside the autoscaler. The spare
// is outside the autoscaler's range (not provisioned by it, never
// parked); a failure of a parked replica gets no spare; a failure of a
// serving one does, and from then on the spare is the autoscaler's
// serving replica and the failed one a spare (once repaired, a warm one),
// so the autoscaler starts no replacement: the parked replica stays
// parked, two replicas serve throughout.
func TestAutoscaleWithSpares(t *testing.T) {
	eng, fl, d := autoscaledSpareFleet(t, 0)
	hour := 3600 * sim.Second
	d.failAt(50, 2, hour)  // the parked replica: no spare for it
	d.failAt(100, 0, hour) // a serving one: the spare stands in
	T, F := true, false
	want := map[float64]autoscaleView{
		20:                {Available: [4]bool{T, T, F, F}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{F, F, F, T}, Provisioned: 2},
		60:                {Available: [4]bool{T, T, F, F}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{F, F, F, T}, Provisioned: 2},
		101:               {Available: [4]bool{F, T, F, T}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{T, F, F, F}, Provisioned: 2},
		300:               {Available: [4]bool{F, T, F, T}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{T, F, F, F}, Provisioned: 2},
		3600 + 100 + 61:   {Available: [4]bool{F, T, F, T}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{T, F, F, F}, Provisioned: 2},
		3600 + 100 + 1000: {Available: [4]bool{F, T, F, T}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{T, F, F, F}, Provisioned: 2},
	}
	got := map[float64]autoscaleView{}
	for s := range want {
		eng.Schedule(sim.FromSeconds(s), sim.PriorityMetrics, func(sim.Time) { got[s] = viewOf(fl) })
	}
	for eng.Step() {
		require.NoError(t, fl.CheckLifecycle())
	}
	require.Equal(t, want, got)
	require.Equal(t, fleet.PhaseSpare, fl.Life.PhaseAt(0, sim.FromSeconds(3600+100+61)), "replica 0, repaired, waits as the spare")
	for _, e := range fl.Autoscaler.Events {
		require.NotEqual(t, "start", e.Event, "no replacement started: %+v", e)
	}
}

// TestAutoscaleSpareSwapDelay: a spare in its swap delay counts as
// starting, so the autoscaler starts no replacement for the failed
// replica meanwhile; it serves when the swap ends.
func TestAutoscaleSpareSwapDelay(t *testing.T) {
	eng, fl, d := autoscaledSpareFleet(t, 120)
	d.failAt(100, 0, 3600*sim.Second)
	T, F := true, false
	want := map[float64]autoscaleView{
		101: {Available: [4]bool{F, T, F, F}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{T, F, F, F}, Provisioned: 2},
		215: {Available: [4]bool{F, T, F, F}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{T, F, F, F}, Provisioned: 2},
		221: {Available: [4]bool{F, T, F, T}, Parked: [4]bool{F, F, T, F}, Spare: [4]bool{T, F, F, F}, Provisioned: 2},
	}
	got := map[float64]autoscaleView{}
	for s := range want {
		eng.Schedule(sim.FromSeconds(s), sim.PriorityMetrics, func(sim.Time) { got[s] = viewOf(fl) })
	}
	for eng.Step() {
		require.NoError(t, fl.CheckLifecycle())
	}
	require.Equal(t, want, got)
	for _, e := range fl.Autoscaler.Events {
		require.NotEqual(t, "start", e.Event, "no replacement started: %+v", e)
	}
}

// TestAutoscaleSparesSummary: the autoscale block counts the autoscaler's
// range only (its replicas_mean and replicas_max leave the spare out),
// and the bill pays the spare for the whole run.
func TestAutoscaleSparesSummary(t *testing.T) {
	src := small + `
[cost]
power = false
[failures]
enabled = true
rate_multiplier = 1e-9
spares = 1
[autoscale]
enabled = true
min_replicas = 1
target = 100000
`
	sc, res, s := runConserved(t, src)
	require.Equal(t, 1, s.Autoscale.ReplicasMax)
	require.InDelta(t, 1, s.Autoscale.ReplicasMean, 1e-9, "one replica serves; the spare is not the autoscaler's")
	secs := res.EndTime.Seconds()
	// The serving replica and the spare, each one H100, the whole run
	// (replica 1 of cluster.replicas = 2 parked throughout).
	require.InDelta(t, 2*secs/3600*sc.Price(), s.Cost.USD, 1e-6)
	requireDeterministic(t, sc, src)
}

// TestAutoscaleGroupSpares: TestGroupSpares' fleet autoscaled. Each
// group's spares still stand in for its own replicas only, and the
// autoscale block counts the seven serving replicas at most. (A spare
// that stood in is the autoscaler's, which may park it while the repaired
// replica it replaced waits as the spare: a spares group's $ is its
// replicas', not the whole run's.)
func TestAutoscaleGroupSpares(t *testing.T) {
	src := groupSparesSrc(1, 2) + `[autoscale]
enabled = true
min_replicas = 3
initial_replicas = 5
interval_s = 10
`
	sc, res, s := runConserved(t, src)
	require.Positive(t, s.Failures.SparesUsed, "spares stood in")
	kind := []int{0, 0, 0, 1, 1, 1, 1, 0, 1, 1} // replicas 0-2 hgx, 3-6 nvl, 7 hgx's spare, 8-9 nvl's
	for _, sw := range spareSwaps(t, res) {
		require.Equal(t, kind[sw.i], kind[sw.j], "%+v", sw)
	}
	require.LessOrEqual(t, s.Autoscale.ReplicasMax, 7)
	require.LessOrEqual(t, s.Autoscale.ReplicasMean, 7.0)
	requireDeterministic(t, sc, src)
}

// TestDecodeAutoscaleSpares: [disagg.autoscale] with failures.decode_spares.
// The decode pool's spare (its last replica) is outside its autoscaler's
// range: the autoscale block's replicas leave it out, and it waits the
// whole run (no failure strikes) while the autoscaler parks and starts the
// serving replicas.
func TestDecodeAutoscaleSpares(t *testing.T) {
	src := small + `
[disagg]
enabled = true
[disagg.decode]
replicas = 3
[disagg.autoscale]
enabled = true
min_replicas = 1
target = 100000
[failures]
enabled = true
rate_multiplier = 1e-9
decode_spares = 1
`
	sc, res, s := runConserved(t, src)
	d := res.Fleet.Disagg
	require.Len(t, d.Decode.Replicas, 4, "three serving and a spare")
	a := d.Autoscaler
	require.True(t, a.Spare(3))
	require.False(t, a.Parked(3))
	require.True(t, a.Parked(2), "the autoscaler keeps its minimum")
	as := s.Disagg.Autoscale
	require.Equal(t, 1, as.ReplicasMax)
	require.InDelta(t, 1, as.ReplicasMean, 1e-9, "the spare is not the autoscaler's")
	require.Equal(t, fleet.PhaseSpare, d.Decode.Life.Phase(3))
	requireDeterministic(t, sc, src)
}
