package experiments

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// planSmall is a space small enough to search exhaustively: Llama-3-8B on
// H100 or B200, tp 1 or 2, two max_seqs, one replica in repair.
const planSmall = `
name = "plan-small"
seed = 7
[run]
replications = 2
down_replicas = 1
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 4
[workload]
duration_s = 40
[workload.arrival]
rate_per_s = 150
[workload.input]
dist = "lognormal"
mean = 700
p99 = 3000
max = 8192
[workload.output]
dist = "lognormal"
mean = 200
p99 = 800
max = 2048
[plan]
gpus = ["H100", "B200"]
tp = [1, 2]
max_seqs = [16, 256]
max_replicas = 10
[cluster.replica.perf]
profile = "legacy"
`

func parsePlan(t *testing.T, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("plan-small.toml", []byte(src))
	require.NoError(t, err)
	return sc
}

// TestPlanEqualsExhaustive: on a small space, plan's choice costs what the
// cheapest configuration costs when every configuration that fits is run
// at every size from 1 to max_replicas (no roofline floor, no bound).
func TestPlanEqualsExhaustive(t *testing.T) {
	base := parsePlan(t, planSmall)
	targets, err := scenario.ParseSLO("ttft_p99=400ms,tpot_p99=20ms")
	require.NoError(t, err)
	opt := RunOptions{Workers: 2}
	res, err := Plan(base, targets, 0.95, opt)
	require.NoError(t, err)
	require.NotNil(t, res.Best)
	require.Equal(t, len(res.Candidates), res.Simulated+res.Pruned)

	best := -1.0
	var cheapest []string
	for _, c := range res.Candidates {
		sc := c.Scenario()
		if sc == nil {
			require.Equal(t, PlanNoFit, c.Status, c.Label())
			continue
		}
		for n := sc.RunDown() + 1; n <= base.Plan.MaxReplicas; n++ {
			scn, err := sc.Derive(OverrideOverlay("cluster.replicas", strconv.Itoa(n)))
			require.NoError(t, err)
			reps, err := runMany([]*scenario.Scenario{scn}, opt)
			require.NoError(t, err)
			if ok, _ := meets(report.NewArmResult("x", reps[0]), targets, 0.95); ok {
				usd := planUSD(sc, n)
				if best < 0 || usd < best {
					best, cheapest = usd, nil
				}
				if usd == best {
					cheapest = append(cheapest, c.Label())
				}
				break
			}
		}
	}
	require.Positive(t, best)
	require.Equal(t, best, res.Best.USDPerMonth)
	require.Contains(t, cheapest, res.Best.Label())
	t.Logf("chosen %d × %s, $%.0f; exhaustive cheapest %v", res.Best.Replicas, res.Best.Label(), best, cheapest)
}

// TestPlanDeterministic: the same scenario and seed give the same plan.csv
// and best.toml whatever the workers; best.toml loads, and sizing it
// gives the chosen replica count.
func TestPlanDeterministic(t *testing.T) {
	base := parsePlan(t, planSmall)
	const slo = "ttft_p99=400ms,tpot_p99=20ms"
	targets, err := scenario.ParseSLO(slo)
	require.NoError(t, err)
	a, err := Plan(base, targets, 0.95, RunOptions{Workers: 1})
	require.NoError(t, err)
	b, err := Plan(base, targets, 0.95, RunOptions{Workers: 2})
	require.NoError(t, err)
	require.Equal(t, string(a.CSV()), string(b.CSV()))
	ta, err := a.BestTOML(base, slo)
	require.NoError(t, err)
	tb, err := b.BestTOML(base, slo)
	require.NoError(t, err)
	require.Equal(t, string(ta), string(tb))

	best, err := scenario.Parse("best.toml", ta)
	require.NoError(t, err)
	require.Equal(t, a.Best.Replicas, best.Cluster.Replicas)
	size, err := Size(best, targets, 0.95, RunOptions{Workers: 2})
	require.NoError(t, err)
	require.Equal(t, a.Best.Replicas, size.N, "fleetsim size on best.toml confirms the count")
	require.Contains(t, a.VLLMFlags(""), "--tensor-parallel-size "+strconv.Itoa(a.Best.TP))
	checkFrontier(t, a)
}

// checkFrontier: the plan's Pareto frontier holds the chosen fleet; no
// configuration that met the SLO beats a frontier point in all of $/month,
// p99 TTFT and tokens/s per GPU; every one off it is beaten by one, or
// equals one in all three (and is listed as its tie).
func checkFrontier(t *testing.T, r *PlanResult) {
	t.Helper()
	require.NotEmpty(t, r.Frontier)
	require.True(t, r.Best.Frontier, "the chosen fleet is the cheapest: on the frontier")
	type o struct{ usd, ttft, pg float64 }
	of := func(c *PlanCandidate) o {
		tt, pg, _ := planPointStats(c)
		return o{c.USDPerMonth, tt, pg}
	}
	beats := func(a, b o) bool {
		return a.usd <= b.usd && a.ttft <= b.ttft && a.pg >= b.pg && (a.usd < b.usd || a.ttft < b.ttft || a.pg > b.pg)
	}
	var met []*PlanCandidate
	for _, c := range r.Candidates {
		if c.Point != nil && c.Replicas > 0 && c.Status != PlanMissesSLO {
			met = append(met, c)
		}
	}
	for _, c := range met {
		dominated, tie := false, false
		for _, d := range met {
			if d != c && beats(of(d), of(c)) {
				dominated = true
			}
			if d != c && d.Frontier && of(d) == of(c) && slices.Contains(d.FrontierTies, c.Label()) {
				tie = true
			}
		}
		switch {
		case c.Frontier:
			require.False(t, dominated, c.Label())
		default:
			require.True(t, dominated || tie, "%s is off the frontier but nothing beats it", c.Label())
		}
	}
}

