package workloads

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/require"
)

// TestExpectedRequestsIsTheDemand draws random generated workloads
// (piecewise profiles with a scale, stages, sessions with their turns, a
// request rate) and checks that the requests they actually send over their
// duration agree with ExpectedRequests, the figure the scenario's request
// limit is checked against (issue 33 item 4): within 5 standard deviations
// of a Poisson count, or below it where turns are cut at the duration.
func TestExpectedRequestsIsTheDemand(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 4))
	for trial := 0; trial < 40; trial++ {
		c := DefaultConfig()
		c.DurationS = 50 + 200*rng.Float64()
		c.Input = DistConfig{Dist: DistFixed, Mean: 16}
		c.Output = DistConfig{Dist: DistFixed, Mean: 4}
		upper := false // the estimate only bounds the count from above
		switch trial % 4 {
		case 0:
			c.Arrival.Process = ProcessPiecewise
			c.Arrival.Interpolation = []string{InterpLinear, InterpStep}[rng.IntN(2)]
			t0 := 0.0
			for k := 0; k < 1+rng.IntN(5); k++ {
				c.Arrival.Points = append(c.Arrival.Points, []float64{t0, 20 * rng.Float64()})
				t0 += 10 + 100*rng.Float64()
			}
			c.Arrival.Points[0][1] += 1
			c.Arrival.Scale = 0.5 + 2*rng.Float64()
			if rng.IntN(2) == 0 {
				c.Arrival.RepeatS = t0 + 10
			}
		case 1:
			c.Stages = nil
			for k := 0; k < 1+rng.IntN(4); k++ {
				c.Stages = append(c.Stages, StageConfig{DurationS: 10 + 50*rng.Float64(), RatePerS: 1 + 20*rng.Float64()})
			}
			c.DurationS = c.StagesDurationS()
		case 2:
			c.Kind = KindSessions
			c.Arrival.RatePerS = 0.2 + 2*rng.Float64()
			c.Sessions.Turns = DistConfig{Dist: DistFixed, Mean: float64(1 + rng.IntN(8))}
			c.Sessions.ThinkTimeSMean = 0.5 * rng.Float64()
			c.Sessions.MaxInputTokens = 1 << 30
			upper = true
		case 3:
			c.Kind = KindAgentic
			c.Arrival.RatePerS = 0.5
			c.Sessions.Turns = DistConfig{Dist: DistGeometric, Mean: 1 + 5*rng.Float64(), Max: 50}
			c.Sessions.ThinkTimeSMean = 0.5 * rng.Float64()
			c.Sessions.RequestRatePerS = 2 + 10*rng.Float64()
			c.Sessions.MaxInputTokens = 1 << 30
			upper = true
		}
		span := c.DurationS
		if len(c.Stages) > 0 {
			span = c.StagesDurationS()
		}
		want, ok := c.ExpectedRequests(span)
		require.True(t, ok, "trial %d", trial)
		src, err := New(c, sim.NewStreams(uint64(trial)))
		require.NoError(t, err, "trial %d", trial)
		n := 0.0
		for {
			_, err := src.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			n++
		}
		if c, ok := src.(io.Closer); ok {
			c.Close()
		}
		// Sessions: each session's turns are one draw, so the count varies
		// more than a Poisson count; a session cut at the duration sends
		// fewer turns.
		tol := 5*math.Sqrt(want*8) + 10
		require.LessOrEqual(t, n, want+tol, "trial %d: %v requests, expected %v", trial, n, want)
		if !upper {
			require.GreaterOrEqual(t, n, want-tol, "trial %d: %v requests, expected %v", trial, n, want)
		}
	}
}
