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
