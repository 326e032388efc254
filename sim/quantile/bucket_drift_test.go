package quantile

import (
	"math"
	"math/rand/v2"
	"testing"
)

// logBucket is the bucket index by the logarithm, which bucket must
// reproduce exactly.
func logBucket(s *Sketch, v float64) int { return int(math.Ceil(math.Log(v) * s.invLogGamma)) }

// TestBucketDrift checks that bucket gives the logarithm's index for values
// at, just inside and just outside bucket edges (as exp computes them), and
// for drifting and scattered values, over several alphas. (It was written
// for a one-bucket memo, since removed; bucket_test.go has the exhaustive
// edge tests.)
func TestBucketDrift(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	for _, alpha := range []float64{0.001, 0.01, 0.05, 0.3} {
		s := New(WithAlpha(alpha), WithExactLimit(0))
		check := func(v float64) {
			t.Helper()
			if got, want := s.bucket(v), logBucket(s, v); got != want {
				t.Fatalf("alpha %v: bucket(%v) = %d, want %d", alpha, v, got, want)
			}
		}
		for range 20_000 {
			// An edge gamma^k and its neighbouring floats, each twice, then
			// probed from both sides.
			k := r.IntN(2000) - 1000
			e := math.Exp(float64(k) * s.logGamma)
			for _, v := range []float64{e, math.Nextafter(e, 0), math.Nextafter(e, math.Inf(1)),
				e * (1 - 2e-9), e * (1 + 2e-9), e * (1 - 1e-12), e * (1 + 1e-12)} {
				if v > 0 && !math.IsInf(v, 0) {
					check(v)
					check(v)
					check(math.Nextafter(v, 0))
					check(math.Nextafter(v, math.Inf(1)))
				}
			}
		}
		v := 10.0
		for range 200_000 { // a drift, as step gaps do
			v *= 1 + (r.Float64()-0.5)*alpha
			check(v)
		}
		for range 100_000 { // scattered over the float64 range
			check(math.Exp((r.Float64() - 0.5) * 1400))
		}
	}
}
