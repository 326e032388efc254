package experiments

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// TestMixMarkdown: summary.md's answer of a sizing on two pools is
// Markdown (the fleets and the frontier as tables), not the terminal table
// in a fenced block (issue 32); the terminal table has the same rows.
func TestMixMarkdown(t *testing.T) {
	base, err := LoadBuiltin("mixed-gpus")
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=500ms")
	require.NoError(t, err)
	res, err := SizeMix(base, targets, 0.95, RunOptions{Workers: 2})
	require.NoError(t, err)
	md := res.Markdown(base.Name)
	require.NotContains(t, md, "```")
	require.Contains(t, md, "| fleet | GPUs | $ per month | bounds |")
	label := "cheapest: " + res.Best.Label(res.Axes)
	require.Contains(t, md, "| "+label+" |")
	require.Contains(t, res.Table(base.Name), label)
	require.Equal(t, strings.Count(res.Table(base.Name), "ttft_p99 "), strings.Count(md, "ttft_p99 "))
}
