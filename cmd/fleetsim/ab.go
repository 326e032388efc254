package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

const abHelp = `usage: fleetsim ab SCENARIO.toml | fleetsim ab A.toml B.toml [flags]

Paired A/B: the arms of a scenario's [[arms]] tables (or two scenario files,
arms A and B) run on the same seeds (common random numbers). Prints both arms
side by side and each arm's paired differences from the first with 95% CIs;
writes ab.csv, arms/*/summary.json, summary.md, cdf.csv, timeseries.csv.
`

// cmdAB is `fleetsim ab SCENARIO.toml` (arms from its [[arms]] tables) or
// `fleetsim ab A.toml B.toml` (two scenarios as arms A and B).
func cmdAB(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ab", flag.ContinueOnError)
	cf := addCommonFlags(fs, "ab", true)
	pos, err := parseFlags(fs, args, stdout, abHelp)
	if err != nil {
		return err
	}
	if err := cf.check(); err != nil {
		return err
	}
	var arms []experiments.Arm
	switch len(pos) {
	case 1:
		base, err := cf.load(pos[0])
		if err != nil {
			return err
		}
		warnProfiles(base, stderr)
		if arms, err = experiments.ArmsFromScenario(base); err != nil {
			return usageError{err}
		}
	case 2:
		for i, p := range pos {
			sc, err := cf.load(p)
			if err != nil {
				return err
			}
			arms = append(arms, experiments.Arm{Name: sc.Name, Scenario: sc})
			if i == 1 {
				a := arms[0].Scenario
				if sc.Seed != a.Seed || sc.Run.Replications != a.Run.Replications {
					fmt.Fprintf(stderr, "fleetsim: ab: arm %s takes arm %s's seed (%d) and replications (%d) so that the arms are paired\n",
						sc.Name, arms[0].Name, a.Seed, a.Run.Replications)
					sc.Seed, sc.Run.Replications = a.Seed, a.Run.Replications
				}
			}
		}
		if arms[0].Name == arms[1].Name {
			arms[0].Name, arms[1].Name = "A", "B"
		}
	default:
		return usagef("usage: fleetsim ab SCENARIO.toml | fleetsim ab A.toml B.toml [--replications N] [--out DIR]")
	}
	scs := experiments.ArmScenarios(arms)
	if err := cf.checkShard(scs); err != nil {
		return err
	}
	dir := cf.dir(arms[0].Scenario.Name)
	rd, err := cf.runDir(dir)
	if err != nil {
		return err
	}
	defer rd.Abort()
	opt, prog := cf.options(stderr, arms[0].Scenario.Name)
	results, err := experiments.RunScenarios(scs, opt)
	if err != nil {
		prog.stop()
		return err
	}
	prog.finish()
	names := experiments.ArmNames(arms)
	if cf.sh.Active() {
		return cf.writePart(stdout, dir, experiments.NewPart("ab", cf.sh, arms[0].Scenario.Name, names, results, experiments.Provenance{}), scs)
	}
	return commitAfter(rd, finishAB(rd.Path(), experiments.AssembleAB(names, results), stdout, *cf.json))
}

// applyRunFlags applies --seed (when seed is not nil: 0 is a seed like any
// other) and --replications (when reps > 0) as overlays, so that scenarios
// derived from sc keep them.
func applyRunFlags(sc *scenario.Scenario, seed *uint64, reps int) (*scenario.Scenario, error) {
	var ovs []scenario.Overlay
	if seed != nil {
		ovs = append(ovs, scenario.Overlay{Name: "--seed", TOML: []byte(fmt.Sprintf("seed = %d\n", *seed))})
	}
	if reps > 0 {
		ovs = append(ovs, scenario.Overlay{Name: "--replications", TOML: []byte(fmt.Sprintf("run.replications = %d\n", reps))})
	}
	if len(ovs) == 0 {
		return sc, nil
	}
	d, err := sc.Derive(ovs...)
	if err != nil {
		return nil, usageError{err}
	}
	return d, nil
}
