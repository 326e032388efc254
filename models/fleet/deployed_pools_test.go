package fleet

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
)

// TestPoolsDeployLikeOneKind: a disaggregated fleet's decode pool and a
// fleet of groups build their step models as a fleet of one kind does
// (NewDeployedStepModel), so an MoE model keeps its expert terms there
// (before, both used the dense NewStepModel and an MoE decode pool or
// group ran at the speed of a dense model of the same total size).
func TestPoolsDeployLikeOneKind(t *testing.T) {
	one := FleetConfig{GPU: "H100", Model: "qwen3-30b-a3b", TP: 2, Replicas: 1, Replica: engine.DefaultReplicaConfig()}
	_, ref := testFleet(t, one)
	shapes := []hw.StepShape{
		{DecodeSeqs: 1, DecodeCtx: 512},
		{DecodeSeqs: 64, DecodeCtx: 64 * 2048},
		{PrefillTokens: 4096, DecodeSeqs: 8, DecodeCtx: 8 * 1024},
	}
	dense, err := hw.NewStepModel(hw.NewCatalog().GPUs["H100"], hw.NewCatalog().LLMs["qwen3-30b-a3b"], 2, hw.Precision(one.Replica.Weights), hw.Precision(one.Replica.KVDType), hw.NewCatalog().Profiles[one.Replica.Perf.Profile])
	require.NoError(t, err)
	want := ref.Replicas[0].StepModel()
	require.NotEqual(t, dense.Step(shapes[1]), want.Step(shapes[1]), "the MoE terms change a decode step")

	dc := defaultDisagg(1)
	dc.Decode.GPU, dc.Decode.TP = "H100", 2
	_, f := disaggFleet(t, one, dc)
	grp := one
	grp.GPU, grp.TP, grp.Replicas = "", 0, 0
	grp.Groups = []GroupConfig{{Name: "a", GPU: "H100", TP: 2, Replicas: 1, Model: "qwen3-30b-a3b"}}
	grp.ServeModels = []string{"qwen3-30b-a3b"}
	_, g := testFleet(t, grp)
	for _, s := range shapes {
		require.Equal(t, want.Step(s), f.Disagg.Decode.Replicas[0].StepModel().Step(s), "decode pool, %+v", s)
		require.Equal(t, want.Step(s), g.Replicas[0].StepModel().Step(s), "group, %+v", s)
	}
}
