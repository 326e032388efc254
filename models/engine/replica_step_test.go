package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
)

// roundNs gives sim.Time(math.Round(x)) for every x: the rounding edges
// (halves, the values just below them, 2^52 and beyond), the special
// values, and random values over many magnitudes.
func TestRoundNsMatchesMathRound(t *testing.T) {
	check := func(x float64) {
		t.Helper()
		if got, want := roundNs(x), sim.Time(math.Round(x)); got != want {
			t.Fatalf("roundNs(%v = %#x) = %d, math.Round gives %d", x, math.Float64bits(x), got, want)
		}
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 0.5, 1.5, 2.5, 1e9 + 0.5, 0.49999999999999994,
		1 << 52, 1<<52 - 0.5, 1<<52 + 1, 1 << 53, 1 << 62, 1 << 63, 1e300, math.Inf(1), math.Inf(-1), math.NaN(),
		-0.5, -1.5, -0.49999999999999994, math.SmallestNonzeroFloat64, math.MaxFloat64} {
		check(x)
		check(math.Nextafter(x, math.Inf(1)))
		check(math.Nextafter(x, math.Inf(-1)))
	}
	for i := int64(0); i < 1000; i++ { // halves and their neighbours
		h := float64(i) + 0.5
		check(h)
		check(math.Nextafter(h, 0))
		check(math.Nextafter(h, math.Inf(1)))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1_000_000; i++ {
		x := rng.Float64() * math.Pow(2, float64(rng.IntN(70)-8))
		if rng.IntN(8) == 0 {
			x = -x
		}
		check(x)
	}
}
