package workloads

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
)

// roundCases are values around every place rounding can go wrong: halves
// and their float neighbours, integers and theirs, tiny values, the
// largest doubles with a fraction (below 2^52) and the first without,
// powers of two up to 2^63, and random values at many scales.
func roundCases() []float64 {
	var xs []float64
	near := func(x float64) {
		xs = append(xs, x, math.Nextafter(x, 0), math.Nextafter(x, math.Inf(1)))
	}
	for i := range 70 {
		near(float64(i))
		near(float64(i) + 0.5)
	}
	for e := -1074; e <= 63; e++ {
		near(math.Ldexp(1, e))
		near(math.Ldexp(1, e) + 0.5)
		near(math.Ldexp(1, e) * 1.5)
	}
	near(0.49999999999999994)
	near(1<<52 - 0.5)
	near(1<<53 + 2)
	near(math.MaxInt32)
	near(math.MaxInt32 + 0.5)
	near(1 << 62)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200_000 {
		xs = append(xs, math.Exp(rng.NormFloat64()*8))
	}
	return append(xs, 0, math.Copysign(0, -1), math.Inf(1), math.MaxFloat64, math.NaN())
}

// TestRoundTokensIsClampRound: roundTokens is clampTokens(math.Round(x))
// for every case and clamp bounds below, around and far above it.
func TestRoundTokensIsClampRound(t *testing.T) {
	bounds := [][2]int32{{1, 1}, {1, 2}, {1, 3}, {2, 7}, {1, 4096}, {1, 32768}, {100, 200}, {1, math.MaxInt32}}
	for _, x := range roundCases() {
		for _, b := range bounds {
			if got, want := roundTokens(x, b[0], b[1]), clampTokens(math.Round(x), b[0], b[1]); got != want {
				t.Fatalf("roundTokens(%v, %d, %d) = %d, want %d", x, b[0], b[1], got, want)
			}
		}
	}
}

// TestRoundNonNegIsRound: roundNonNeg is math.Round, bit for bit.
func TestRoundNonNegIsRound(t *testing.T) {
	for _, x := range roundCases() {
		for _, v := range []float64{x, x * 1e9} {
			if got, want := roundNonNeg(v), math.Round(v); math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("roundNonNeg(%v) = %v, want %v", v, got, want)
			}
		}
	}
}

// diurnalRef is Diurnal.NextArrival as it was before it skipped the
// cosine for draws under the least rate: the reference the fast one must
// match arrival for arrival.
func diurnalRef(d Diurnal, rng *rand.Rand, prev sim.Time) sim.Time {
	peak := d.MeanRatePerS * (1 + d.Amplitude)
	w := 2 * math.Pi / d.PeriodS
	t := prev
	for {
		t = addSeconds(t, rng.ExpFloat64()/peak)
		if t == sim.Forever {
			return t
		}
		rate := d.MeanRatePerS * (1 + d.Amplitude*math.Cos(w*(t.Seconds()-d.PhaseS)))
		if rng.Float64()*peak <= rate {
			return t
		}
	}
}

// TestDiurnalMatchesReference: the same arrivals as the reference, for
// amplitudes from 0 to 1 (where the least rate is 0), odd means, periods
// and phases, 20,000 arrivals each.
func TestDiurnalMatchesReference(t *testing.T) {
	for i, d := range []Diurnal{
		{MeanRatePerS: 1030, Amplitude: 0.3, PeriodS: 86400},
		{MeanRatePerS: 1, Amplitude: 1, PeriodS: 60, PhaseS: 17},
		{MeanRatePerS: 0.37, Amplitude: 0, PeriodS: 3600},
		{MeanRatePerS: 250, Amplitude: 0.999, PeriodS: 10, PhaseS: -3.3},
		{MeanRatePerS: 3e4, Amplitude: 1e-9, PeriodS: 1, PhaseS: 0.5},
		{MeanRatePerS: 7, Amplitude: 0.5, PeriodS: 0.01},
		{MeanRatePerS: 1000, Amplitude: 0.3, PeriodS: 2, PhaseS: 0.25}, // ten periods: many troughs
		{MeanRatePerS: 1000, Amplitude: 0.02, PeriodS: 1},
	} {
		a := rand.New(rand.NewPCG(uint64(i), 99))
		b := rand.New(rand.NewPCG(uint64(i), 99))
		var ta, tb sim.Time
		for n := range 20_000 {
			ta, tb = d.NextArrival(a, ta), diurnalRef(d, b, tb)
			if ta != tb {
				t.Fatalf("%+v: arrival %d at %d, the reference at %d", d, n, ta, tb)
			}
		}
	}
}
