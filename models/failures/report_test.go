package failures

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

func downEvent(at, repair sim.Time, first, n int) Event {
	return Event{Time: at, Category: "x", Component: ComponentPSU, Scope: ScopeHost, FirstGPU: first, GPUs: n,
		DownFirstGPU: first, DownGPUs: n, Repair: repair, SpeedFraction: 1, Precursor: NoPrecursor}
}

func TestReportSmall(t *testing.T) {
	tally := NewTally(100)
	tally.Add(downEvent(0, 10*sim.Hour, 0, 8))           // 8 down in [0,10)
	tally.Add(downEvent(5*sim.Hour, 10*sim.Hour, 4, 8))  // overlaps GPUs 4..7: 12 down in [5,10), 8 in [10,15)
	tally.Add(downEvent(50*sim.Hour, 0, 0, 8))           // a restart: nothing down
	tally.Add(downEvent(90*sim.Hour, 20*sim.Hour, 0, 1)) // clipped at 100 h
	r := tally.Report(100*sim.Hour, []float64{0.01, 0.1})
	assert.Equal(t, 4, r.Incidents)
	assert.InDelta(t, 0.25, r.AnyDown, 1e-12, "[0,15) and [90,100)")
	assert.Equal(t, []DownFraction{{0.01, 1, 0.25}, {0.1, 10, 0.05}}, r.Down)
	assert.InDelta(t, (8*5+12*5+8*5+1*10)/100.0, r.MeanGPUsDown, 1e-12)
	assert.Equal(t, 88, r.MinAvailable)
	assert.Equal(t, []CapacityStep{{0, 92}, {5 * sim.Hour, 88}, {10 * sim.Hour, 92}, {15 * sim.Hour, 100},
		{90 * sim.Hour, 99}, {100 * sim.Hour, 100}}, r.Capacity)
	assert.Equal(t, []Bucket{{1, 1}, {8, 3}}, r.GPUsLost)
	assert.InDelta(t, 80+80+10, r.DownGPUHours, 1e-9)
	assert.InDelta(t, 10.0, r.RepairHours.P50, 1e-12)
	assert.InDelta(t, 20.0, r.RepairHours.Max, 1e-12)
	assert.InDelta(t, 10.0, r.RepairHours.Mean, 1e-12)
	assert.Equal(t, []Count{{"none", 4}}, r.ByXid)
}

// TestReportMatchesBruteForce: the sweep line agrees with a direct count of
// GPUs down between every pair of boundaries.
func TestReportMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 50 {
		gpus := 1 + rng.IntN(40)
		horizon := sim.Time(1000 + rng.IntN(1000))
		tally := NewTally(gpus)
		var evs []Event
		for range rng.IntN(30) {
			first := rng.IntN(gpus)
			n := 1 + rng.IntN(gpus-first)
			ev := downEvent(sim.Time(rng.IntN(1500)), sim.Time(rng.IntN(500)), first, n)
			evs = append(evs, ev)
			tally.Add(ev)
		}
		th := []float64{0.001, 0.1, 0.5}
		r := tally.Report(horizon, th)
		// Brute force: every nanosecond-boundary segment.
		pts := []sim.Time{0, horizon}
		for _, ev := range evs {
			pts = append(pts, min(max(ev.Time, 0), horizon), min(ev.End(), horizon))
		}
		slices.Sort(pts)
		pts = slices.Compact(pts)
		var any, weighted float64
		need := []int{1, max(1, int(ceil(0.1*float64(gpus)))), max(1, int(ceil(0.5*float64(gpus))))}
		byTh := make([]float64, 3)
		minAvail := gpus
		for i := 0; i+1 < len(pts); i++ {
			mid := pts[i]
			down := 0
			for g := range gpus {
				for _, ev := range evs {
					if ev.Time <= mid && mid < ev.End() && g >= ev.FirstGPU && g < ev.FirstGPU+ev.GPUs {
						down++
						break
					}
				}
			}
			span := float64(pts[i+1] - pts[i])
			if down > 0 {
				any += span
			}
			weighted += span * float64(down)
			for j, n := range need {
				if down >= n {
					byTh[j] += span
				}
			}
			minAvail = min(minAvail, gpus-down)
		}
		hz := float64(horizon)
		require.InDelta(t, any/hz, r.AnyDown, 1e-12, "trial %d", trial)
		require.InDelta(t, weighted/hz, r.MeanGPUsDown, 1e-9, "trial %d", trial)
		for j := range th {
			require.Equal(t, need[j], r.Down[j].GPUs, "trial %d", trial)
			require.InDelta(t, byTh[j]/hz, r.Down[j].TimeFraction, 1e-12, "trial %d threshold %v", trial, th[j])
		}
		require.Equal(t, minAvail, r.MinAvailable, "trial %d", trial)
		// The capacity series integrates to the same mean.
		var integral float64
		for i, s := range r.Capacity {
			end := horizon
			if i+1 < len(r.Capacity) {
				end = r.Capacity[i+1].Time
			}
			integral += float64(end-s.Time) * float64(gpus-s.Available)
		}
		require.InDelta(t, weighted, integral, 1e-6, "trial %d", trial)
	}
}

func ceil(x float64) float64 {
	n := float64(int64(x))
	if n < x {
		return n + 1
	}
	return n
}