// TestPlanBadInput: a space where nothing holds the model, an SLO nothing
// meets, and a [plan] table with bad keys, each with a clear answer.
func TestPlanBadInput(t *testing.T) {
	targets, err := scenario.ParseSLO("ttft_p99=400ms")
	require.NoError(t, err)

	// Llama-3-70B on one H100 GPU: never fits.
	src := strings.Replace(planSmall, `model = "llama-3-8b"`, `model = "llama-3-70b"`, 1)
	src = strings.Replace(src, `tp = 1
replicas`, `tp = 8
replicas`, 1)
	src = strings.Replace(src, `gpus = ["H100", "B200"]
tp = [1, 2]`, `gpus = ["H100"]
tp = [1]`, 1)
	_, err = Plan(parsePlan(t, src), targets, 0.95, RunOptions{})
	var pie *PlanInputError
	require.ErrorAs(t, err, &pie)
	require.ErrorContains(t, err, "no configuration of the space can hold llama-3-70b")

	// An SLO nothing meets: no best, the closest named.
	tight, err := scenario.ParseSLO("ttft_p99=1ms")
	require.NoError(t, err)
	res, err := Plan(parsePlan(t, strings.Replace(planSmall, "max_replicas = 10", "max_replicas = 3", 1)), tight, 0.95, RunOptions{})
	require.NoError(t, err)
	require.Nil(t, res.Best)
	require.NotNil(t, res.Closest)
	require.Equal(t, PlanMissesSLO, res.Closest.Status)
	_, err = res.BestTOML(parsePlan(t, planSmall), "ttft_p99=1ms")
	require.Error(t, err)

	// Bad [plan] keys are named.
	for _, kb := range [][2]string{
		{"plan.gpus.0", `gpus = ["X100"]`},
		{"plan.max_replicas", "max_replicas = 0"},
		{"plan.max_replicas", "max_replicas = 1"}, // one replica in repair
		{"plan.tp.0", "tp = [0]"},
	} {
		key, bad := kb[0], kb[1]
		s := strings.Replace(planSmall, "[plan]\n", "[plan]\n"+bad+"\n", 1)
		for _, k := range []string{"gpus", "tp", "max_replicas"} {
			if strings.HasPrefix(bad, k+" ") {
				s = strings.Replace(planSmall, "[plan]\n", "[plan]\n"+bad+"\n", 1)
				s = removeSecond(s, k+" = ")
			}
		}
		_, err := scenario.Parse("p.toml", []byte(s))
		require.ErrorContains(t, err, key, bad)
	}
}

// removeSecond drops the line of the second occurrence of prefix under
// [plan] (the table's own, after the one a test put first).
func removeSecond(s, prefix string) string {
	i := strings.Index(s, "[plan]\n")
	head, tail := s[:i], s[i:]
	lines := strings.Split(tail, "\n")
	seen := 0
	for j, l := range lines {
		if strings.HasPrefix(l, prefix) {
			seen++
			if seen == 2 {
				return head + strings.Join(append(lines[:j:j], lines[j+1:]...), "\n")
			}
		}
	}
	return s
}

// TestPlanRooflinePrunes: a rate no configuration's roofline bound can
// carry within max_replicas is pruned before anything is simulated.
func TestPlanRooflinePrunes(t *testing.T) {
	src := strings.Replace(planSmall, "rate_per_s = 150", "rate_per_s = 100000", 1)
	targets, err := scenario.ParseSLO("ttft_p99=400ms")
	require.NoError(t, err)
	res, err := Plan(parsePlan(t, src), targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.Nil(t, res.Best)
	require.Zero(t, res.Simulated)
	require.Zero(t, res.Sizings)
	for _, c := range res.Candidates {
		if c.Status != PlanNoFit {
			require.Equal(t, PlanNoRate, c.Status, c.Label())
			require.Positive(t, c.BoundRPS)
			require.Contains(t, c.Reason, "plan.max_replicas is 10")
		}
	}
}

// TestPlanMarkdown: summary.md's plan is Markdown (a table per part, the
// chosen deployment and its vLLM flags), not the terminal table in a
// fenced block (issue 32).
func TestPlanMarkdown(t *testing.T) {
	base := parsePlan(t, planSmall)
	targets, err := scenario.ParseSLO("ttft_p99=400ms,tpot_p99=20ms")
	require.NoError(t, err)
	res, err := Plan(base, targets, 0.95, RunOptions{Workers: 2})
	require.NoError(t, err)
	md := res.Markdown(base.Name, "ttft_p99=400ms,tpot_p99=20ms")
	require.NotContains(t, md, "```")
	require.Contains(t, md, "| config | replicas | GPUs |")
	require.Contains(t, md, "**Chosen:**")
	require.Contains(t, md, "`"+res.VLLMFlags("")+"`")
	require.Contains(t, md, "| "+res.Best.Label()+" |")
}
