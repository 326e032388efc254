package fleet

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
)

// A group's own engine settings reach its replicas, its memory plan and its
// step model; a group without them runs the fleet's.
func TestGroupEngineSettings(t *testing.T) {
	own := engine.DefaultReplicaConfig()
	own.Batching, own.MaxSeqs, own.Weights = engine.BatchContinuous, 64, string(hw.FP8)
	cfg := FleetConfig{Model: "llama-3-70b", Replica: engine.DefaultReplicaConfig(), Groups: []GroupConfig{
		{Name: "bf16", GPU: "H100", TP: 8, Replicas: 2},
		{Name: "fp8", GPU: "H100", TP: 8, Replicas: 2, Replica: &own},
	}}
	var ps config.Problems
	cfg.Validate(hw.NewCatalog(), "cluster", &ps)
	require.Empty(t, ps.List)
	_, f := testFleet(t, cfg)
	for i, r := range f.Replicas {
		want := cfg.Replica
		if i >= 2 {
			want = own
		}
		require.Equal(t, want, *r.Config(), "replica %d", i)
	}
	g := f.Groups
	require.Equal(t, g[0].Memory.WeightBytes, 2*g[1].Memory.WeightBytes, "fp8 weights are half of bf16's")
	require.Greater(t, g[1].Memory.KVBlocks, g[0].Memory.KVBlocks, "the HBM fp8 weights free holds KV")
	require.Equal(t, 1.0, g[1].Capacity, "fp8 decodes faster than bf16 on H100 (both at the reference batch of 64)")
	require.Less(t, g[0].Capacity, 1.0)
}

// ResolveGroupEngines puts a group's keys, and only those, over the fleet's
// [cluster.replica]; a key that is the fleet's is refused where it stands.
func TestResolveGroupEngines(t *testing.T) {
	fl := engine.DefaultReplicaConfig()
	fl.MaxSeqs, fl.Weights = 128, string(hw.FP8)
	written := engine.ReplicaConfig{MaxSeqs: 64, Batching: engine.BatchStatic, PrefixCaching: true} // as decoded: unset keys are zero
	cfg := FleetConfig{Replica: fl, Groups: []GroupConfig{{Name: "a"}, {Name: "b", Replica: &written}}}
	set := map[string]bool{"cluster.groups.1.replica": true, "cluster.groups.1.replica.max_seqs": true,
		"cluster.groups.1.replica.batching": true, "cluster.groups.1.replica.prefix_caching": true}
	var ps config.Problems
	cfg.ResolveGroupEngines("cluster", func(k string) bool { return set[k] }, &ps)
	require.Nil(t, cfg.Groups[0].Replica, "no table: the fleet's settings")
	require.Equal(t, fl, cfg.GroupReplica(0))
	want := fl
	want.MaxSeqs, want.Batching = 64, engine.BatchStatic
	require.Equal(t, want, cfg.GroupReplica(1), "weights and the rest stay the fleet's")
	require.Len(t, ps.List, 1)
	require.Equal(t, "cluster.groups.1.replica.prefix_caching", ps.List[0].Key)
	require.Contains(t, ps.List[0].Msg, "is the fleet's, not a group's")

	// Resolving again (a scenario validated twice) changes nothing.
	var ps2 config.Problems
	cfg.ResolveGroupEngines("cluster", func(k string) bool { return set[k] }, &ps2)
	require.Equal(t, want, cfg.GroupReplica(1))
}

// Every key a group may set is a field of ReplicaConfig (tomlField panics
// on one that is not), and so is every key it may not.
func TestGroupReplicaKeysAreFields(t *testing.T) {
	var c engine.ReplicaConfig
	for _, k := range GroupReplicaKeys {
		require.NotPanics(t, func() { tomlField(&c, k) }, k)
	}
	for _, k := range fleetReplicaKeys {
		require.NotPanics(t, func() { tomlField(&c, k) }, k)
	}
	require.Panics(t, func() { tomlField(&c, "perf.nope") })
}
