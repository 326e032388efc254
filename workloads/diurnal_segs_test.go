package workloads

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/require"
)

// diurnalCases are processes at every scale: a day at a fleet's rate, short
// periods at low and high rates (segments of one draw or of thousands),
// amplitudes 0 and 1, phases before, inside and far after the start.
func diurnalCases() []Diurnal {
	return []Diurnal{
		{MeanRatePerS: 1030, Amplitude: 0.3, PeriodS: 86400, PhaseS: 43200},
		{MeanRatePerS: 50, Amplitude: 0.8, PeriodS: 100, PhaseS: 30},
		{MeanRatePerS: 5, Amplitude: 1, PeriodS: 10},
		{MeanRatePerS: 10, Amplitude: 0, PeriodS: 1},
		{MeanRatePerS: 2000, Amplitude: 0.99, PeriodS: 0.37, PhaseS: -12.5},
		{MeanRatePerS: 0.01, Amplitude: 0.5, PeriodS: 3, PhaseS: 1e7},
		{MeanRatePerS: 300, Amplitude: 0.6, PeriodS: 1e-6, PhaseS: 0.1},
		{MeanRatePerS: 40, Amplitude: 0.7, PeriodS: 3600, PhaseS: 1e12},
	}
}

// TestDiurnalSegsMatchesDiurnal checks that the segment-bounded process
// draws exactly Diurnal's arrivals from the same stream, also from starts
// far into the run.
func TestDiurnalSegsMatchesDiurnal(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	for i, d := range diurnalCases() {
		for _, start := range []sim.Time{0, 7 * sim.Second, 400 * 24 * 3600 * sim.Second} {
			s := newDiurnalSegs(d)
			r1, r2 := rand.New(rand.NewPCG(uint64(i), 5)), rand.New(rand.NewPCG(uint64(i), 5))
			a, b := start, start
			for j := 0; j < n && a != sim.Forever; j++ {
				a, b = d.NextArrival(r1, a), s.NextArrival(r2, b)
				require.Equal(t, a, b, "case %d (%+v) from %v, arrival %d", i, d, start, j)
			}
		}
	}
}

// TestDiurnalSegsBoundsHold checks the claim the process rests on: every
// rate Diurnal computes inside a segment lies within the segment's bounds,
// at its ends, at random times and around the rate's extremes; and the
// bounds are tight enough to spare the cosine on most draws.
func TestDiurnalSegsBoundsHold(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i, d := range diurnalCases() {
		s := newDiurnalSegs(d)
		w := d.radPerS()
		rate := func(at sim.Time) float64 { return d.rateOf(math.Cos(d.phase(w, at))) } // as Diurnal computes it
		var width float64
		const segs = 2000
		for range segs {
			k := rng.Int64N(1 << 20)
			if k*s.segNs < 0 || k > math.MaxInt64/s.segNs-1 {
				k = rng.Int64N(math.MaxInt64/s.segNs - 1)
			}
			s.bounds(k)
			width += (s.hi - s.lo) / s.peak
			a := k * s.segNs
			probe := []int64{a, a + s.segNs, a + s.segNs/2}
			for range 20 {
				probe = append(probe, a+rng.Int64N(s.segNs+1))
			}
			// times at the peaks and troughs near the segment
			x := w * (sim.Time(a).Seconds() - d.PhaseS)
			for j := math.Floor(x/math.Pi) - 1; j <= math.Floor(x/math.Pi)+2; j++ {
				at := (j*math.Pi/w + d.PhaseS) * 1e9
				for _, off := range []float64{-1, 0, 1} {
					if p := int64(at) + int64(off); p >= a && p <= a+s.segNs {
						probe = append(probe, p)
					}
				}
			}
			for _, p := range probe {
				r := rate(sim.Time(p))
				require.True(t, s.lo <= r && r <= s.hi, "case %d segment %d at %d ns: rate %v outside [%v, %v]", i, k, p, r, s.lo, s.hi)
			}
		}
		if i == 0 {
			// a day in 1,024 segments: the mean gap between the bounds is
			// about 2/π·2π/1024·A·Mean/peak ≈ 0.09% of the peak
			require.Less(t, width/segs, 0.002, "case %d: mean bound gap / peak", i)
		}
	}
}
