package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fleetsim/fleetsim/experiments"
)

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// cmdSweep is `fleetsim sweep SCENARIO.toml [--param KEY=SPEC]...`.
func cmdSweep(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	var params multiFlag
	fs.Var(&params, "param", "grid axis KEY=LO..HI:STEP or KEY=V1,V2,... (repeatable; default: the scenario's [sweep] params)")
	cf := addCommonFlags(fs, "sweep")
	pos, err := parseFlags(fs, args)
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
	if len(params) == 0 {
		params = base.Sweep.Params
	}
	var axes []experiments.Axis
	for _, p := range params {
		ax, err := experiments.ParseAxis(p)
		if err != nil {
			return usageError{err}
		}
		axes = append(axes, ax)
	}
	dir := cf.dir(base.Name)
	opt := cf.options(stderr)
	res, err := experiments.RunSweep(base, axes, opt)
	if err != nil {
		return usageError{err}
	}
	arms := make([]*experiments.ArmResult, len(res.Points))
	for i, p := range res.Points {
		arms[i] = p.Arm
	}
	table := res.Table()
	if err := experiments.WriteRunDir(dir, arms, "## Sweep\n\n```\n"+table+"```\n"); err != nil {
		return err
	}
	files := map[string][]byte{"sweep.csv": res.CSV()}
	if res.Training() {
		files = map[string][]byte{"ettr.csv": res.ETTRCSV()} // the serving columns would be empty
	}
	if err := experiments.WriteFiles(dir, files); err != nil {
		return err
	}
	name := "sweep.csv"
	if res.Training() {
		name = "ettr.csv"
	}
	fmt.Fprintf(stdout, "sweep of %s: %d points × %d replications\n\n%s\nwrote %s (%s, summary.md, replications.csv)\n",
		base.Name, len(res.Points), max(base.Run.Replications, 1), table, dir, name)
	return nil
}
