package workloads

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func samples(d LengthDist, seed uint64, n int) []float64 {
	rng := newRng(seed)
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(d.Sample(rng))
	}
	return out
}

// nearestRank returns the nearest-rank p-quantile of xs (sorts xs).
func nearestRank(xs []float64, p float64) float64 {
	slices.Sort(xs)
	return xs[int(math.Ceil(p*float64(len(xs))))-1]
}

func TestLogNormal(t *testing.T) {
	const n = 200_000
	tests := []struct {
		name      string
		mean, p99 float64 // p99 0: use cv
		cv        float64
	}{
		{"mean 1024 p99 8192", 1024, 8192, 0},
		{"mean 12035 p99 85401 (Mooncake)", 12035, 85401, 0},
		{"mean 256 p99 300 (narrow)", 256, 300, 0},
		{"mean 500 cv 0.5", 500, 0, 0.5},
		{"mean 2000 cv 2", 2000, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d LogNormal
			var err error
			if tt.p99 > 0 {
				d, err = NewLogNormalMeanP99(tt.mean, tt.p99, 1, maxTokens)
			} else {
				d, err = NewLogNormalMeanCV(tt.mean, tt.cv, 1, maxTokens)
			}
			require.NoError(t, err)
			assert.InEpsilon(t, tt.mean, d.Mean(), 1e-9)
			xs := samples(d, 5, n)
			mean, cv := meanCV(xs)
			// Heavy tails: CV up to 2 gives a 0.45% standard error at this n.
			assert.InEpsilon(t, tt.mean, mean, 0.02, "sample mean")
			if tt.p99 > 0 {
				assert.InEpsilon(t, tt.p99, d.Quantile(0.99), 1e-9)
				assert.InEpsilon(t, tt.p99, nearestRank(xs, 0.99), 0.03, "sample p99")
			} else {
				assert.InEpsilon(t, tt.cv, cv, 0.05, "sample CV")
			}
		})
	}
}

func TestLogNormalErrors(t *testing.T) {
	for _, c := range []struct{ mean, p99 float64 }{
		{100, 100}, {100, 50}, {100, 1500}, {0, 10}, {math.NaN(), 10}, {100, math.Inf(1)},
	} {
		_, err := NewLogNormalMeanP99(c.mean, c.p99, 1, 10)
		assert.Error(t, err, "mean %v p99 %v", c.mean, c.p99)
	}
	_, err := NewLogNormalMeanP99(100, 1400, 1, 10)
	assert.NoError(t, err, "just under the 14.97x limit")
	_, err = NewLogNormalMeanCV(100, 0, 1, 10)
	assert.Error(t, err)
	_, err = NewLogNormalMeanCV(100, 1, 5, 4)
	assert.Error(t, err, "min > max")
}

func TestClamping(t *testing.T) {
	ln, err := NewLogNormalMeanCV(150, 3, 100, 200)
	require.NoError(t, err)
	emp, err := NewEmpirical([]int32{1, 50, 1000}, nil, 40, 60)
	require.NoError(t, err)
	tests := []struct {
		name   string
		d      LengthDist
		lo, hi float64
	}{
		{"lognormal", ln, 100, 200},
		{"geometric", Geometric{Mean: 50, Min: 10, Max: 20}, 10, 20},
		{"empirical", emp, 40, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xs := samples(tt.d, 6, 10_000)
			assert.Equal(t, tt.lo, slices.Min(xs))
			assert.Equal(t, tt.hi, slices.Max(xs))
		})
	}
}

func TestEmpirical(t *testing.T) {
	const n = 100_000
	tests := []struct {
		name    string
		values  []int32
		weights []float64
		want    map[float64]float64 // value → probability
	}{
		{"weighted", []int32{10, 20, 30}, []float64{1, 2, 7}, map[float64]float64{10: 0.1, 20: 0.2, 30: 0.7}},
		{"uniform", []int32{5, 6}, nil, map[float64]float64{5: 0.5, 6: 0.5}},
		{"zero weights never drawn", []int32{1, 2, 3, 4}, []float64{0, 1, 0, 0}, map[float64]float64{2: 1}},
		{"repeated values add up", []int32{7, 7, 8}, nil, map[float64]float64{7: 2.0 / 3, 8: 1.0 / 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewEmpirical(tt.values, tt.weights, 1, maxTokens)
			require.NoError(t, err)
			got := map[float64]float64{}
			for _, x := range samples(d, 7, n) {
				got[x] += 1.0 / n
			}
			require.Len(t, got, len(tt.want))
			for v, p := range tt.want {
				assert.InDelta(t, p, got[v], 0.005, "P(%v)", v) // 3.5 standard errors at worst
			}
		})
	}
	for _, bad := range []struct {
		values  []int32
		weights []float64
	}{
		{nil, nil}, {[]int32{1, 2}, []float64{1}}, {[]int32{1}, []float64{-1}},
		{[]int32{1}, []float64{0}}, {[]int32{1}, []float64{math.NaN()}},
	} {
		_, err := NewEmpirical(bad.values, bad.weights, 1, 10)
		assert.Error(t, err, "%v %v", bad.values, bad.weights)
	}
}

func TestGeometricAndFixed(t *testing.T) {
	mean, cv := meanCV(samples(Geometric{Mean: 5, Min: 1, Max: maxTokens}, 8, 200_000))
	assert.InEpsilon(t, 5, mean, 0.01)
	assert.InEpsilon(t, math.Sqrt(1-1.0/5), cv, 0.02, "geometric CV = sqrt(1-p)")
	assert.Equal(t, []float64{1, 1, 1}, samples(Geometric{Mean: 1, Min: 1, Max: 9}, 1, 3))
	assert.Equal(t, []float64{42, 42}, samples(Fixed{Tokens: 42}, 1, 2))
}
