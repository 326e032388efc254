package quantile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim/quantile"
)

// refQuantile is the type-7 (numpy 'linear') quantile of xs, written
// independently of the package: sort a copy, then interpolate between the
// closest ranks as (1-f)*x[i] + f*x[i+1].
func refQuantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return (1-f)*s[i] + f*s[i+1]
}

// sortedQuantile is refQuantile on an already sorted slice (for big samples).
func sortedQuantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return (1-f)*s[i] + f*s[i+1]
}

// closeTo asserts |got-want| <= 1e-12*max(1,|want|): exact-mode results may
// differ from the reference by float rounding of the interpolation only.
func closeTo(t *testing.T, want, got float64, msgAndArgs ...any) {
	t.Helper()
	assert.InDelta(t, want, got, 1e-12*math.Max(1, math.Abs(want)), msgAndArgs...)
}

// withinAlpha asserts the sketch-mode guarantee |got-want| <= alpha*want, with
// a relative slack of 1e-9 for float rounding of logs and exps.
func withinAlpha(t *testing.T, alpha, want, got float64, msgAndArgs ...any) {
	t.Helper()
	tol := alpha * want * (1 + 1e-9)
	if math.Abs(got-want) > tol {
		assert.Fail(t, fmt.Sprintf("relative error %.6g > alpha %v: want %v, got %v",
			math.Abs(got-want)/want, alpha, want, got), msgAndArgs...)
	}
}

func sketchOf(xs []float64, opts ...quantile.Option) *quantile.Sketch {
	s := quantile.New(opts...)
	for _, x := range xs {
		s.Add(x)
	}
	return s
}

var testQs = []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1}

func TestExactKnownValues(t *testing.T) {
	// Expected values are numpy.quantile(xs, q) with the default method.
	tests := []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 0.25, 1.75},
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{1, 2, 3, 4}, 0.9, 3.7},
		{[]float64{1, 2, 3, 4}, 1, 4},
		{[]float64{4, 3, 2, 1}, 0.9, 3.7},
		{[]float64{15, 20, 35, 40, 50}, 0.05, 16},
		{[]float64{15, 20, 35, 40, 50}, 0.3, 23},
		{[]float64{15, 20, 35, 40, 50}, 0.4, 29},
		{[]float64{50, 15, 40, 20, 35}, 0.5, 35},
		{[]float64{7}, 0, 7},
		{[]float64{7}, 0.99, 7},
		{[]float64{0, 0, 0, 10}, 0.5, 0},
		{[]float64{0, 0, 0, 10}, 0.9, 7},
		{[]float64{2, 2, 2}, 0.37, 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v@%v", tt.xs, tt.q), func(t *testing.T) {
			s := sketchOf(tt.xs)
			require.True(t, s.IsExact())
			closeTo(t, tt.want, s.Quantile(tt.q))
		})
	}
}

func TestExactMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := 1 + r.IntN(300)
		xs := make([]float64, 0, n)
		s := quantile.New()
		for i := range n {
			var x float64
			switch r.IntN(4) {
			case 0:
				x = 0
			case 1:
				x = float64(r.IntN(5)) // duplicates
			default:
				x = math.Exp(3 + r.NormFloat64())
			}
			xs = append(xs, x)
			s.Add(x)
			if i%37 == 0 { // interleave reads with writes: the sort must be redone
				q := r.Float64()
				closeTo(t, refQuantile(xs, q), s.Quantile(q), "trial %d after %d values, q=%v", trial, i+1, q)
			}
		}
		require.True(t, s.IsExact())
		qs := append(slices.Clone(testQs), r.Float64(), r.Float64())
		for _, q := range qs {
			closeTo(t, refQuantile(xs, q), s.Quantile(q), "trial %d, n=%d, q=%v", trial, n, q)
		}
		assert.Equal(t, uint64(n), s.Count())
		assert.Equal(t, slices.Min(xs), s.Min())
		assert.Equal(t, slices.Max(xs), s.Max())
	}
}

type distribution struct {
	name string
	draw func(r *rand.Rand) float64
}

