package quantile

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddFastPathEqualsGeneral: Add (whose sketch-mode path for positive
// finite values skips the general path's checks) leaves a sketch in
// exactly the state add, the general path alone, does: zeros, -0,
// subnormals, values at bucket edges and huge ones, from exact mode
// through the switch, or in sketch mode from the first value.
func TestAddFastPathEqualsGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	gamma := (1 + DefaultAlpha) / (1 - DefaultAlpha)
	for _, limit := range []int{0, 100, DefaultExactLimit} {
		fast, general := New(WithExactLimit(limit)), New(WithExactLimit(limit))
		for range 20000 {
			var v float64
			switch r.IntN(9) {
			case 0:
				v = 0
			case 1:
				v = math.Copysign(0, -1)
			case 2:
				v = math.SmallestNonzeroFloat64 * float64(1+r.IntN(1000))
			case 3:
				v = math.Pow(gamma, float64(r.IntN(400)-200)) // near an edge
			case 4:
				v = 1e300 * float64(1+r.IntN(10))
			default:
				v = math.Exp(r.NormFloat64()*2 + 5)
			}
			fast.Add(v)
			general.add(v)
		}
		a, err := json.Marshal(fast)
		require.NoError(t, err)
		b, err := json.Marshal(general)
		require.NoError(t, err)
		require.Equal(t, string(b), string(a), "exact limit %d", limit)
		require.Equal(t, general.sumComp, fast.sumComp)
	}
}

// TestAddPosEqualsAddSum: addPos (addSum for v > 0, without the absolute
// values) leaves sum and compensation bit for bit as addSum does, for any
// running sum: positive, negative (only a foreign or merged state has
// one), ±0, ±Inf, NaN, larger or smaller than v. Testing only sum >= v
// (dropping the sum <= −v case) fails it.
func TestAddPosEqualsAddSum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	sums := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 1e300, -1e300, 5e-324, -5e-324}
	for i := range 200000 {
		var sum float64
		if i < len(sums)*50 {
			sum = sums[i%len(sums)]
		} else {
			sum = math.Exp(r.NormFloat64() * 20)
			if r.IntN(2) == 0 {
				sum = -sum
			}
		}
		v := math.Exp(r.NormFloat64() * 20)
		switch i % 7 {
		case 0:
			v = math.Abs(sum) // |sum| == v: the >= edge
		case 1:
			v = math.Nextafter(math.Abs(sum), math.Inf(1))
		case 2:
			v = 5e-324
		}
		if !(v > 0) || math.IsInf(v, 0) {
			v = 1
		}
		a := &Sketch{sum: sum, sumComp: 0.25}
		b := &Sketch{sum: sum, sumComp: 0.25}
		a.addPos(v)
		b.addSum(v)
		if math.Float64bits(a.sum) != math.Float64bits(b.sum) || math.Float64bits(a.sumComp) != math.Float64bits(b.sumComp) {
			t.Fatalf("sum %v + %v: addPos gives (%v, %v), addSum (%v, %v)", sum, v, a.sum, a.sumComp, b.sum, b.sumComp)
		}
	}
}
