package quantile_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim/quantile"
)

// benchValues are latency-like values (lognormal, median 50 ms), drawn once so
// that the benchmarks time the sketch, not the random source.
var benchValues = func() []float64 {
	r := rand.New(rand.NewPCG(1, 1))
	xs := make([]float64, 1<<16)
	for i := range xs {
		xs[i] = math.Exp(math.Log(50) + 1.2*r.NormFloat64())
	}
	return xs
}()

// driftValues wander by up to ±0.5% a value around 20 ms, as the step gaps
// of a replica do.
var driftValues = func() []float64 {
	r := rand.New(rand.NewPCG(2, 2))
	xs := make([]float64, 1<<16)
	v := 20.0
	for i := range xs {
		v *= 1 + (r.Float64()-0.5)*0.01
		v = min(max(v, 10), 40)
		xs[i] = v
	}
	return xs
}()

// BenchmarkAddN times AddN(v, 8) of scattered values in sketch mode.
func BenchmarkAddN(b *testing.B) {
	s := quantile.New(quantile.WithExactLimit(0))
	b.ReportAllocs()
	for i := range b.N {
		s.AddN(benchValues[i&(len(benchValues)-1)], 8)
	}
}

// BenchmarkAddRampN times the ramp of a decode run's gaps, shared by 16
// sequences: 255 gaps from about 20 ms growing by 0.5 µs a step.
func BenchmarkAddRampN(b *testing.B) {
	s := quantile.New(quantile.WithExactLimit(0))
	b.ReportAllocs()
	for i := range b.N {
		s.AddRampN(benchValues[i&(len(benchValues)-1)]*0.4, 0.0005, 255, 16)
	}
}

// BenchmarkAdd times Add in sketch mode (the steady state of a long run) and
// in exact mode (appending, with a Reset every exact-limit values).
func BenchmarkAdd(b *testing.B) {
	b.Run("sketch", func(b *testing.B) {
		s := quantile.New(quantile.WithExactLimit(0))
		for _, x := range benchValues {
			s.Add(x)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			s.Add(benchValues[i&(len(benchValues)-1)])
		}
	})
	b.Run("sketch-drift", func(b *testing.B) {
		// Values near the previous ones, as a replica's step gaps are.
		s := quantile.New(quantile.WithExactLimit(0))
		for _, x := range driftValues {
			s.Add(x)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			s.Add(driftValues[i&(len(driftValues)-1)])
		}
	})
	b.Run("exact", func(b *testing.B) {
		s := quantile.New()
		b.ReportAllocs()
		for i := range b.N {
			if s.Count() == quantile.DefaultExactLimit {
				s.Reset()
			}
			s.Add(benchValues[i&(len(benchValues)-1)])
		}
	})
}

// BenchmarkQuantile times one Quantile call on a sketch of 1e6 values, and on
// a full exact sketch whose values are not yet sorted.
func BenchmarkQuantile(b *testing.B) {
	b.Run("sketch", func(b *testing.B) {
		s := quantile.New()
		for i := range 1_000_000 {
			s.Add(benchValues[i&(len(benchValues)-1)])
		}
		qs := []float64{0.5, 0.9, 0.99, 0.999}
		b.ReportAllocs()
		b.ResetTimer()
		var sink float64
		for i := range b.N {
			sink += s.Quantile(qs[i&3])
		}
		_ = sink
	})
	b.Run("exact-unsorted", func(b *testing.B) {
		// The first Quantile after Adds sorts the (up to 4096) values.
		s := quantile.New()
		b.ReportAllocs()
		var sink float64
		for range b.N {
			b.StopTimer()
			s.Reset()
			for _, x := range benchValues[:quantile.DefaultExactLimit] {
				s.Add(x)
			}
			b.StartTimer()
			sink += s.Quantile(0.99)
		}
		_ = sink
	})
}
