package experiments

// plan_output.go writes Plan's answer: plan.csv, the table, the winning
// deployment as a scenario file (best.toml) and the vLLM flags that
// realise it.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// planPointStats are a sized candidate's p99 TTFT (ms), output tokens/s
// per GPU and whether it met the SLO at the size reported.
func planPointStats(c *PlanCandidate) (ttft, perGPU float64, met bool) {
	if c.Point == nil {
		return 0, 0, false
	}
	m := report.StatMap(c.Point.Arm.Stats)
	gpus := c.Point.Replicas * c.GPUsPer
	return m["latency_ms.ttft.p99"].Mean, m["throughput.output_tokens_per_s"].Mean / float64(max(gpus, 1)), c.Point.Met
}

// CSV is plan.csv (results.PlanFile).
func (r *PlanResult) CSV() []byte {
	t := results.NewTable(results.PlanFile, nil, nil)
	f := func(x float64) string { return results.FormatFloat(results.Round6(x)) }
	for _, c := range r.Candidates {
		bound, reps, gpus, usd, ttft, perGPU, met, front := "", "", "", "", "", "", "", ""
		if c.BoundRPS > 0 {
			bound = f(c.BoundRPS)
		}
		if c.Point != nil {
			tt, pg, m := planPointStats(c)
			n := c.Point.Replicas
			reps, gpus, usd = strconv.Itoa(n), strconv.Itoa(n*c.GPUsPer), f(planUSD(c.scenario, n))
			ttft, perGPU, met, front = f(tt), f(pg), strconv.FormatBool(m), strconv.FormatBool(c.Frontier)
		}
		t.Row(c.Label(), c.GPU, strconv.Itoa(c.TP), strconv.Itoa(c.EP), strconv.Itoa(c.MaxBatchedTokens), strconv.Itoa(c.MaxSeqs),
			strconv.Itoa(c.GPUsPer), bound, reps, gpus, usd, ttft, perGPU, strconv.Itoa(c.Simulated), met, front, c.Status, c.Reason)
	}
	return t.Bytes()
}

// planRow is a sized configuration as the table and summary.md show it.
type planRow struct {
	c            *PlanCandidate
	n            int
	ttft, perGPU float64
	verdict      string
}

// sizedRows are the configurations simulated, cheapest first (the chosen
// first among equals, misses last), with their verdicts.
func (r *PlanResult) sizedRows() []planRow {
	var rows []*PlanCandidate
	for _, c := range r.Candidates {
		if c.Point != nil {
			rows = append(rows, c)
		}
	}
	less := func(a, b *PlanCandidate) bool { // cheapest first, the chosen first among equals, misses last
		if (a.Status == PlanMissesSLO) != (b.Status == PlanMissesSLO) {
			return b.Status == PlanMissesSLO
		}
		if a.USDPerMonth != b.USDPerMonth {
			return a.USDPerMonth < b.USDPerMonth
		}
		return a == r.Best
	}
	for i := 1; i < len(rows); i++ { // stable insertion sort: few rows
		for j := i; j > 0 && less(rows[j], rows[j-1]); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
	out := make([]planRow, 0, len(rows))
	for _, c := range rows {
		ttft, perGPU, _ := planPointStats(c)
		n := c.Point.Replicas
		verdict := c.Status
		switch {
		case c.Status == PlanMissesSLO:
			verdict = "misses the SLO up to " + strconv.Itoa(n)
		case c.Status == PlanDearer && r.Best != nil && c.USDPerMonth == r.Best.USDPerMonth:
			verdict = "as cheap, lost the tie (GPUs, then p99 TTFT)"
		}
		if c.Frontier {
			verdict += "; frontier"
		}
		out = append(out, planRow{c, n, ttft, perGPU, verdict})
	}
	return out
}

// frontierLine is a frontier configuration's figures, with its ties.
func frontierLine(c *PlanCandidate) string {
	ttft, perGPU, _ := planPointStats(c)
	ci := report.StatMap(c.Point.Arm.Stats)["latency_ms.ttft.p99"].CI95
	ties := ""
	if n := len(c.FrontierTies); n > 0 {
		ties = fmt.Sprintf(" (and %d equal in all three: %s)", n, strings.Join(c.FrontierTies, ", "))
	}
	return fmt.Sprintf("$%s, %.0f ± %.0f ms, %.0f tok/s/GPU%s", report.Human(c.USDPerMonth), ttft, ci, perGPU, ties)
}

const planFrontierHead = "Pareto frontier of the configurations sized that meet the SLO ($/month, p99 TTFT ± 95% CI, tok/s/GPU; by their means: TTFTs within each other's intervals are not told apart)"

// Table is the plan for a terminal: the configurations simulated, cheapest
// first, then the counts.
func (r *PlanResult) Table(name, slo string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "planning %s for %s (%d configurations: %d simulated, %d pruned; %d fleet sizes run)\n\n",
		name, slo, len(r.Candidates), r.Simulated, r.Pruned, r.Sizings)
	fmt.Fprintf(&b, "%-34s %8s %5s %12s %12s %11s  %s\n", "config", "replicas", "GPUs", "$ / month", "TTFT p99 ms", "tok/s/GPU", "met / why not")
	for _, q := range r.sizedRows() {
		c := q.c
		fmt.Fprintf(&b, "%-34s %8d %5d %12s %12.0f %11.0f  %s\n", c.Label(), q.n, q.n*c.GPUsPer, "$"+report.Human(planUSD(c.scenario, q.n)), q.ttft, q.perGPU, q.verdict)
	}
	fmt.Fprintf(&b, "\nnot simulated: %s\n", r.notSimulated())
	if len(r.Frontier) > 0 {
		fmt.Fprintf(&b, "\n%s: %d\n", planFrontierHead, len(r.Frontier))
		for _, c := range r.Frontier {
			fmt.Fprintf(&b, "  %-34s %s\n", c.Label(), frontierLine(c))
		}
	}
	if r.Best != nil {
		c := r.Best
		fmt.Fprintf(&b, "\nchosen: %d × %s = %d GPUs, $%s a month\n  %s\n", c.Replicas, c.Label(), c.Replicas*c.GPUsPer, report.Human(c.USDPerMonth), r.VLLMFlags(""))
	}
	return b.String()
}

