package fleet

import (
	"io"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// sliceSource replays a fixed list of requests.
type sliceSource struct {
	reqs []workloads.Request
	i    int
}

func (s *sliceSource) Next() (workloads.Request, error) {
	if s.i >= len(s.reqs) {
		return workloads.Request{}, io.EOF
	}
	s.i++
	return s.reqs[s.i-1], nil
}

// leastOutstanding is a minimal router for model tests (policies has the
// real ones).
type leastOutstanding struct{}

func (leastOutstanding) Route(_ *workloads.Request, rs []engine.ReplicaState) (int, bool) {
	best := -1
	for i := range rs {
		if rs[i].Available && (best < 0 || rs[i].Outstanding < rs[best].Outstanding) {
			best = i
		}
	}
	return best, best >= 0
}

func testFleet(t testing.TB, cfg FleetConfig) (*sim.Engine, *Fleet) {
	t.Helper()
	eng := sim.NewEngine()
	f, err := NewFleet(eng, hw.NewCatalog(), cfg, leastOutstanding{}, NewRecorder(SLO{}), "cluster")
	require.NoError(t, err)
	return eng, f
}

func defaultFleet(replicas int) FleetConfig {
	return FleetConfig{GPU: "H100", Model: "llama-3-8b", TP: 1, Replicas: replicas,
		Replica: engine.DefaultReplicaConfig()}
}

// lognormalLen draws a token length with the given mean and sigma, clamped.
func lognormalLen(rng *rand.Rand, mean, sigma float64, lo, hi int32) int32 {
	mu := logf(mean) - sigma*sigma/2
	v := int32(expf(mu + sigma*rng.NormFloat64()))
	return max(lo, min(hi, v))
}

type problemsT struct{ config.Problems }