var distributions = []distribution{
	// Latency-like: median 50 ms, heavy right tail.
	{"lognormal", func(r *rand.Rand) float64 { return math.Exp(math.Log(50) + 1.2*r.NormFloat64()) }},
	{"exponential", func(r *rand.Rand) float64 { return 20 * r.ExpFloat64() }},
	// A tenth of the values are exactly zero (e.g. a cache hit with no queueing).
	{"exponential+zeros", func(r *rand.Rand) float64 {
		if r.IntN(10) == 0 {
			return 0
		}
		return 0.5 * r.ExpFloat64()
	}},
}

func samples(d distribution, n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = d.draw(r)
	}
	return xs
}

func sampleSize(t *testing.T) int {
	if testing.Short() {
		return 100_000
	}
	return 1_000_000
}

func TestSketchAccuracy(t *testing.T) {
	n := sampleSize(t)
	for i, d := range distributions {
		for _, alpha := range []float64{0.01, 0.001} {
			t.Run(fmt.Sprintf("%s/alpha=%v", d.name, alpha), func(t *testing.T) {
				xs := samples(d, n, uint64(i+1))
				s := sketchOf(xs, quantile.WithAlpha(alpha))
				require.False(t, s.IsExact())

				sorted := slices.Clone(xs)
				slices.Sort(sorted)
				for _, q := range testQs {
					withinAlpha(t, alpha, sortedQuantile(sorted, q), s.Quantile(q), "q=%v", q)
				}
				assert.Equal(t, uint64(n), s.Count())
				assert.Equal(t, sorted[0], s.Min())
				assert.Equal(t, sorted[n-1], s.Max())
				assert.Equal(t, sorted[0], s.Quantile(0), "rank 0 is exact")
				assert.Equal(t, sorted[n-1], s.Quantile(1), "rank n-1 is exact")
				var sum float64
				for _, x := range sorted {
					sum += x
				}
				assert.InEpsilon(t, sum, s.Sum(), 1e-9)
				assert.InEpsilon(t, sum/float64(n), s.Mean(), 1e-9)
			})
		}
	}
}

// TestSketchAccuracyEveryRank checks the guarantee at every percentile of a
// smaller sample, in a sketch forced out of exact mode from the first value.
func TestSketchAccuracyEveryRank(t *testing.T) {
	for i, d := range distributions {
		t.Run(d.name, func(t *testing.T) {
			xs := samples(d, 20_000, uint64(100+i))
			s := sketchOf(xs, quantile.WithExactLimit(0))
			require.False(t, s.IsExact())
			sorted := slices.Clone(xs)
			slices.Sort(sorted)
			for k := 0; k <= 1000; k++ {
				q := float64(k) / 1000
				withinAlpha(t, quantile.DefaultAlpha, sortedQuantile(sorted, q), s.Quantile(q), "q=%v", q)
			}
		})
	}
}

func TestModeSwitchAtLimit(t *testing.T) {
	s := quantile.New(quantile.WithExactLimit(100))
	for i := range 100 {
		s.Add(float64(i + 1))
	}
	assert.True(t, s.IsExact(), "exact while Count() <= limit")
	assert.Equal(t, 0, s.NumBuckets())
	closeTo(t, 50.5, s.Quantile(0.5))
	s.Add(101)
	assert.False(t, s.IsExact(), "sketch once Count() > limit")
	assert.Positive(t, s.NumBuckets())
	withinAlpha(t, quantile.DefaultAlpha, 51, s.Quantile(0.5))
	assert.Equal(t, uint64(101), s.Count())

	z := quantile.New(quantile.WithExactLimit(0))
	z.Add(3)
	assert.False(t, z.IsExact(), "limit 0: sketch mode from the first value")
	assert.Equal(t, 3.0, z.Quantile(0.5), "a single value is both min and max: exact")
}

