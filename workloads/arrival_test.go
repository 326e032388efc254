package workloads

import (
	"math"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gaps returns n interarrival times of p in seconds.
func gaps(p ArrivalProcess, seed uint64, n int) []float64 {
	rng := newRng(seed)
	out := make([]float64, n)
	var t sim.Time
	for i := range out {
		next := p.NextArrival(rng, t)
		out[i] = (next - t).Seconds()
		t = next
	}
	return out
}

func TestRenewalArrivals(t *testing.T) {
	const n = 200_000
	tests := []struct {
		name   string
		p      ArrivalProcess
		rate   float64
		cv     float64
		meanTo float64 // relative tolerance on the mean gap
		cvTo   float64 // relative tolerance on the CV
	}{
		// Standard error of the mean gap is cv/sqrt(n) = 0.22% per unit cv.
		{"poisson", Poisson{RatePerS: 10}, 10, 1, 0.01, 0.02},
		{"gamma cv 0.5", Gamma{RatePerS: 3, CV: 0.5}, 3, 0.5, 0.01, 0.02},
		{"gamma cv 1", Gamma{RatePerS: 3, CV: 1}, 3, 1, 0.01, 0.02},
		{"gamma cv 2", Gamma{RatePerS: 100, CV: 2}, 100, 2, 0.02, 0.04},
		{"gamma cv 4", Gamma{RatePerS: 0.5, CV: 4}, 0.5, 4, 0.04, 0.06},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mean, cv := meanCV(gaps(tt.p, 1, n))
			assert.InEpsilon(t, 1/tt.rate, mean, tt.meanTo, "mean interarrival, s")
			assert.InEpsilon(t, tt.cv, cv, tt.cvTo, "interarrival CV")
		})
	}
}

func TestDiurnal(t *testing.T) {
	d := Diurnal{MeanRatePerS: 50, Amplitude: 0.8, PeriodS: 100, PhaseS: 30}
	rng := newRng(2)
	const horizon = 20 * 100 * sim.Second
	var n, nearPeak int
	for at := d.NextArrival(rng, 0); at <= horizon; at = d.NextArrival(rng, at) {
		n++
		phase := math.Mod(at.Seconds()-d.PhaseS+1000, d.PeriodS) / d.PeriodS // 0 at a peak
		if phase < 0.25 || phase >= 0.75 {
			nearPeak++
		}
	}
	// 100,000 expected arrivals: the count's standard error is 0.3%.
	assert.InEpsilon(t, 50.0, float64(n)/horizon.Seconds(), 0.02, "mean rate over whole periods")
	// Half a period centred on the peak holds (1+2A/π)/2 of the arrivals.
	assert.InEpsilon(t, (1+2*d.Amplitude/math.Pi)/2, float64(nearPeak)/float64(n), 0.02, "peak half's share")

	flat := Diurnal{MeanRatePerS: 10, Amplitude: 0, PeriodS: 1, PhaseS: 0}
	mean, cv := meanCV(gaps(flat, 3, 100_000))
	assert.InEpsilon(t, 0.1, mean, 0.01, "amplitude 0 is Poisson")
	assert.InEpsilon(t, 1, cv, 0.02, "amplitude 0 is Poisson")
}

func TestArrivalDeterministic(t *testing.T) {
	for _, p := range []ArrivalProcess{Poisson{RatePerS: 5}, Gamma{RatePerS: 5, CV: 3}, Diurnal{MeanRatePerS: 5, Amplitude: 1, PeriodS: 10}} {
		assert.Equal(t, gaps(p, 9, 1000), gaps(p, 9, 1000))
		assert.NotEqual(t, gaps(p, 9, 1000), gaps(p, 10, 1000))
	}
}

func TestArrivalSaturates(t *testing.T) {
	rng := newRng(1)
	assert.Equal(t, sim.Forever, Poisson{RatePerS: 1e-300}.NextArrival(rng, 0))
	assert.Equal(t, sim.Forever, Poisson{RatePerS: 1}.NextArrival(rng, sim.Forever-1))
	assert.Equal(t, sim.Forever, Diurnal{MeanRatePerS: 1e-300, PeriodS: 1}.NextArrival(rng, 0))
}

func TestArrivalPanicsOnBadParameters(t *testing.T) {
	rng := newRng(1)
	for _, p := range []ArrivalProcess{
		Poisson{}, Poisson{RatePerS: math.NaN()}, Gamma{RatePerS: 1}, Gamma{RatePerS: math.Inf(1), CV: 1},
		Diurnal{MeanRatePerS: 1, PeriodS: 1, Amplitude: 2}, Diurnal{MeanRatePerS: 1},
	} {
		require.Panics(t, func() { p.NextArrival(rng, 0) }, "%#v", p)
	}
}

func TestSampleGamma(t *testing.T) {
	for _, shape := range []float64{0.1, 0.5, 1, 2.5, 30} {
		rng := newRng(4)
		xs := make([]float64, 200_000)
		for i := range xs {
			xs[i] = sampleGamma(rng, shape)
		}
		mean, cv := meanCV(xs)
		assert.InEpsilon(t, shape, mean, 0.03, "mean of Gamma(%v, 1)", shape)
		assert.InEpsilon(t, 1/math.Sqrt(shape), cv, 0.04, "CV of Gamma(%v, 1)", shape)
	}
}
