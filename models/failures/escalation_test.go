package failures

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// Repairs escalate with the stages' probabilities: a reset-gpu failure
// stops at reset half the time, at reboot 0.5·0.6, and so on; its repair
// time is the sum of the stages tried; the mean matches MeanHours; a
// reboot-node failure enters at reboot, an RMA at the hardware swap;
// restart-app rows and rows with their own repair path do not escalate.
func TestEscalationPaths(t *testing.T) {
	p := mustProfile(t, ProfileRackScale)
	p.Escalation = DefaultEscalation()
	gen, err := NewGenerator(p, HGX(2048, 4), sim.NewStream(5, "failures"))
	require.NoError(t, err)
	paths := map[string]map[string]int{} // action -> path -> count
	sum := map[string]float64{}
	n := map[string]int{}
	for i := 0; i < 200000; i++ {
		ev, ok := gen.Next()
		require.True(t, ok)
		a := ev.Action.String()
		switch {
		case ev.Action == ActionRestartApp:
			require.Empty(t, ev.RepairPath)
			require.Zero(t, ev.Repair)
			continue
		case ev.Category == "coolant" || ev.Category == "power-shelf" || ev.Category == "switch-tray":
			require.Empty(t, ev.RepairPath, "own repair path")
			continue
		}
		if paths[a] == nil {
			paths[a] = map[string]int{}
		}
		paths[a][ev.RepairPath]++
		sum[a] += ev.Repair.Seconds() / 3600
		n[a]++
		stages := strings.Split(ev.RepairPath, ">")
		if ev.RepairPath != "" && stages[len(stages)-1] != StageRMA {
			var want sim.Time
			for _, s := range stages {
				for _, st := range p.Escalation.Stages {
					if st.Name == s {
						want += st.Repair.Draw(nil) // fixed stages draw nothing
					}
				}
			}
			require.Equal(t, want, ev.Repair, ev.RepairPath)
		}
	}
	frac := func(a, path string) float64 { return float64(paths[a][path]) / float64(n[a]) }
	reset := ActionResetGPU.String()
	assert.InDelta(t, 0.5, frac(reset, "reset"), 0.01)
	assert.InDelta(t, 0.5*0.6, frac(reset, "reset>reboot"), 0.01)
	assert.InDelta(t, 0.5*0.4*0.5, frac(reset, "reset>reboot>reimage"), 0.01)
	assert.InDelta(t, 0.5*0.4*0.5*0.9, frac(reset, "reset>reboot>reimage>hw-swap"), 0.005)
	assert.InDelta(t, 0.6, frac(ActionRebootNode.String(), "reboot"), 0.01)
	assert.InDelta(t, 0.9, frac(ActionRMA.String(), "hw-swap"), 0.01)
	assert.InDelta(t, 0.1, frac(ActionRMA.String(), "hw-swap>rma"), 0.01)
	for _, a := range []Action{ActionResetGPU, ActionRebootNode, ActionRMA} {
		m := sum[a.String()] / float64(n[a.String()])
		want := p.Escalation.MeanHours(a)
		t.Logf("%-12s %6d repairs, mean %.3f h (expected %.3f h)", a, n[a.String()], m, want)
		assert.InEpsilon(t, want, m, 0.25, a.String()) // the 1% that reach RMA have a heavy tail
	}
	// Spares are sized on the pipeline's mean repair times: an RMA row now
	// mostly ends at the 8 h swap, not the 5.5-day RMA.
	assert.Less(t, p.MeanInRepair(16384), mustProfile(t, ProfileRackScale).MeanInRepair(16384))
}

func TestEscalationConfig(t *testing.T) {
	var ps config.Problems
	c := EscalationConfig{Enabled: true, Stages: []StageConfig{
		{Name: "reset", FixProbability: f64(1.5), Repair: RepairConfig{Dist: DistFixed, Hours: 0.1}},
		{Name: "reset", Repair: RepairConfig{Dist: "forever"}},
	}}
	c.Validate("failures.escalation", &ps)
	assert.Equal(t, []config.Problem{
		{Key: "failures.escalation.stages.0.fix_probability", Msg: "must be a fraction between 0 and 1, found 1.5"},
		{Key: "failures.escalation.stages.1.name", Msg: `stage "reset" is named twice`},
		{Key: "failures.escalation.stages.1.fix_probability", Msg: "each stage needs a probability of fixing the unit (0..1)"},
		{Key: "failures.escalation.stages.1.repair.dist", Msg: `unknown name "forever"; valid names: empirical, fixed, lognormal`},
	}, fixMsgs(ps.List))
	ok := EscalationConfig{Enabled: true, Stages: []StageConfig{
		{Name: "power-cycle", FixProbability: f64(0.7), Repair: RepairConfig{Dist: DistFixed, Hours: 0.2}},
		{Name: "replace", FixProbability: f64(1), Repair: RepairConfig{Dist: DistFixed, Hours: 24}},
	}}
	e := ok.Escalation()
	require.NotNil(t, e)
	// No stage named for the action: the nearest by position.
	assert.Equal(t, 0, e.entry(ActionResetGPU))
	assert.Equal(t, 1, e.entry(ActionRebootNode))
	assert.Equal(t, 1, e.entry(ActionRMA))
	assert.InDelta(t, 0.2+0.3*24, e.MeanHours(ActionResetGPU), 1e-12)
	assert.Nil(t, (&EscalationConfig{}).Escalation())
	assert.False(t, math.IsNaN(DefaultEscalation().MeanHours(ActionRMA)))
}

// fixMsgs keeps config's own wording of a fraction check out of the test.
func fixMsgs(ps []config.Problem) []config.Problem {
	for i := range ps {
		if strings.HasSuffix(ps[i].Key, "fix_probability") && strings.Contains(ps[i].Msg, "1.5") {
			ps[i].Msg = "must be a fraction between 0 and 1, found 1.5"
		}
	}
	return ps
}
