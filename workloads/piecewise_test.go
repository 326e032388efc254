package workloads

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// countIn draws arrivals from p until untilS and counts them in bins of
// binS seconds.
func countIn(t *testing.T, p ArrivalProcess, seed uint64, untilS, binS float64) []float64 {
	t.Helper()
	rng := newRng(seed)
	bins := make([]float64, int(math.Ceil(untilS/binS)))
	var at sim.Time
	for n := 0; ; n++ {
		require.Less(t, n, 1_000_000, "runaway arrivals (stuck at %v)", at)
		next := p.NextArrival(rng, at)
		require.GreaterOrEqual(t, next, at)
		at = next
		if at.Seconds() >= untilS {
			return bins
		}
		bins[int(at.Seconds()/binS)]++
	}
}

// expectedIn is the profile's expected count in [a, b) seconds,
// integrated numerically from RateAt (independent of lambda's closed form).
func expectedIn(p *Piecewise, a, b float64) float64 {
	const n = 2000
	h := (b - a) / n
	s := 0.0
	for i := range n {
		s += p.RateAt(a+(float64(i)+0.5)*h) * h
	}
	return s
}

// TestPiecewiseCounts checks that counts per bin match the profile's
// expected counts within 4.5 Poisson standard deviations, for a linear
// ramp with a zero-rate stretch, a step profile and a repeating cycle.
func TestPiecewiseCounts(t *testing.T) {
	cases := []struct {
		name   string
		pts    []RatePoint
		interp string
		scale  float64
		repeat float64
		untilS float64
	}{
		{"linear ramp, gap, hold", []RatePoint{{0, 0}, {100, 50}, {200, 50}, {250, 0}, {300, 0}, {301, 20}}, InterpLinear, 1, 0, 500},
		{"step", []RatePoint{{0, 10}, {60, 80}, {120, 0}, {180, 30}}, InterpStep, 1, 0, 400},
		{"daily cycle scaled", []RatePoint{{0, 5}, {30, 40}, {60, 10}}, InterpLinear, 2, 90, 900},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPiecewise(c.pts, c.interp, c.scale, c.repeat)
			require.NoError(t, err)
			const bin = 10.0
			counts := countIn(t, p, 7, c.untilS, bin)
			total, want := 0.0, 0.0
			for i, got := range counts {
				exp := expectedIn(p, float64(i)*bin, float64(i+1)*bin)
				if exp == 0 {
					require.Zero(t, got, "bin %d has arrivals where the rate is 0", i)
					continue
				}
				require.InDelta(t, exp, got, 4.5*math.Sqrt(exp)+1, "bin %d [%g, %g) s", i, float64(i)*bin, float64(i+1)*bin)
				total += got
				want += exp
			}
			require.InDelta(t, want, total, 4*math.Sqrt(want))
		})
	}
}

// TestPiecewiseInverse pins the closed forms: Λ(Λ⁻¹(x)) = x, and Λ agrees
// with the numerical integral of RateAt.
func TestPiecewiseInverse(t *testing.T) {
	for _, interp := range []string{InterpLinear, InterpStep} {
		for _, repeat := range []float64{0, 500} {
			p, err := NewPiecewise([]RatePoint{{0, 3}, {100, 0}, {150, 0}, {200, 40}, {400, 7}}, interp, 1.5, repeat)
			require.NoError(t, err)
			for _, x := range []float64{0, 1e-9, 10, 149.9, 150, 151, 3000, 5777.7, 1e5} {
				tS := p.inverse(x)
				require.InDelta(t, x, p.lambda(tS), 1e-6*max(1, x), "%s repeat %v: x=%v t=%v", interp, repeat, x, tS)
			}
			for _, b := range []float64{50, 125, 260, 450, 1234} {
				require.InDelta(t, expectedIn(p, 0, b), p.lambda(b), 1e-3*p.lambda(b)+1e-9, "%s repeat %v: Λ(%v)", interp, repeat, b)
			}
		}
	}
}

func TestPiecewiseEndsAtZeroRate(t *testing.T) {
	p, err := NewPiecewise([]RatePoint{{0, 10}, {5, 0}}, InterpStep, 1, 0)
	require.NoError(t, err)
	rng := newRng(1)
	var at sim.Time
	n := 0
	for {
		at = p.NextArrival(rng, at)
		if at == sim.Forever {
			break
		}
		require.Less(t, at.Seconds(), 5.0)
		n++
		require.Less(t, n, 1000)
	}
	require.Positive(t, n)
}

