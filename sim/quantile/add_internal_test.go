package quantile

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// testValue draws the values the fast-path tests add: zeros, -0,
// subnormals, values at bucket edges, huge ones and ordinary ones.
func testValue(r *rand.Rand, gamma float64) float64 {
	switch r.IntN(9) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return math.SmallestNonzeroFloat64 * float64(1+r.IntN(1000))
	case 3:
		return math.Pow(gamma, float64(r.IntN(400)-200)) // near an edge
	case 4:
		return 1e300 * float64(1+r.IntN(10))
	default:
		return math.Exp(r.NormFloat64()*2 + 5)
	}
}

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
			v := testValue(r, gamma)
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

// TestAddNonNegEqualsAddSum: addNonNeg (addSum for v >= 0, without the
// absolute values) leaves sum and compensation bit for bit as addSum does,
// for any running sum: positive, negative (only a foreign or merged state
// has one), ±0, ±Inf, NaN, larger or smaller than v; and v from ±0 to
// +Inf. Testing only sum >= v (dropping the sum <= −v case) fails it.
func TestAddNonNegEqualsAddSum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	negZero := math.Copysign(0, -1)
	specials := []float64{0, negZero, math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 1e300, -1e300, 5e-324, -5e-324}
	for i := range 200000 {
		var sum float64
		if i < len(specials)*50 {
			sum = specials[i%len(specials)]
		} else {
			sum = math.Exp(r.NormFloat64() * 20)
			if r.IntN(2) == 0 {
				sum = -sum
			}
		}
		v := math.Exp(r.NormFloat64() * 20)
		switch i % 9 {
		case 0:
			v = math.Abs(sum) // |sum| == v: the >= edge
		case 1:
			v = math.Nextafter(math.Abs(sum), math.Inf(1))
		case 2:
			v = 5e-324
		case 3:
			v = 0
		case 4:
			v = negZero
		case 5:
			v = math.Inf(1)
		}
		if math.IsNaN(v) {
			v = 1
		}
		a := &Sketch{sum: sum, sumComp: 0.25}
		b := &Sketch{sum: sum, sumComp: 0.25}
		a.addNonNeg(v)
		b.addSum(v)
		if math.Float64bits(a.sum) != math.Float64bits(b.sum) || math.Float64bits(a.sumComp) != math.Float64bits(b.sumComp) {
			t.Fatalf("sum %v + %v: addNonNeg gives (%v, %v), addSum (%v, %v)", sum, v, a.sum, a.sumComp, b.sum, b.sumComp)
		}
	}
}

// TestMinToMaxToEqualBuiltins: minTo and maxTo give the builtin min and
// max bit for bit over ±0, ±Inf, NaN and ordinary values on either side
// (assigning v without the builtin where the comparison fails, e.g. min
// −0 and v +0, fails it).
func TestMinToMaxToEqualBuiltins(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 2.5, 5e-324, math.MaxFloat64}
	for _, cur := range vals {
		for _, v := range vals {
			s := &Sketch{min: cur, max: cur}
			s.minTo(v)
			s.maxTo(v)
			if want := min(cur, v); math.Float64bits(s.min) != math.Float64bits(want) {
				t.Errorf("minTo(%v) from %v: %v, want %v", v, cur, s.min, want)
			}
			if want := max(cur, v); math.Float64bits(s.max) != math.Float64bits(want) {
				t.Errorf("maxTo(%v) from %v: %v, want %v", v, cur, s.max, want)
			}
		}
	}
}

// TestAddNFastPathEqualsGeneral: AddN (whose sketch-mode path for n > 1
// and normal finite values skips the general path's checks) leaves a
// sketch in exactly the state addN, the general path alone, does, over the
// values of TestAddFastPathEqualsGeneral and weights 0, 1, 2 and large.
func TestAddNFastPathEqualsGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	gamma := (1 + DefaultAlpha) / (1 - DefaultAlpha)
	for _, limit := range []int{0, 100, DefaultExactLimit} {
		fast, general := New(WithExactLimit(limit)), New(WithExactLimit(limit))
		for range 6000 {
			v := testValue(r, gamma) // (times n: may overflow to +Inf)
			n := []uint64{0, 1, 2, 3, uint64(1 + r.IntN(100)), 1 << 40}[r.IntN(6)]
			fast.AddN(v, n)
			general.addN(v, n)
			if !sameState(general, fast) { // after every step: a later value may hide a difference
				requireSameState(t, general, fast, limit)
			}
		}
	}
}

// sameState reports whether a and b hold the same state, floats bit for
// bit (requireSameState says where they differ).
func sameState(a, b *Sketch) bool {
	bits := math.Float64bits
	return a.count == b.count && bits(a.sum) == bits(b.sum) && bits(a.sumComp) == bits(b.sumComp) &&
		bits(a.min) == bits(b.min) && bits(a.max) == bits(b.max) && a.dense == b.dense &&
		slices.Equal(a.values, b.values) && a.offset == b.offset && slices.Equal(a.bins, b.bins) && a.zeros == b.zeros
}

// requireSameState fails unless a and b hold the same state, floats bit
// for bit (a sum overflowed to +Inf has a NaN compensation: no JSON, and
// NaN != NaN).
func requireSameState(t *testing.T, a, b *Sketch, limit int) {
	t.Helper()
	bits := math.Float64bits
	require.Equal(t, a.count, b.count, "count, exact limit %d", limit)
	require.Equal(t, bits(a.sum), bits(b.sum), "sum, exact limit %d", limit)
	require.Equal(t, bits(a.sumComp), bits(b.sumComp), "sumComp, exact limit %d", limit)
	require.Equal(t, bits(a.min), bits(b.min), "min, exact limit %d", limit)
	require.Equal(t, bits(a.max), bits(b.max), "max, exact limit %d", limit)
	require.Equal(t, a.dense, b.dense, "dense, exact limit %d", limit)
	require.Equal(t, a.values, b.values, "values, exact limit %d", limit)
	require.Equal(t, a.offset, b.offset, "offset, exact limit %d", limit)
	require.Equal(t, a.bins, b.bins, "bins, exact limit %d", limit)
	require.Equal(t, a.zeros, b.zeros, "zeros, exact limit %d", limit)
}
