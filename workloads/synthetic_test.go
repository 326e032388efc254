package workloads

import (
	"io"
	"reflect"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustNew(t testing.TB, c Config, seed uint64) Source {
	t.Helper()
	src, err := New(c, sim.NewStreams(seed))
	require.NoError(t, err)
	return src
}

func TestDeterminism(t *testing.T) {
	kinds := map[string]func(*Config){
		KindSynthetic: func(c *Config) { c.SystemPrompts, c.SystemPromptTokens, c.SystemPromptChoice = 5, 512, ChoiceZipf },
		KindSessions:  func(c *Config) { c.Arrival.Process, c.Arrival.CV = ProcessGamma, 3 },
		KindAgentic:   func(c *Config) { c.Arrival.Process = ProcessDiurnal },
	}
	for kind, edit := range kinds {
		t.Run(kind, func(t *testing.T) {
			c := DefaultConfigFor(kind)
			c.MaxRequests, c.DurationS = 3000, 0
			edit(&c)
			a := drain(t, mustNew(t, c, 42), 0)
			b := drain(t, mustNew(t, c, 42), 0)
			require.Len(t, a, 3000)
			require.Len(t, b, 3000)
			assert.True(t, reflect.DeepEqual(a, b), "same seed, same requests")
			assert.False(t, reflect.DeepEqual(a, drain(t, mustNew(t, c, 43), 0)), "another seed, other requests")
			checkOrder(t, a)
		})
	}
}

func TestSyntheticLimits(t *testing.T) {
	c := DefaultConfig() // 10 req/s for 600 s
	rs := drain(t, mustNew(t, c, 1), 0)
	assert.InDelta(t, 6000, len(rs), 4*77.5, "Poisson count, 4 standard deviations")
	assert.LessOrEqual(t, rs[len(rs)-1].Arrival, 600*sim.Second)
	checkOrder(t, rs)

	c.MaxRequests = 17
	src := mustNew(t, c, 1)
	rs = drain(t, src, 0)
	assert.Len(t, rs, 17)
	_, err := src.Next()
	assert.Equal(t, io.EOF, err, "EOF again after the end")
	assert.NoError(t, src.(io.Closer).Close())

	c.MaxRequests, c.DurationS = 100000, 1
	assert.Less(t, len(drain(t, mustNew(t, c, 1), 0)), 100, "duration first")
}

func TestSyntheticLengths(t *testing.T) {
	c := DefaultConfig()
	c.MaxRequests = 100_000
	c.Input = DistConfig{Dist: DistLogNormal, Mean: 2000, P99: 16000, Min: 10, Max: 1 << 20}
	c.Output = DistConfig{Dist: DistEmpirical, Values: []int{7, 9}, Min: 1}
	rs := drain(t, mustNew(t, c, 3), 0)
	var in float64
	for _, r := range rs {
		in += float64(r.InputTokens)
		assert.Contains(t, []int32{7, 9}, r.OutputTokens)
		assert.Nil(t, r.Prefix)
		assert.Zero(t, r.Session)
	}
	assert.InEpsilon(t, 2000, in/float64(len(rs)), 0.02)
}

func TestSyntheticSystemPrompts(t *testing.T) {
	tests := []struct {
		choice     string
		firstShare float64 // expected share of prompt 0
	}{
		{ChoiceUniform, 1.0 / 4},
		{ChoiceZipf, 1 / (1 + 1.0/2 + 1.0/3 + 1.0/4)}, // s = 1
	}
	for _, tt := range tests {
		t.Run(tt.choice, func(t *testing.T) {
			c := DefaultConfig()
			c.MaxRequests = 40_000
			c.SystemPrompts, c.SystemPromptTokens, c.SystemPromptChoice = 4, 1024, tt.choice
			c.Input = DistConfig{Dist: DistFixed, Mean: 100, Min: 1}
			rs := drain(t, mustNew(t, c, 4), 0)
			counts := map[uint64]int{}
			for _, r := range rs {
				require.Len(t, r.Prefix, 1)
				assert.Equal(t, int32(1024), r.Prefix[0].Tokens)
				assert.Equal(t, int32(1124), r.InputTokens)
				counts[r.Prefix[0].Hash]++
			}
			require.Len(t, counts, 4)
			hot := 0
			for _, n := range counts {
				hot = max(hot, n)
			}
			// Standard error of a share at n = 40,000 is <= 0.25%.
			assert.InDelta(t, tt.firstShare, float64(hot)/float64(len(rs)), 0.01, "most used prompt's share")
		})
	}
}

// TestStreamsIndependent checks common random numbers: changing the length
// distributions must not move a single arrival.
func TestStreamsIndependent(t *testing.T) {
	c := DefaultConfig()
	c.MaxRequests = 1000
	a := drain(t, mustNew(t, c, 5), 0)
	c.Output = DistConfig{Dist: DistFixed, Mean: 10, Min: 1}
	c.SystemPrompts, c.SystemPromptTokens = 3, 16
	b := drain(t, mustNew(t, c, 5), 0)
	for i := range a {
		require.Equal(t, a[i].Arrival, b[i].Arrival)
		require.Equal(t, a[i].InputTokens+16, b[i].InputTokens)
	}
}
