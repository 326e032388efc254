package fleet

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// randomWorkload makes n requests with Poisson arrivals at rate/s, a mix of
// long and short prompts and, if shared, prefix segments drawn from a few
// system prompts and sessions.
func randomWorkload(rng *rand.Rand, n int, rate float64, shared bool) []workloads.Request {
	reqs := make([]workloads.Request, n)
	var t float64
	for i := range reqs {
		t += rng.ExpFloat64() / rate
		r := workloads.Request{ID: uint64(i + 1), Arrival: sim.FromSeconds(t),
			InputTokens:  1 + int32(rng.IntN(3000)),
			OutputTokens: 1 + int32(rng.IntN(400))}
		if shared && rng.IntN(3) > 0 {
			sys := uint64(rng.IntN(4) + 1)
			segs := []workloads.Segment{{Hash: sys, Tokens: 512}}
			for j := 0; j < rng.IntN(4); j++ {
				segs = append(segs, workloads.Segment{Hash: sys*1000 + uint64(j+1)*7 + uint64(rng.IntN(3)), Tokens: 256})
			}
			var tot int32
			for _, s := range segs {
				tot += s.Tokens
			}
			r.Prefix = segs
			r.InputTokens = tot + int32(rng.IntN(500))
		}
		reqs[i] = r
	}
	return reqs
}

// TestConservationAndKVAccounting runs randomized fleets event by event and
// checks after every event that arrived = completed + failed + shed + in
// flight (in flight = what the replicas hold) and that every replica's KV
// blocks add up: used + cached + free = total.
func TestConservationAndKVAccounting(t *testing.T) {
	for trial := 0; trial < 24; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 99))
		cfg := defaultFleet(1 + rng.IntN(3))
		cfg.Replica.Batching = engine.BatchingModes[trial%3]
		cfg.Replica.MaxSeqs = 4 + rng.IntN(60)
		cfg.Replica.MaxBatchedTokens = 512 + rng.IntN(4096)
		cfg.Replica.KVBlocks = int64(300 + rng.IntN(2000)) // small: forces preemption and eviction
		cfg.Replica.PrefixCaching = rng.IntN(4) > 0
		t.Run(fmt.Sprintf("%d-%s", trial, cfg.Replica.Batching), func(t *testing.T) {
			eng, f := testFleet(t, cfg)
			reqs := randomWorkload(rng, 400, 20, trial%2 == 0)
			require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
			for eng.Step() {
				held := int64(0)
				for _, r := range f.Replicas {
					r.KV().Check()
					require.NoError(t, r.CheckInvariants())
					held += int64(r.Outstanding())
					require.GreaterOrEqual(t, r.State().OutstandingTokens, int64(0))
				}
				rec := f.Rec
				require.Equal(t, rec.Arrived, rec.Completed+rec.Failed+rec.Shed+rec.InFlight())
				require.Equal(t, held, rec.InFlight(), "in flight must equal what replicas hold")
			}
			require.NoError(t, f.Err())
			require.EqualValues(t, len(reqs), f.Rec.Arrived)
			require.Zero(t, f.Rec.InFlight(), "everything drains")
			for _, r := range f.Replicas {
				require.Zero(t, r.KV().Used(), "no blocks leak")
				require.Zero(t, r.State().OutstandingTokens)
			}
		})
	}
}

// constStep returns a step model whose every step takes stepS seconds.
func constStep(stepS float64) *hw.StepModel {
	return hw.ConstantStepModel(stepS)
}

// queueFleet is one replica serving up to c sequences at once with a
// constant step time: each request is a geometric number of steps, so the
// replica is c parallel servers with one FIFO queue.
func queueFleet(t testing.TB, c int, stepS float64) (*sim.Engine, *Fleet) {
	eng := sim.NewEngine()
	rec := NewRecorder(SLO{})
	cfg := engine.DefaultReplicaConfig()
	cfg.MaxSeqs = c
	cfg.KVBlocks = 1 << 40
	cfg.PrefixCaching = false
	f := newFleet(eng, leastOutstanding{}, rec, 1)
	f.Replicas = []*engine.Replica{engine.NewReplica(0, eng, cfg, constStep(stepS), cfg.KVBlocks, f, &f.states[0])}
	return eng, f
}

// geomSource emits n requests with Poisson arrivals and a geometric number
// of output tokens with the given mean (a discretised exponential).
type geomSource struct {
	rng        *rand.Rand
	n, i       int
	rate, mean float64
	t          float64
}

func (g *geomSource) Next() (workloads.Request, error) {
	if g.i >= g.n {
		return workloads.Request{}, io.EOF
	}
	g.i++
	g.t += g.rng.ExpFloat64() / g.rate
	p := 1 / g.mean
	out := 1 + int32(math.Floor(math.Log(1-g.rng.Float64())/math.Log(1-p)))
	return workloads.Request{ID: uint64(g.i), Arrival: sim.FromSeconds(g.t), InputTokens: 1, OutputTokens: out}, nil
}

// erlangC is the probability of waiting in M/M/c with offered load a = λ/μ.
func erlangC(c int, a float64) float64 {
	sum, term := 0.0, 1.0
	for k := 0; k < c; k++ {
		if k > 0 {
			term *= a / float64(k)
		}
		sum += term
	}
	last := term * a / float64(c) // a^c / c!
	rho := a / float64(c)
	top := last / (1 - rho)
	return top / (sum + top)
}

// TestQueueingTheory: with a replica serving c requests at a time and
// (discretised) exponential service, the mean wait matches M/M/1 and M/M/c
// (Erlang C) within 3% over 10^6 requests, and Little's law holds.
func TestQueueingTheory(t *testing.T) {
	if testing.Short() {
		t.Skip("10^6 requests")
	}
	const stepS = 0.001 // 1 ms steps
	const meanSteps = 1000.0
	muPerS := 1 / (stepS * meanSteps)
	for _, tc := range []struct {
		c   int
		rho float64
	}{{1, 0.7}, {4, 0.8}} {
		t.Run(fmt.Sprintf("M/M/%d", tc.c), func(t *testing.T) {
			eng, f := queueFleet(t, tc.c, stepS)
			lambda := tc.rho * float64(tc.c) * muPerS
			src := &geomSource{rng: rand.New(rand.NewPCG(42, uint64(tc.c))), n: 1_000_000, rate: lambda, mean: meanSteps}
			require.NoError(t, f.Start(src))
			eng.Run(sim.Forever)
			f.Finish(eng.Now())
			require.EqualValues(t, src.n, f.Rec.Completed)
			wq := erlangC(tc.c, lambda/muPerS) / (float64(tc.c)*muPerS - lambda)
			// Admission happens at step boundaries: half a step of extra
			// wait on average.
			got := f.Rec.Queue.Mean()/1000 - stepS/2
			t.Logf("c=%d rho=%.2f Wq theory %.4f s, simulated %.4f s (%.2f%%)", tc.c, tc.rho, wq, got, 100*(got-wq)/wq)
			require.InEpsilon(t, wq, got, 0.03)
			// Little's law: time-average in system = λ_eff · mean time in system.
			span := eng.Now().Seconds()
			L := f.Rec.InFlightNs / 1e9 / span
			lam := float64(f.Rec.Completed) / span
			W := f.Rec.E2E.Mean() / 1000
			require.InEpsilon(t, L, lam*W, 0.01, "Little's law")
		})
	}
}