func TestPiecewiseRefusesBadProfiles(t *testing.T) {
	cases := map[string]struct {
		pts    []RatePoint
		scale  float64
		repeat float64
		want   string
	}{
		"empty":          {nil, 1, 0, "at least one point"},
		"late start":     {[]RatePoint{{5, 1}}, 1, 0, "t_s = 0"},
		"not increasing": {[]RatePoint{{0, 1}, {10, 1}, {10, 2}}, 1, 0, "point 3"},
		"negative rate":  {[]RatePoint{{0, 1}, {10, -1}}, 1, 0, "point 2: rate_per_s"},
		"all zero":       {[]RatePoint{{0, 0}, {10, 0}}, 1, 0, "every rate is 0"},
		"NaN rate":       {[]RatePoint{{0, math.NaN()}}, 1, 0, "rate_per_s"},
		"zero scale":     {[]RatePoint{{0, 1}}, 0, 0, "scale"},
		"short repeat":   {[]RatePoint{{0, 1}, {10, 1}}, 1, 5, "repeat_s"},
	}
	for name, c := range cases {
		_, err := NewPiecewise(c.pts, InterpLinear, c.scale, c.repeat)
		require.ErrorContains(t, err, c.want, name)
	}
}

func TestReadRateProfile(t *testing.T) {
	fsys := fstest.MapFS{
		"ok.csv":     {Data: []byte("\ufefft_s,rate_per_s\n0,5\n3600, 20\n7200,5\n")},
		"header.csv": {Data: []byte("time,rate\n0,5\n")},
		"bad.csv":    {Data: []byte("t_s,rate_per_s\n0,5\n10,x\n")},
		"order.csv":  {Data: []byte("t_s,rate_per_s\n0,5\n10,1\n9,2\n")},
		"neg.csv":    {Data: []byte("t_s,rate_per_s\n0,5\n10,-1\n")},
		"fields.csv": {Data: []byte("t_s,rate_per_s\n0,5,6\n")},
		"empty.csv":  {Data: []byte("")},
		"nopts.csv":  {Data: []byte("t_s,rate_per_s\n")},
	}
	pts, err := ReadRateProfile(fsys, "ok.csv")
	require.NoError(t, err)
	require.Equal(t, []RatePoint{{0, 5}, {3600, 20}, {7200, 5}}, pts)
	for file, want := range map[string]string{
		"header.csv": "header.csv:1: header must be t_s,rate_per_s",
		"bad.csv":    "bad.csv:3: rate_per_s: not a number",
		"order.csv":  "order.csv:4: t_s must be after",
		"neg.csv":    "neg.csv:3: rate_per_s must be",
		"fields.csv": "fields.csv",
		"empty.csv":  "empty.csv:1: empty file",
		"nopts.csv":  "nopts.csv:2: no points",
		"gone.csv":   "gone.csv",
	} {
		_, err := ReadRateProfile(fsys, file)
		require.ErrorContains(t, err, want, file)
	}
}

func TestPiecewiseConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rates.csv")
	require.NoError(t, os.WriteFile(file, []byte("t_s,rate_per_s\n0,2\n60,30\n120,2\n"), 0o644))

	inline := DefaultConfig()
	inline.Arrival.Process = ProcessPiecewise
	inline.Arrival.Points = [][]float64{{0, 2}, {60, 30}, {120, 2}}
	inline.DurationS = 600
	inline.Arrival.RepeatS = 120

	fromFile := inline
	fromFile.Arrival.Points = nil
	fromFile.Arrival.ProfileFile = file
	require.NoError(t, fromFile.Arrival.CheckProfile())

	a := drain(t, mustNew(t, inline, 3), 0)
	b := drain(t, mustNew(t, fromFile, 3), 0)
	checkOrder(t, a)
	require.Equal(t, a, b, "inline points and the same CSV give the same requests")
	// The mean rate of the cycle is (2+30)/2 = 16 req/s: 9,600 expected in 600 s.
	require.InDelta(t, 9600, len(a), 4*math.Sqrt(9600))

	bad := map[string]func(c *Config){
		"both":        func(c *Config) { c.Arrival.ProfileFile = file },
		"neither":     func(c *Config) { c.Arrival.Points = nil },
		"short point": func(c *Config) { c.Arrival.Points = [][]float64{{0}} },
		"interp":      func(c *Config) { c.Arrival.Interpolation = "cubic" },
		"scale":       func(c *Config) { c.Arrival.Scale = -1 },
		"order":       func(c *Config) { c.Arrival.Points = [][]float64{{0, 1}, {0, 2}} },
	}
	for name, mut := range bad {
		c := inline
		mut(&c)
		var ps config.Problems
		c.Validate("workload", &ps)
		require.Error(t, ps.Err(), name)
		require.True(t, strings.Contains(ps.Err().Error(), "workload.arrival."), name)
	}
}