func TestMergeEqualsWhole(t *testing.T) {
	n := sampleSize(t) / 5
	for i, d := range distributions {
		t.Run(d.name, func(t *testing.T) {
			xs := samples(d, n, uint64(200+i))
			whole := sketchOf(xs)

			// Cut xs into parts of very different sizes: many below the exact
			// limit, some far above it, and one empty.
			r := rand.New(rand.NewPCG(uint64(i), 7))
			var parts []*quantile.Sketch
			parts = append(parts, quantile.New())
			// Part sizes scale with n (-short uses fewer samples), so there
			// are always more than 10 parts.
			small, big := max(2, min(3000, n/30)), max(2, min(40_000, n/8))
			for lo := 0; lo < n; {
				size := 1 + r.IntN(small)
				if r.IntN(5) == 0 {
					size = 1 + r.IntN(big)
				}
				hi := min(n, lo+size)
				parts = append(parts, sketchOf(xs[lo:hi]))
				lo = hi
			}
			require.Greater(t, len(parts), 10)

			seq := quantile.New()
			for _, p := range parts {
				seq.Merge(p)
			}
			tree := mergeTree(parts)

			sorted := slices.Clone(xs)
			slices.Sort(sorted)
			for _, m := range []struct {
				name string
				s    *quantile.Sketch
			}{{"sequential", seq}, {"tree", tree}} {
				assert.Equal(t, whole.Count(), m.s.Count(), m.name)
				assert.Equal(t, whole.Min(), m.s.Min(), m.name)
				assert.Equal(t, whole.Max(), m.s.Max(), m.name)
				assert.InEpsilon(t, whole.Sum(), m.s.Sum(), 1e-12, m.name)
				for _, q := range testQs {
					// Bucket counts are integers, so any grouping gives the
					// same quantiles bit for bit.
					assert.Equal(t, whole.Quantile(q), m.s.Quantile(q), "%s q=%v", m.name, q)
					withinAlpha(t, quantile.DefaultAlpha, sortedQuantile(sorted, q), m.s.Quantile(q), "%s q=%v", m.name, q)
				}
			}
		})
	}
}

// mergeTree merges parts pairwise, bottom up, into fresh sketches, leaving
// the parts unchanged.
func mergeTree(parts []*quantile.Sketch) *quantile.Sketch {
	level := parts
	for len(level) > 1 {
		var next []*quantile.Sketch
		for i := 0; i < len(level); i += 2 {
			m := level[i].Clone()
			if i+1 < len(level) {
				m.Merge(level[i+1])
			}
			next = append(next, m)
		}
		level = next
	}
	return level[0]
}

func TestMergeDeterministic(t *testing.T) {
	build := func() *quantile.Sketch {
		s := quantile.New(quantile.WithExactLimit(50))
		for i, d := range distributions {
			s.Merge(sketchOf(samples(d, 1000, uint64(300+i)), quantile.WithExactLimit(50)))
		}
		return s
	}
	a, b := build(), build()
	assert.Equal(t, a.Sum(), b.Sum(), "same merge order: identical sums")
	for _, q := range testQs {
		assert.Equal(t, a.Quantile(q), b.Quantile(q))
	}
}

func TestMergeExactStaysExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var all []float64
	whole := quantile.New(quantile.WithExactLimit(1000))
	for range 10 {
		part := quantile.New(quantile.WithExactLimit(1000))
		for range 100 {
			x := r.ExpFloat64()
			all = append(all, x)
			part.Add(x)
		}
		part.Quantile(0.5) // sorts the part in place; merging must not care
		whole.Merge(part)
	}
	require.True(t, whole.IsExact(), "1000 values within the limit of 1000")
	for _, q := range testQs {
		closeTo(t, refQuantile(all, q), whole.Quantile(q), "q=%v", q)
	}

	whole.Merge(sketchOf([]float64{1}))
	assert.False(t, whole.IsExact(), "1001 values exceed the limit")
	all = append(all, 1)
	for _, q := range testQs {
		withinAlpha(t, quantile.DefaultAlpha, refQuantile(all, q), whole.Quantile(q), "q=%v", q)
	}
}

