package failures

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The meta-rsc job-level profile fits the published job MTTFs within 10%
// at both measured sizes while its hardware rows alone stay the node-only
// projection (6.50 failures per 1,000 node-days); llama3 is its own job
// profile and reproduces its one measured job (3.09 h at 16,384 GPUs).
func TestJobLevelProfiles(t *testing.T) {
	node := mustProfile(t, ProfileMetaRSC)
	jp := JobProfile(node)
	require.Equal(t, ProfileMetaRSCJob, jp.Name)
	require.NoError(t, jp.Check())
	nodeRow, _ := node.Row("node")
	jobNode, _ := jp.Row("node")
	assert.Equal(t, nodeRow, jobNode, "node-only projection unchanged")
	figs := PublishedJobFigures(ProfileMetaRSC)
	require.Len(t, figs, 2)
	sizes := []int{}
	for _, f := range figs {
		sizes = append(sizes, f.GPUs)
	}
	for k, m := range JobMTTFs(jp, sizes) {
		assert.InEpsilon(t, figs[k].MTTFHours, m.MTTFHours, 0.1, "%d GPUs", m.GPUs)
		assert.InDelta(t, 1/(float64(m.GPUs)*nodeRow.PerGPUHour), m.HardwareMTTFHours, 1e-9)
		assert.Greater(t, m.HardwareMTTFHours/m.MTTFHours, 3.0, "node failures alone are several times too optimistic")
	}
	// 16,384 GPUs: the paper's 1.8 h projection is the node-only figure.
	m := JobMTTFs(jp, []int{16384})[0]
	assert.InDelta(t, 1.8, m.HardwareMTTFHours, 0.01)

	l := mustProfile(t, ProfileLlama3)
	assert.Same(t, l, JobProfile(l))
	lm := JobMTTFs(l, []int{16384})[0]
	assert.InDelta(t, llama3JobFigures[0].MTTFHours, lm.MTTFHours, 1e-9)
	assert.InDelta(t, 324.0/419, lm.Shares[CauseHardware], 1e-9)
	assert.InDelta(t, 54.0/419, lm.Shares[CauseSoftware], 1e-9)
	assert.InDelta(t, 7.0/419, lm.Shares[CauseCollective], 1e-9)
	assert.InDelta(t, 34.0/419, lm.Shares[CauseInfra], 1e-9)
}
