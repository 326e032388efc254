package policies

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/stretchr/testify/require"
)

// exactMannWhitneyP enumerates every way of choosing which len(xs) of the
// pooled values are "xs" and returns the share whose xs rank sum is at
// least the observed one: the exact one-sided p-value (with mid-ranks).
func exactMannWhitneyP(xs, ys []float64) float64 {
	all := append(append([]float64{}, xs...), ys...)
	sorted := append([]float64{}, all...)
	sort.Float64s(sorted)
	rank := func(v float64) float64 { // mid-rank of v in the pool
		lo := sort.SearchFloat64s(sorted, v)
		hi := lo
		for hi < len(sorted) && sorted[hi] == v {
			hi++
		}
		return float64(lo+hi+1) / 2
	}
	ranks := make([]float64, len(all))
	for i, v := range all {
		ranks[i] = rank(v)
	}
	obs := 0.0
	for i := range xs {
		obs += ranks[i]
	}
	n, k := len(all), len(xs)
	var total, ge int
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != k {
			continue
		}
		s := 0.0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				s += ranks[i]
			}
		}
		total++
		if s >= obs-1e-9 {
			ge++
		}
	}
	return float64(ge) / float64(total)
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestMannWhitneyPMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 30; trial++ {
		xs, ys := make([]float64, 8), make([]float64, 8)
		shift := float64(trial%3) * 0.5
		for i := range xs {
			xs[i] = math.Round(rng.NormFloat64()*4+shift*4) / 2 // some ties
			ys[i] = math.Round(rng.NormFloat64()*4) / 2
		}
		sort.Float64s(xs)
		sort.Float64s(ys)
		exact, approx := exactMannWhitneyP(xs, ys), MannWhitneyP(xs, ys)
		require.InDelta(t, exact, approx, 0.03, "xs %v ys %v", xs, ys)
	}
	require.Less(t, MannWhitneyP([]float64{4, 5, 6, 7, 8}, []float64{1, 2, 3, 3.5, 3.7}), 0.01)
	require.Greater(t, MannWhitneyP([]float64{1, 2, 3, 3.5, 3.7}, []float64{4, 5, 6, 7, 8}), 0.99)
	require.Equal(t, 1.0, MannWhitneyP([]float64{1, 1}, []float64{1, 1}), "all tied: no evidence")
}

func TestTwoProportionP(t *testing.T) {
	// 10/100 vs 0/100: pooled p 0.05, se √(0.05·0.95·0.02) = 0.030822,
	// z = 3.2444, one-sided p = 5.885e-4.
	require.InDelta(t, 5.885e-4, TwoProportionP(10, 100, 0, 100), 2e-6)
	require.InDelta(t, 0.5, TwoProportionP(5, 100, 5, 100), 1e-12)
	require.Equal(t, 1.0, TwoProportionP(0, 50, 0, 50))
}

// lognormalPool draws n TTFTs (median med ms, heavy tail) sorted.
func lognormalPool(rng *rand.Rand, n int, med float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = med * math.Exp(0.8*rng.NormFloat64())
	}
	sort.Float64s(xs)
	return xs
}

func pool(ttft []float64) fleet.PoolStats {
	return fleet.PoolStats{Requests: len(ttft), TTFTMs: ttft, P99TTFTMs: ttft[int(math.Ceil(0.99*float64(len(ttft))))-1]}
}

// TestMannWhitneyJudgeErrorRates: with identical pools the test rejects at
// about its level; a green 1.5× slower is caught nearly always; and on
// identical heavy-tailed pools the margin judge's p99 rule rolls back far
// more often than the Mann–Whitney judge. (200 requests a pool.)
func TestMannWhitneyJudgeErrorRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const trials = 2000
	var reject05, mwFalse, marginFalse, caught, marginCaught int
	mw := MannWhitneyJudge{MinSamples: 20, ErrorMargin: 0.05, Alpha: 0.001, MedianRatio: 1.1}
	margin := MarginJudge{MinSamples: 20, ErrorMargin: 0.05, P99Ratio: 1.5}
	for range trials {
		g, b := lognormalPool(rng, 200, 300), lognormalPool(rng, 200, 300)
		if MannWhitneyP(g, b) < 0.05 {
			reject05++
		}
		if mw.Rollback(pool(g), pool(b)) {
			mwFalse++
		}
		if margin.Rollback(pool(g), pool(b)) {
			marginFalse++
		}
		slow := pool(lognormalPool(rng, 200, 450))
		if mw.Rollback(slow, pool(b)) {
			caught++
		}
		if margin.Rollback(slow, pool(b)) {
			marginCaught++
		}
	}
	t.Logf("same pools: U test rejects %.3f at 0.05; false rollbacks: margin %.3f, mann-whitney %.4f; 1.5× slower caught: margin %.3f, mann-whitney %.3f",
		float64(reject05)/trials, float64(marginFalse)/trials, float64(mwFalse)/trials, float64(marginCaught)/trials, float64(caught)/trials)
	require.InDelta(t, 0.05, float64(reject05)/trials, 0.015, "the test's size")
	require.LessOrEqual(t, float64(mwFalse)/trials, 0.003)
	require.Greater(t, float64(marginFalse)/trials, 10*float64(mwFalse+1)/trials, "margin p99 rule should be noisier")
	require.Greater(t, float64(caught)/trials, 0.95)
}

func TestMannWhitneyJudgeErrors(t *testing.T) {
	j := MannWhitneyJudge{MinSamples: 20, ErrorMargin: 0.05, Alpha: 0.001, MedianRatio: 1.1}
	blue := fleet.PoolStats{Requests: 200, Errors: 2}
	require.False(t, j.Rollback(fleet.PoolStats{Requests: 10, Errors: 10}, blue), "too few samples")
	require.False(t, j.Rollback(fleet.PoolStats{Requests: 40, Errors: 2}, blue), "5% vs 1%: under the margin")
	require.False(t, j.Rollback(fleet.PoolStats{Requests: 40, Errors: 3}, blue), "7.5% of 40 vs 1%: p = 0.0043, not below 0.001")
	require.True(t, j.Rollback(fleet.PoolStats{Requests: 40, Errors: 4}, blue), "10% of 40 vs 1%: p = 0.00044")
	require.True(t, j.Rollback(fleet.PoolStats{Requests: 40, Errors: 12}, blue), "30% vs 1%")
	require.False(t, j.Rollback(fleet.PoolStats{Requests: 4000, Errors: 80}, fleet.PoolStats{Requests: 4000, Errors: 40}),
		"significant but under the margin")
}

func TestNewRolloutJudge(t *testing.T) {
	c := fleet.DefaultRolloutConfig()
	j, err := NewRolloutJudge(c)
	require.NoError(t, err)
	require.IsType(t, MarginJudge{}, j)
	c.Judge = fleet.JudgeMannWhitney
	j, err = NewRolloutJudge(c)
	require.NoError(t, err)
	require.IsType(t, MannWhitneyJudge{}, j)
	c.Judge = "coin-flip"
	_, err = NewRolloutJudge(c)
	require.ErrorContains(t, err, `unknown rollout judge "coin-flip"; valid names: mann-whitney, margin`)
}
