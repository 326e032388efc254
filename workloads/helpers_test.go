package workloads

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// newRng returns a test stream with a fixed seed.
func newRng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x5eed)) }

// drain reads src until io.EOF (or limit requests, if limit > 0).
func drain(t testing.TB, src Source, limit int) []Request {
	t.Helper()
	var out []Request
	for limit <= 0 || len(out) < limit {
		r, err := src.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

// meanCV returns the mean and coefficient of variation of xs.
func meanCV(xs []float64) (mean, cv float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
	}
	mean = s / float64(len(xs))
	for _, x := range xs {
		s2 += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(s2/float64(len(xs)-1)) / mean
}

// checkOrder asserts the Source contract on rs: IDs 1, 2, 3, ... and
// non-decreasing arrivals, lengths >= 1, prefix within the prompt.
func checkOrder(t *testing.T, rs []Request) {
	t.Helper()
	for i, r := range rs {
		require.Equal(t, uint64(i+1), r.ID, "request %d", i)
		if i > 0 {
			require.GreaterOrEqual(t, r.Arrival, rs[i-1].Arrival, "request %d", r.ID)
		}
		require.GreaterOrEqual(t, r.InputTokens, int32(1))
		require.GreaterOrEqual(t, r.OutputTokens, int32(1))
		require.LessOrEqual(t, r.PrefixTokens(), r.InputTokens, "request %d", r.ID)
	}
}
