package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/experiments"
)

const sizeHelp = `usage: fleetsim size SCENARIO.toml --slo ttft_p99=800ms,success=99.9% [flags]

Find the fewest replicas that meet the SLO (the one-sided confidence bound
of each term's mean over replications within its limit), with and without
the scenario's failures, and report N, N+1 and N+2 with $ per month. Writes
size.csv, size_search.csv and the run at N.
`

// cmdSize is `fleetsim size SCENARIO.toml --slo ...`.
func cmdSize(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("size", flag.ContinueOnError)
	slo := fs.String("slo", "", "target, e.g. ttft_p99=800ms,success=99.9% (default: the scenario's [size] slo)")
	conf := fs.Float64("confidence", 0, "one-sided confidence level (default: [size] confidence, 0.95)")
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
	spec := *slo
	if spec == "" {
		spec = base.Size.SLO
	}
	if spec == "" {
		return usagef("size: give --slo (e.g. --slo ttft_p99=800ms,success=99.9%%) or a [size] slo in the scenario")
	}
	targets, err := experiments.ParseSLO(spec)
	if err != nil {
		return usageError{err}
	}
	c := base.Size.Confidence
	if *conf != 0 {
		c = *conf
	}
	if c <= 0 || c >= 1 {
		return usagef("size: --confidence must be between 0 and 1, found %v", c)
	}
	dir := cf.dir(base.Name)
	opt := cf.options(stderr)
	res, err := experiments.Size(base, targets, c, opt)
	if err != nil {
		return err
	}
	table := res.Table(base.Name)
	arms := []*experiments.ArmResult{res.Rows[1].Point.Arm}
	if err := experiments.WriteRunDir(dir, arms, "## Sizing\n\n```\n"+table+"```\n"); err != nil {
		return err
	}
	if err := experiments.WriteFiles(dir, map[string][]byte{"size.csv": res.CSV(), "size_search.csv": res.SearchCSV()}); err != nil {
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