func TestMergeSelfAndEmpty(t *testing.T) {
	xs := []float64{5, 1, 3}
	s := sketchOf(xs)
	s.Merge(s)
	assert.Equal(t, uint64(6), s.Count())
	closeTo(t, refQuantile(append(xs, xs...), 0.7), s.Quantile(0.7))
	closeTo(t, 18, s.Sum())

	big := sketchOf(samples(distributions[0], 10_000, 9))
	want := refQuantile(samples(distributions[0], 10_000, 9), 0.9)
	big.Merge(big)
	assert.Equal(t, uint64(20_000), big.Count())
	withinAlpha(t, quantile.DefaultAlpha, want, big.Quantile(0.9))

	before := s.Quantile(0.5)
	s.Merge(quantile.New())
	s.Merge(nil)
	assert.Equal(t, uint64(6), s.Count())
	assert.Equal(t, before, s.Quantile(0.5))

	e := quantile.New()
	e.Merge(big)
	assert.Equal(t, big.Quantile(0.99), e.Quantile(0.99))
}

func TestEmpty(t *testing.T) {
	s := quantile.New()
	assert.Equal(t, uint64(0), s.Count())
	assert.True(t, math.IsNaN(s.Quantile(0.5)))
	assert.True(t, math.IsNaN(s.Mean()))
	assert.True(t, math.IsNaN(s.Min()))
	assert.True(t, math.IsNaN(s.Max()))
	assert.Zero(t, s.Sum())
	assert.True(t, s.IsExact())
}

func TestResetReuse(t *testing.T) {
	s := sketchOf(samples(distributions[0], 10_000, 11))
	require.False(t, s.IsExact())
	s.Reset()
	assert.True(t, s.IsExact())
	assert.Equal(t, uint64(0), s.Count())
	assert.True(t, math.IsNaN(s.Quantile(0.5)))

	xs := samples(distributions[1], 10_000, 12)
	fresh := sketchOf(xs)
	for _, x := range xs {
		s.Add(x)
	}
	for _, q := range testQs {
		assert.Equal(t, fresh.Quantile(q), s.Quantile(q), "q=%v", q)
	}
	assert.Equal(t, fresh.Sum(), s.Sum())
}

func TestZeros(t *testing.T) {
	s := quantile.New(quantile.WithExactLimit(0))
	s.Add(math.Copysign(0, -1))
	s.Add(0)
	s.Add(0)
	s.Add(10)
	assert.Equal(t, 0.0, s.Quantile(0.5))
	assert.False(t, math.Signbit(s.Min()), "-0 is recorded as +0")
	assert.Equal(t, 10.0, s.Quantile(1))
	closeTo(t, 7, s.Quantile(0.9), "ranks 2 and 3 are the exact min-side zero and the max")
}

func TestMemoryBound(t *testing.T) {
	// Log-uniform values over 1e-3..1e6: nine decades, 1,037 buckets at 1%.
	r := rand.New(rand.NewPCG(13, 14))
	s := quantile.New()
	s.Add(1e-3)
	s.Add(1e6)
	for range 200_000 {
		s.Add(math.Pow(10, -3+9*r.Float64()))
	}
	assert.Less(t, s.NumBuckets(), 3000)
	assert.GreaterOrEqual(t, s.NumBuckets(), 1037)

	// The whole float64 range stays bounded too: 72,707 buckets at 1%, growth
	// slack included, even when the range grows one decade at a time.
	w := quantile.New(quantile.WithExactLimit(0))
	w.Add(1)
	for k := 1; k <= 308; k++ {
		w.Add(math.Pow(10, float64(k)))
		w.Add(math.Pow(10, -float64(k)))
	}
	w.Add(math.SmallestNonzeroFloat64)
	w.Add(math.MaxFloat64)
	assert.LessOrEqual(t, w.NumBuckets(), 72_707)
	assert.Equal(t, math.SmallestNonzeroFloat64, w.Quantile(0))
	assert.Equal(t, math.MaxFloat64, w.Quantile(1))
	withinAlpha(t, quantile.DefaultAlpha, 1, w.Quantile(0.5))
	withinAlpha(t, quantile.DefaultAlpha, 1e-100, w.Quantile(209.0/618), "rank 209 of 619")
}

