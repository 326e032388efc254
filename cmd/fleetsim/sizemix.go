package main

import (
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// sizeMixJSON is `size --json` for a fleet of two pool sizes (two groups,
// or a disaggregated fleet's prefill and decode pools).
type sizeMixJSON struct {
	Scenario   string           `json:"scenario"`
	Confidence float64          `json:"confidence"`
	Axes       []sizeMixAxis    `json:"axes"`
	Best       map[string]int   `json:"best"`
	BestUSD    float64          `json:"best_usd_per_month"`
	Evaluated  []map[string]any `json:"evaluated"`
}

// sizeMixAxis is one pool size the search moves: its name (a key of
// best), what it counts and what each replica costs.
type sizeMixAxis struct {
	Name            string  `json:"name"`
	Pool            string  `json:"pool"`
	GPU             string  `json:"gpu"`
	GPUsPerReplica  int     `json:"gpus_per_replica"`
	PricePerGPUHour float64 `json:"price_per_gpu_hour"`
}

// cmdSizeMix is `fleetsim size` on a scenario with two pool sizes: the
// cheapest mix of its two [[cluster.groups]] (each group alone for
// comparison), or the cheapest prefill and decode pools of a [disagg]
// fleet. Writes size_mix.csv and the run of the cheapest point.
func cmdSizeMix(base *scenario.Scenario, targets []scenario.Target, conf float64, cf *commonFlags, stdout, stderr io.Writer) error {
	dir := cf.dir(base.Name)
	opt, prog := cf.options(stderr, base.Name)
	if prog != nil {
		prog.of = " of the mix being tried"
	}
	res, err := experiments.SizeMix(base, targets, conf, opt)
	if err != nil {
		prog.stop()
		return err
	}
	prog.finish()
	table := res.Table(base.Name)
	if err := report.WriteRunDir(dir, []*report.ArmResult{res.Best.Arm}, "## Sizing a mix\n\n"+res.Markdown(base.Name)); err != nil {
		return err
	}
	if err := report.WriteFiles(dir, map[string][]byte{"size_mix.csv": res.CSV()}); err != nil {
		return err
	}
	if *cf.json {
		out := sizeMixJSON{Scenario: base.Name, Confidence: conf, Best: map[string]int{}, BestUSD: res.Best.USDPerMonth}
		for i, ax := range res.Axes {
			out.Best[ax.Name] = res.Best.Counts[i]
			out.Axes = append(out.Axes, sizeMixAxis{Name: ax.Name, Pool: ax.Pool, GPU: ax.GPU, GPUsPerReplica: ax.GPUsPer, PricePerGPUHour: ax.PricePerGPUHour})
		}
		if out.Evaluated, err = csvRows(res.CSV()); err != nil {
			return err
		}
		return printJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "%s\nwrote %s (size_mix.csv, and the run of the cheapest mix: summary.json, summary.md, cdf.csv, timeseries.csv)\n", table, dir)
	return nil
}