// notSimulated counts the configurations pruned before simulating, by why.
func (r *PlanResult) notSimulated() string {
	noFit, noRate := countStatus(r.Candidates, PlanNoFit), countStatus(r.Candidates, PlanNoRate)
	return fmt.Sprintf("%d do not fit, %d cannot reach the rate (roofline), %d dearer by their roofline floor (see plan.csv)",
		noFit, noRate, r.Pruned-noFit-noRate)
}

// Markdown is the plan for summary.md: the same as Table, as Markdown
// tables.
func (r *PlanResult) Markdown(name, slo string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Planning %s for `%s`: %d configurations, %d simulated, %d pruned; %d fleet sizes run.\n\n",
		name, slo, len(r.Candidates), r.Simulated, r.Pruned, r.Sizings)
	if r.Best != nil {
		c := r.Best
		fmt.Fprintf(&b, "**Chosen:** %d × %s = %d GPUs, $%s a month: `%s`\n\n", c.Replicas, c.Label(), c.Replicas*c.GPUsPer, report.Human(c.USDPerMonth), r.VLLMFlags(""))
	}
	var rows [][]string
	for _, q := range r.sizedRows() {
		c := q.c
		rows = append(rows, []string{c.Label(), strconv.Itoa(q.n), strconv.Itoa(q.n * c.GPUsPer), "$" + report.Human(planUSD(c.scenario, q.n)),
			fmt.Sprintf("%.0f", q.ttft), fmt.Sprintf("%.0f", q.perGPU), q.verdict})
	}
	b.WriteString(report.MarkdownTable([]string{"config", "replicas", "GPUs", "$ / month", "TTFT p99 ms", "tok/s/GPU", "met / why not"}, rows))
	fmt.Fprintf(&b, "\nNot simulated: %s.\n", r.notSimulated())
	if len(r.Frontier) > 0 {
		var fr [][]string
		for _, c := range r.Frontier {
			fr = append(fr, []string{c.Label(), frontierLine(c)})
		}
		fmt.Fprintf(&b, "\n%s:\n\n%s", planFrontierHead, report.MarkdownTable([]string{"config", "figures"}, fr))
	}
	return b.String()
}

// VLLMFlags are the vLLM serve arguments of the chosen configuration, for
// model (the scenario's cluster.model when "").
func (r *PlanResult) VLLMFlags(model string) string {
	c := r.Best
	if c == nil {
		return ""
	}
	if model == "" {
		model = c.scenario.Cluster.Model
	}
	s := fmt.Sprintf("vllm serve %s --tensor-parallel-size %d", model, c.TP)
	if c.EP > 1 {
		s += " --enable-expert-parallel"
	}
	return s + fmt.Sprintf(" --max-num-batched-tokens %d --max-num-seqs %d", c.MaxBatchedTokens, c.MaxSeqs)
}

// BestTOML is the chosen deployment as a scenario file: base's file with
// its overlays (--set, --seed, --replications) and the configuration's
// keys applied, the fleet at the chosen size and [size] slo set to slo, so
// that fleetsim run and fleetsim size take it as it is. Comments of the
// original are not kept.
func (r *PlanResult) BestTOML(base *scenario.Scenario, slo string) ([]byte, error) {
	c := r.Best
	if c == nil {
		return nil, fmt.Errorf("plan: nothing meets the SLO, so there is no deployment to write")
	}
	doc := map[string]any{}
	if _, err := toml.Decode(string(base.Source()), &doc); err != nil {
		return nil, err
	}
	for _, o := range base.Overlays() {
		if o.KeyPrefix != "" { // an [[arms]] table's, already in the file
			continue
		}
		ov := map[string]any{}
		if _, err := toml.Decode(string(o.TOML), &ov); err != nil {
			return nil, err
		}
		mergeTOML(doc, ov)
	}
	set := func(key string, v any) {
		segs := strings.Split(key, ".")
		m := doc
		for _, s := range segs[:len(segs)-1] {
			sub, ok := m[s].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[s] = sub
			}
			m = sub
		}
		m[segs[len(segs)-1]] = v
	}
	set("name", base.Name+"-best")
	set("cluster.gpu", c.GPU)
	set("cluster.tp", c.TP)
	set("cluster.ep", c.EP)
	set("cluster.dp", 1)
	set("cluster.pp", 1)
	set("cluster.replicas", c.Replicas)
	set("cluster.replica.max_batched_tokens", c.MaxBatchedTokens)
	set("cluster.replica.max_seqs", c.MaxSeqs)
	set("size.slo", slo)
	if base.Cost.PricePerGPUHour > 0 && c.GPU != base.Cluster.GPU {
		set("cost.price_per_gpu_hour", 0)
	}
	if base.Has("workload.trace.path") { // resolved against the scenario's folder
		set("workload.trace.path", base.Workload.Trace.Path)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by fleetsim plan from %s: the cheapest deployment found for %s,\n# %d × %s ($%s a month). Realised by:\n#   %s\n\n",
		base.Name, slo, c.Replicas, c.Label(), report.Human(c.USDPerMonth), r.VLLMFlags(""))
	if err := toml.NewEncoder(&b).Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// mergeTOML sets every key of src in dst, table by table.
func mergeTOML(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeTOML(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