func TestPanics(t *testing.T) {
	s := quantile.New()
	tests := []struct {
		name string
		f    func()
	}{
		{"Add NaN", func() { s.Add(math.NaN()) }},
		{"Add negative", func() { s.Add(-1e-9) }},
		{"Add +Inf", func() { s.Add(math.Inf(1)) }},
		{"Quantile below 0", func() { s.Quantile(-0.01) }},
		{"Quantile above 1", func() { s.Quantile(1.01) }},
		{"Quantile NaN", func() { s.Quantile(math.NaN()) }},
		{"alpha 0", func() { quantile.New(quantile.WithAlpha(0)) }},
		{"alpha 1", func() { quantile.New(quantile.WithAlpha(1)) }},
		{"alpha NaN", func() { quantile.New(quantile.WithAlpha(math.NaN())) }},
		{"negative limit", func() { quantile.New(quantile.WithExactLimit(-1)) }},
		{"Merge different alpha", func() {
			s.Merge(sketchOf([]float64{1}, quantile.WithAlpha(0.02)))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				require.NotNil(t, r, "no panic")
				msg, ok := r.(string)
				require.True(t, ok, "panic value %T", r)
				assert.True(t, strings.HasPrefix(msg, "quantile: "), msg)
			}()
			tt.f()
		})
	}
	assert.Equal(t, uint64(0), s.Count(), "rejected values are not counted")
}

// TestAddTwoEqualsTwoAdds: AddTwo(s, t, v) leaves s and t in exactly the
// state s.Add(v), t.Add(v) would (the full serialised state: bins, sum and
// its compensation, min, max), whether both sketches are in sketch mode
// with one alpha (the shared bucket), one is still exact, or their alphas
// differ; values include zeros, subnormals, bucket edges and huge ones.
func TestAddTwoEqualsTwoAdds(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	values := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			switch r.IntN(8) {
			case 0:
				xs[i] = 0
			case 1:
				xs[i] = math.SmallestNonzeroFloat64 * float64(1+r.IntN(1000))
			case 2:
				xs[i] = math.Pow((1+quantile.DefaultAlpha)/(1-quantile.DefaultAlpha), float64(r.IntN(400)-200)) // near an edge
			case 3:
				xs[i] = 1e300 * float64(1+r.IntN(10)) // huge, and the sum stays finite
			default:
				xs[i] = math.Exp(r.NormFloat64()*2 + 5)
			}
		}
		return xs
	}
	for _, c := range []struct {
		name  string
		s, t  []quantile.Option
		split int // values added to the first pair alone before the pairs
	}{
		{"both sketch mode", []quantile.Option{quantile.WithExactLimit(0)}, []quantile.Option{quantile.WithExactLimit(0)}, 0},
		{"default limits, through the switch", nil, nil, 0},
		{"one exact", []quantile.Option{quantile.WithExactLimit(0)}, nil, 0},
		{"first ahead", nil, nil, 3000},
		{"alphas differ", []quantile.Option{quantile.WithExactLimit(0)}, []quantile.Option{quantile.WithExactLimit(0), quantile.WithAlpha(0.02)}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s1, t1 := quantile.New(c.s...), quantile.New(c.t...)
			s2, t2 := quantile.New(c.s...), quantile.New(c.t...)
			for _, v := range values(c.split) {
				s1.Add(v)
				s2.Add(v)
			}
			for _, v := range values(20_000) {
				quantile.AddTwo(s1, t1, v)
				s2.Add(v)
				t2.Add(v)
			}
			for _, p := range [][2]*quantile.Sketch{{s1, s2}, {t1, t2}} {
				a, err := p[0].MarshalJSON()
				require.NoError(t, err)
				b, err := p[1].MarshalJSON()
				require.NoError(t, err)
				require.Equal(t, string(b), string(a))
			}
		})
	}
	assert.Panics(t, func() { quantile.AddTwo(quantile.New(), quantile.New(), math.NaN()) })
	assert.Panics(t, func() { quantile.AddTwo(quantile.New(), quantile.New(), -1) })
}
