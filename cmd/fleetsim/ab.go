package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/fleetsim/fleetsim/experiments"
)

// cmdAB is `fleetsim ab SCENARIO.toml` (arms from its [[arms]] tables) or
// `fleetsim ab A.toml B.toml` (two scenarios as arms A and B).
func cmdAB(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ab", flag.ContinueOnError)
	out := fs.String("out", "", "output directory (default fleetsim-out/NAME-ab)")
	reps := fs.Int("replications", 0, "replications per arm (overrides [run] replications; 0 keeps it)")
	seed := fs.Uint64("seed", 0, "master seed (0 keeps the scenario's)")
	workers := fs.Int("workers", 0, "runs at once (default: all cores); results do not depend on it")
	quiet := fs.Bool("quiet", false, "no progress bar")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *reps < 0 || *workers < 0 {
		return usagef("ab: --replications and --workers must be >= 0")
	}
	var arms []experiments.Arm
	switch len(pos) {
	case 1:
		base, err := loadScenario(pos[0])
		if err != nil {
			return err
		}
		if base, err = applyRunFlags(base, *seed, *reps); err != nil {
			return err
		}
		if arms, err = experiments.ArmsFromScenario(base); err != nil {
			return usageError{err}
		}
	case 2:
		for i, p := range pos {
			sc, err := loadScenario(p)
			if err != nil {
				return err
			}
			if sc, err = applyRunFlags(sc, *seed, *reps); err != nil {
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
	dir := *out
	if dir == "" {
		dir = filepath.Join("fleetsim-out", arms[0].Scenario.Name+"-ab")
	}
	opt := experiments.RunOptions{Workers: *workers}
	if !*quiet {
		opt.Progress = delayedBar(stderr, "ab")
	}
	res, err := experiments.RunAB(arms, opt)
	if err != nil {
		return err
	}
	report := res.Report()
	if err := experiments.WriteRunDir(dir, res.Arms, "## A/B\n\n```\n"+report+"```\n"); err != nil {
		return err
	}
	if err := experiments.WriteFileAtomic(filepath.Join(dir, "ab.csv"), res.ABCSV()); err != nil {
		return err
	}
	fmt.Fprint(stdout, report)
	fmt.Fprintf(stdout, "\nwrote %s (ab.csv, arms/*/summary.json, summary.md, cdf.csv, timeseries.csv, replications.csv)\n", dir)
	return nil
}

// applyRunFlags applies --seed and --replications, when given, as
// overlays (so that scenarios derived from it keep them).
func applyRunFlags(sc *experiments.Scenario, seed uint64, reps int) (*experiments.Scenario, error) {
	var ovs []experiments.Overlay
	if seed != 0 {
		ovs = append(ovs, experiments.Overlay{Name: "--seed", TOML: []byte(fmt.Sprintf("seed = %d\n", seed))})
	}
	if reps > 0 {
		ovs = append(ovs, experiments.Overlay{Name: "--replications", TOML: []byte(fmt.Sprintf("run.replications = %d\n", reps))})
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
