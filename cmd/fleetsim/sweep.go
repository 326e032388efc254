package main

import (
	"flag"
	"io"
	"strings"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

const sweepHelp = `usage: fleetsim sweep SCENARIO.toml [--param KEY=LO..HI:STEP | KEY=V1,V2,...]... [flags]

Run a grid over scenario keys (every combination of the --param axes, the
last varying fastest), every point on the same seeds; prints a table and
writes sweep.csv (ettr.csv for a training scenario), summary.md and
replications.csv.
`

// cmdSweep is `fleetsim sweep SCENARIO.toml [--param KEY=SPEC]...`.
func cmdSweep(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	var params multiFlag
	fs.Var(&params, "param", "grid axis KEY=LO..HI:STEP or KEY=V1,V2,... (repeatable; default: the scenario's [sweep] params)")
	cf := addCommonFlags(fs, "sweep", true)
	pos, err := parseFlags(fs, args, stdout, sweepHelp)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: fleetsim sweep SCENARIO.toml [--param KEY=LO..HI:STEP]... [--replications N] [--out DIR]")
	}
	if err := cf.check(); err != nil {
		return err
	}
	base, err := cf.load(pos[0])
	if err != nil {
		return err
	}
	warnProfiles(base, stderr)
	if len(params) == 0 {
		params = base.Sweep.Params
	}
	var axes []scenario.Axis
	for _, p := range params {
		ax, err := scenario.ParseAxis(p)
		if err != nil {
			return usageError{err}
		}
		axes = append(axes, ax)
	}
	dir := cf.sweepDir(base.Name, axes)
	scs, values, err := experiments.SweepScenarios(base, axes)
	if err != nil {
		return usageError{err}
	}
	if err := cf.checkShard(scs); err != nil {
		return err
	}
	rd, err := cf.runDir(dir)
	if err != nil {
		return err
	}
	defer rd.Abort()
	opt, prog := cf.options(stderr, base.Name)
	results, err := experiments.RunScenarios(scs, opt)
	if err != nil {
		prog.stop()
		return err
	}
	prog.finish()
	if cf.sh.Active() {
		p := experiments.NewPart("sweep", cf.sh, base.Name, experiments.PointNames(axes, values), results, experiments.Provenance{})
		p.Axes, p.Values = axes, values
		var flags []string
		for _, ax := range params {
			flags = append(flags, "--param="+ax)
		}
		return cf.writePart(stdout, dir, p, scs, flags...)
	}
	return commitAfter(rd, finishSweep(rd.Path(), base.Name, max(base.Run.Replications, 1), experiments.AssembleSweep(axes, values, results), stdout, *cf.json))
}
