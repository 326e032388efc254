package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

const sizeHelp = `usage: fleetsim size SCENARIO.toml --slo ttft_p99=800ms,success=99.9% [flags]

Find the fewest replicas that meet the SLO (the one-sided confidence bound
of each term's mean over replications within its limit), with and without
the scenario's failures, and report N, N+1 and N+2 with $ per month. Writes
size.csv, size_search.csv and the run at N. Progress on stderr reports each
size tried.

With two [[cluster.groups]] (GPU types), size finds the cheapest mix that
meets the SLO instead, with each group alone for comparison; with [disagg],
the cheapest prefill and decode pool sizes. Both write size_mix.csv and the
run of the cheapest point.

--arm NAME sizes one of the scenario's [[arms]] instead of its base fleet
(the arm's overrides applied; its run directory is NAME--ARM-size).
`

// cmdSize is `fleetsim size SCENARIO.toml --slo ...`.
func cmdSize(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("size", flag.ContinueOnError)
	slo := fs.String("slo", "", "target, e.g. ttft_p99=800ms,success=99.9% (default: the scenario's [size] slo)")
	conf := fs.Float64("confidence", 0, "one-sided confidence level (default: [size] confidence, 0.95)")
	arm := fs.String("arm", "", "size this [[arms]] table's fleet (default: the scenario's base fleet)")
	cf := addCommonFlags(fs, "size", false)
	pos, err := parseFlags(fs, args, stdout, sizeHelp)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: fleetsim size SCENARIO.toml --slo ttft_p99=800ms,success=99.9%% [--confidence 0.95]")
	}
	if err := cf.check(); err != nil {
		return err
	}
	base, err := cf.load(pos[0])
	if err != nil {
		return err
	}
	if *arm != "" {
		if base, err = armScenario(base, *arm); err != nil {
			return err
		}
	}
	warnProfiles(base, stderr)
	if base.Mode == scenario.ModeTraining {
		return usagef("size: %s is a training scenario (mode = \"training\"): size searches serving replicas against latency SLOs; "+
			"compare training set-ups with fleetsim sweep", base.Name)
	}
	spec := *slo
	if spec == "" {
		spec = base.Size.SLO
	}
	if spec == "" {
		return usagef("size: give --slo (e.g. --slo ttft_p99=800ms,success=99.9%%) or a [size] slo in the scenario")
	}
	targets, err := scenario.ParseSLO(spec)
	if err != nil {
		return usageError{err}
	}
	c, err := confidence("size", *conf, base)
	if err != nil {
		return err
	}
	if len(base.Cluster.Groups) > 0 || base.Disagg.Enabled {
		return cmdSizeMix(base, targets, c, cf, stdout, stderr)
	}
	dir := cf.dir(base.Name)
	rd, err := cf.runDir(dir)
	if err != nil {
		return err
	}
	defer rd.Abort()
	opt, prog := cf.options(stderr, base.Name)
	if prog != nil {
		prog.of = " of the size being tried"
		opt.Batch = sizeProgress(prog, base, targets, c)
	}
	res, err := experiments.Size(base, targets, c, opt)
	if err != nil {
		prog.stop()
		return err
	}
	prog.finish()
	table := res.Table(base.Name)
	arms := []*report.ArmResult{res.Rows[1].Point.Arm}
	if err := report.WriteRunDir(rd.Path(), arms, "## Sizing\n\n"+res.Markdown(base.Name)); err != nil {
		return err
	}
	if err := report.WriteFiles(rd.Path(), map[string][]byte{"size.csv": res.CSV(), "size_search.csv": res.SearchCSV()}); err != nil {
		return err
	}
	if err := rd.Commit(); err != nil {
		return err
	}
	if *cf.json {
		out, err := newSizeJSON(base.Name, res)
		if err != nil {
			return err
		}
		return printJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "%s\nwrote %s (size.csv, size_search.csv, and the run at N: summary.json, summary.md, cdf.csv, timeseries.csv)\n", table, dir)
	return nil
}

// sizeProgress reports the search's verdict on each size it tries: "6
// replicas: meets the SLO", "4 replicas with failures: misses ttft_p99
// bound 912 ms (limit 800)".
func sizeProgress(prog *progress, base *scenario.Scenario, targets []scenario.Target, conf float64) func([]*scenario.Scenario, [][]*report.RepResult) {
	hasFailures := func(sc *scenario.Scenario) bool { return sc.Failures.Enabled || sc.Run.DownReplicas > 0 }
	return func(scs []*scenario.Scenario, results [][]*report.RepResult) {
		sc := scs[0]
		size := fmt.Sprintf("%d replicas", sc.Cluster.Replicas)
		if sc.Cluster.Replicas == 1 {
			size = "1 replica"
		}
		if hasFailures(base) {
			if hasFailures(sc) {
				size += " with failures"
			} else {
				size += " without failures"
			}
		}
		_, verdict := experiments.SizeVerdict(report.NewArmResult("", results[0]), targets, conf)
		prog.note(size + ": " + verdict)
	}
}

// armScenario is the scenario of base's [[arms]] table named name, named
// "BASE--NAME" (its output directory's name).
func armScenario(base *scenario.Scenario, name string) (*scenario.Scenario, error) {
	if len(base.Arms) == 0 {
		return nil, usagef("size: --arm %q: %s has no [[arms]]", name, base.Name)
	}
	arms, err := experiments.ArmsFromScenario(base)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range arms {
		if a.Name == name {
			sc := *a.Scenario
			sc.Name = base.Name + "--" + name
			return &sc, nil
		}
		names = append(names, a.Name)
	}
	return nil, usagef("size: --arm %q: %s has no such arm; its arms are %s", name, base.Name, strings.Join(names, ", "))
}

// confidence is the one-sided confidence level of size and plan: --confidence
// when given (non-zero), else the scenario's [size] confidence; in (0, 1).
func confidence(cmd string, flagValue float64, sc *scenario.Scenario) (float64, error) {
	c := sc.Size.Confidence
	if flagValue != 0 {
		c = flagValue
	}
	if !(c > 0 && c < 1) { // NaN too
		return 0, usagef("%s: --confidence must be between 0 and 1, found %v", cmd, c)
	}
	return c, nil
}
