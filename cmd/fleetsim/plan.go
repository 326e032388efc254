package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

const planHelp = `usage: fleetsim plan SCENARIO.toml --slo ttft_p99=1s,tpot_p99=50ms [flags]

Search the scenario's [plan] space (GPU types, tensor and expert
parallelism, max_batched_tokens, max_seqs) for the cheapest fleet that
meets the SLO. Configurations that cannot hold the model, or whose
roofline bound cannot carry the rate within plan.max_replicas, are pruned
before simulating; each other one is sized as fleetsim size sizes a fleet
(with the scenario's failures and run.down_replicas: N+k), cheapest
possible first, skipping those whose roofline floor already costs more than
the best found. Every configuration runs the same seeds.

Writes plan.csv (every configuration, with why it was not chosen),
best.toml (the chosen deployment as a scenario that fleetsim run and
fleetsim size accept) and the chosen fleet's run; prints the vLLM serve
flags that realise it. When nothing meets the SLO it says which came
closest, writes nothing and exits 2.
`

// planJSON is `plan --json`.
type planJSON struct {
	Scenario    string           `json:"scenario"`
	SLO         string           `json:"slo"`
	Confidence  float64          `json:"confidence"`
	Chosen      string           `json:"chosen"`
	Replicas    int              `json:"replicas"`
	GPUs        int              `json:"gpus"`
	USDPerMonth float64          `json:"usd_per_month"`
	VLLM        string           `json:"vllm"`
	Simulated   int              `json:"configurations_simulated"`
	Pruned      int              `json:"configurations_pruned"`
	Sizings     int              `json:"fleet_sizes_run"`
	Frontier    []string         `json:"frontier"` // the Pareto frontier's configurations, cheapest first
	Candidates  []map[string]any `json:"configurations"`
}

// cmdPlan is `fleetsim plan SCENARIO.toml --slo ...`.
func cmdPlan(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	slo := fs.String("slo", "", "target, e.g. ttft_p99=1s,tpot_p99=50ms (default: the scenario's [plan] slo, else its [size] slo)")
	conf := fs.Float64("confidence", 0, "one-sided confidence level (default: [size] confidence, 0.95)")
	cf := addCommonFlags(fs, "plan", false)
	pos, err := parseFlags(fs, args, stdout, planHelp)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: fleetsim plan SCENARIO.toml --slo ttft_p99=1s,tpot_p99=50ms [--confidence 0.95]")
	}
	if err := cf.check(); err != nil {
		return err
	}
	base, err := cf.load(pos[0])
	if err != nil {
		return err
	}
	warnProfiles(base, stderr)
	spec := *slo
	for _, s := range []string{base.Plan.SLO, base.Size.SLO} {
		if spec == "" {
			spec = s
		}
	}
	if spec == "" {
		return usagef("plan: give --slo (e.g. --slo ttft_p99=1s,tpot_p99=50ms) or a [plan] slo in the scenario")
	}
	targets, err := scenario.ParseSLO(spec)
	if err != nil {
		return usageError{err}
	}
	c, err := confidence("plan", *conf, base)
	if err != nil {
		return err
	}
	dir := cf.dir(base.Name)
	rd, err := cf.runDir(dir)
	if err != nil {
		return err
	}
	defer rd.Abort()
	opt, prog := cf.options(stderr, base.Name)
	if prog != nil {
		prog.of = " of the configuration and size being tried"
	}
	res, err := experiments.Plan(base, targets, c, opt)
	if err != nil {
		prog.stop()
		var pie *experiments.PlanInputError
		if errors.As(err, &pie) {
			return usageError{err}
		}
		return err
	}
	prog.finish()
	if res.Best == nil {
		msg := fmt.Sprintf("plan: %s: no configuration of the space meets %s within plan.max_replicas = %d (%d simulated, %d pruned)",
			base.Name, spec, res.MaxReplicas, res.Simulated, res.Pruned)
		if cl := res.Closest; cl != nil {
			msg += fmt.Sprintf("; the closest is %s: %s", cl.Label(), cl.Reason)
		} else if res.Simulated == 0 {
			msg += "; by its roofline bound every configuration that fits needs more replicas than that: raise plan.max_replicas, or add faster GPUs"
		}
		return usagef("%s; nothing written", msg)
	}
	best, err := res.BestTOML(base, spec)
	if err != nil {
		return err
	}
	table := res.Table(base.Name, spec)
	if err := report.WriteRunDir(rd.Path(), []*report.ArmResult{res.Best.Point.Arm}, "## Plan\n\n"+res.Markdown(base.Name, spec)); err != nil {
		return err
	}
	if err := report.WriteFiles(rd.Path(), map[string][]byte{results.PlanFile.Name: res.CSV(), results.PlanBestFile: best}); err != nil {
		return err
	}
	if err := rd.Commit(); err != nil {
		return err
	}
	if *cf.json {
		b := res.Best
		out := planJSON{Scenario: base.Name, SLO: spec, Confidence: c, Chosen: b.Label(), Replicas: b.Replicas, GPUs: b.Replicas * b.GPUsPer,
			USDPerMonth: b.USDPerMonth, VLLM: res.VLLMFlags(""), Simulated: res.Simulated, Pruned: res.Pruned, Sizings: res.Sizings}
		for _, f := range res.Frontier {
			out.Frontier = append(out.Frontier, f.Label())
		}
		if out.Candidates, err = csvRows(res.CSV(), "config", "gpu", "status", "reason"); err != nil {
			return err
		}
		return printJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "%s\nwrote %s (plan.csv, best.toml, and the chosen fleet's run: summary.json, summary.md, cdf.csv, timeseries.csv)\n", table, dir)
	return nil
}
