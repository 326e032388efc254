package experiments

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/engine"
)

const twoModels = `name = "mm"
[cluster]
model = "llama-3-70b"
[[cluster.groups]]
name = "big"
gpu = "H100"
tp = 8
replicas = 2
model = "llama-3-70b"
[[cluster.groups]]
name = "small"
gpu = "H100"
tp = 1
replicas = 4
model = "llama-3-8b"
[workload]
duration_s = 300
[workload.arrival]
rate_per_s = 30
[slo]
ttft_ms = 800
[[serve]]
model = "llama-3-70b"
share = 1
[[serve]]
model = "llama-3-8b"
share = 2
ttft_ms = 300
`

// Several models on one fleet: each request goes to its model's replicas
// only, shares hold, per-model counts add up to the fleet's, and each model
// is judged by its own SLO.
func TestSeveralModels(t *testing.T) {
	sc, err := scenario.Parse("mm.toml", []byte(twoModels))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.Len(t, s.Models, 2)
	var arrived, completed, met int64
	for i, m := range s.Models {
		r := m.Requests
		require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight, m.Model)
		arrived += r.Arrived
		completed += r.Completed
		met += res.Rec.PerModel[i].MetSLO
	}
	require.Equal(t, s.Requests.Arrived, arrived)
	require.Equal(t, s.Requests.Completed, completed)
	// Shares 1:2 of ~9,000 requests: the 8B model gets 2/3 within 4 sigma.
	p := float64(s.Models[1].Requests.Arrived) / float64(arrived)
	require.InDelta(t, 2.0/3, p, 4*math.Sqrt(2.0/9/float64(arrived)))
	// Every token a group generated is its own model's (no hedges, no
	// failures: generated = completed requests' output).
	for i, g := range s.Fleet.Groups {
		require.Equal(t, res.Rec.PerModel[i].OutputTokens, g.OutputTokens, "group %s serves only %s", g.Name, g.Model)
	}
	require.Equal(t, 800.0, s.Models[0].TTFTSLOMs)
	require.Equal(t, 300.0, s.Models[1].TTFTSLOMs, "the model's own SLO")
	require.InDelta(t, float64(met)/float64(arrived), *s.Goodput.SLOAttainment, 1e-6, "each request against its model's SLO")
}

func TestServeRefusals(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"model = \"llama-3-8b\"\nshare = 2", "model = \"llama-3-405b\"\nshare = 2", `serve.1.model: "llama-3-405b" has traffic but no replicas`},
		{"model = \"llama-3-8b\"\nshare = 2", "model = \"llama-3-70b\"\nshare = 2", `serve.1.model: "llama-3-70b" is served twice`},
		{"share = 2\n", "share = 0\n", "serve.1.share: must be a finite number > 0"},
		{"[[serve]]\nmodel = \"llama-3-8b\"\nshare = 2\nttft_ms = 300\n", "", `cluster.groups.1.model: "llama-3-8b" has replicas but no [[serve]] traffic`},
	}
	for _, c := range cases {
		src := replaceOnce(t, twoModels, c.from, c.to)
		_, err := scenario.Parse("mm.toml", []byte(src))
		require.ErrorContains(t, err, c.want, c.to)
	}
	noServe := replaceOnce(t, twoModels, "[[serve]]", "[xserve]")
	_, err := scenario.Parse("mm.toml", []byte(noServe))
	require.Error(t, err)
	// Without [[serve]], a group of another model than cluster.model.
	plain := `name = "p"
[cluster]
model = "llama-3-70b"
[[cluster.groups]]
gpu = "H100"
tp = 1
replicas = 1
model = "llama-3-8b"
[workload]
duration_s = 10
`
	_, err = scenario.Parse("p.toml", []byte(plain))
	require.ErrorContains(t, err, `cluster.groups.0.model: "llama-3-8b" is not cluster.model`)
	withoutGroups := "name = \"w\"\n[workload]\nduration_s = 10\n[[serve]]\nmodel = \"llama-3-70b\"\nshare = 1\n"
	_, err = scenario.Parse("w.toml", []byte(withoutGroups))
	require.ErrorContains(t, err, "w.toml:4: serve: [[serve]] needs a fleet of [[cluster.groups]]")
}

func replaceOnce(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	require.GreaterOrEqual(t, i, 0, "%q not in the scenario", from)
	return s[:i] + to + s[i+len(from):]
}

// Per-model workloads ([serve.workload]): the 8B model's requests take its
// own lengths; the 70B model's requests keep the workload's, the same ones
// as without the table (each model draws from its own stream).
func TestServeWorkload(t *testing.T) {
	own := replaceOnce(t, twoModels, "ttft_ms = 300\n", "ttft_ms = 300\n[serve.workload.input]\ndist = \"fixed\"\nmean = 3000\n[serve.workload.output]\ndist = \"empirical\"\nvalues = [7, 9]\n")
	lengths := func(src string) map[uint64][3]int32 {
		sc, err := scenario.Parse("mm.toml", []byte(src))
		require.NoError(t, err)
		sc, err = sc.Derive(OverrideOverlay("workload.duration_s", "60"))
		require.NoError(t, err)
		out := map[uint64][3]int32{}
		_, err = Run(sc, Options{OnDone: func(o *engine.Outcome) {
			out[o.Req.ID] = [3]int32{int32(o.Req.Model), o.Req.InputTokens, o.Req.OutputTokens}
		}})
		require.NoError(t, err)
		return out
	}
	base, got := lengths(twoModels), lengths(own)
	require.Equal(t, len(base), len(got))
	n8 := 0
	for id, g := range got {
		b := base[id]
		require.Equal(t, b[0], g[0], "request %d's model", id)
		if g[0] == 0 {
			require.Equal(t, b, g, "a 70B request keeps the workload's lengths")
			continue
		}
		n8++
		require.Equal(t, int32(3000), g[1])
		require.Contains(t, []int32{7, 9}, g[2])
	}
	require.Greater(t, n8, 100)

	for _, c := range []struct{ to, want string }{
		{"[serve.workload.input]\ndist = \"lognormal\"\nmean = -1\n", "mm.toml:31: serve.1.workload.input.mean"},
		{"[serve.workload.output]\ndist = \"zipf\"\n", "serve.1.workload.output.dist"},
	} {
		_, err := scenario.Parse("mm.toml", []byte(replaceOnce(t, twoModels, "ttft_ms = 300\n", "ttft_ms = 300\n"+c.to)))
		require.ErrorContains(t, err, c.want)
	}
	trace := replaceOnce(t, own, "[workload]\n", "[workload]\nkind = \"sessions\"\n")
	_, err := scenario.Parse("mm.toml", []byte(trace))
	require.ErrorContains(t, err, `serve.1.workload: a model's own lengths need workload.kind = "synthetic"`)
}
