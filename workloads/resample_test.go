package workloads

import (
	"errors"
	"io"
	"math"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/require"
)

type reqSlice struct {
	reqs []Request
	i    int
}

func (s *reqSlice) Next() (Request, error) {
	if s.i >= len(s.reqs) {
		return Request{}, io.EOF
	}
	s.i++
	return s.reqs[s.i-1], nil
}

func drainAll(t *testing.T, src Source) []Request {
	t.Helper()
	var out []Request
	for {
		r, err := src.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, r)
	}
}

// TestPoissonBootstrap: each row is replayed Poisson(1) times: about n
// requests in all, about e^−1 of rows dropped, duplicates together at the
// row's own time, in arrival order, renumbered; the same stream gives the
// same resample and another stream another.
func TestPoissonBootstrap(t *testing.T) {
	const n = 20000
	rows := make([]Request, n)
	for i := range rows {
		rows[i] = Request{ID: uint64(1000 + i), Arrival: sim.Time(i) * sim.Millisecond, InputTokens: int32(i + 1), OutputTokens: 7}
	}
	run := func(seed uint64) []Request {
		return drainAll(t, PoissonBootstrap(&reqSlice{reqs: rows}, sim.NewStream(seed, "resample")))
	}
	out := run(1)
	require.InDelta(t, n, len(out), 4*math.Sqrt(n), "Poisson(1) counts sum to about n")
	counts := map[int32]int{}
	for i, r := range out {
		require.EqualValues(t, i+1, r.ID, "renumbered in replay order")
		if i > 0 {
			require.GreaterOrEqual(t, r.Arrival, out[i-1].Arrival)
		}
		require.Equal(t, sim.Time(r.InputTokens-1)*sim.Millisecond, r.Arrival, "a copy keeps its row's time")
		counts[r.InputTokens]++
	}
	p0 := math.Exp(-1)
	dropped := float64(n-len(counts)) / n
	require.InDelta(t, p0, dropped, 4*math.Sqrt(p0*(1-p0)/n))
	twice := 0
	for _, c := range counts {
		if c == 2 {
			twice++
		}
	}
	require.InDelta(t, p0/2, float64(twice)/n, 4*math.Sqrt(p0/2/n), "P(k=2) = e^−1/2")
	require.Equal(t, out, run(1), "deterministic")
	require.NotEqual(t, out, run(2))
}
