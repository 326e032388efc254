package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// loadScenario reads a scenario file, or a built-in by name.
func loadScenario(arg string) (*scenario.Scenario, error) {
	sc, _, err := loadScenarioFrom(arg)
	return sc, err
}

// loadScenarioFrom is loadScenario, and whether the scenario came from a
// file rather than the built-ins.
func loadScenarioFrom(arg string) (*scenario.Scenario, bool, error) {
	if arg == "" {
		arg = experiments.DefaultBuiltin
	}
	if !strings.HasSuffix(arg, ".toml") && !strings.ContainsRune(arg, os.PathSeparator) {
		if _, err := os.Stat(arg); err != nil {
			sc, err := experiments.LoadBuiltin(arg)
			if err != nil {
				return nil, false, usageError{err}
			}
			return sc, false, nil
		}
	}
	sc, err := scenario.Load(arg)
	if err != nil {
		return nil, true, usageError{err}
	}
	return sc, true, nil
}

const runHelp = `usage: fleetsim run [SCENARIO.toml | BUILTIN] [flags]

Simulate a scenario (default: the built-in "default"; fleetsim scenarios
lists the others), print a results table and write the run directory:
summary.json, summary.md, replications.csv, cdf.csv, timeseries.csv.
`

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	cf := addCommonFlags(fs, "run", true)
	records := fs.Bool("requests", false, "also stream one CSV row per completed request of replication 0 to DIR/requests.csv")
	pos, err := parseFlags(fs, args, stdout, runHelp)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("run takes at most one scenario, got %d: %s", len(pos), strings.Join(pos, " "))
	}
	if err := cf.check(); err != nil {
		return err
	}
	if *records && cf.sh.Active() {
		return usagef("run: --requests cannot be combined with --shard: requests.csv streams replication 0 of an unsharded run")
	}
	arg := ""
	if len(pos) == 1 {
		arg = pos[0]
	}
	sc, err := cf.load(arg)
	if err != nil {
		return err
	}
	warnProfiles(sc, stderr)
	if err := cf.checkShard([]*scenario.Scenario{sc}); err != nil {
		return err
	}
	dir := cf.dir(sc.Name)
	rd, err := cf.runDir(dir)
	if err != nil {
		return err
	}
	defer rd.Abort()
	if len(sc.Arms) > 0 {
		fmt.Fprintf(stderr, "fleetsim: %s has [[arms]]: this runs its base scenario; `fleetsim ab %s` compares the arms\n", sc.Name, arg)
	}
	opt, prog := cf.options(stderr, sc.Name)
	var reqFile *os.File
	var reqWriter *report.RequestWriter
	if *records {
		// Streamed into the temporary run directory: removed with it if
		// the run fails or is interrupted.
		if reqFile, err = os.Create(filepath.Join(rd.Path(), "requests.csv")); err != nil {
			return err
		}
		defer reqFile.Close()
		reqWriter = report.NewRequestWriter(reqFile)
		opt.OnDone = reqWriter.Write
	}
	results, err := experiments.RunScenarios([]*scenario.Scenario{sc}, opt)
	if err != nil {
		prog.stop()
		return err
	}
	prog.finish()
	if cf.sh.Active() {
		return cf.writePart(stdout, dir, experiments.NewPart("run", cf.sh, sc.Name, []string{""}, results, experiments.Provenance{}), []*scenario.Scenario{sc})
	}
	extra := ""
	if reqWriter != nil {
		if err := reqWriter.Flush(); err != nil {
			return err
		}
		if err := reqFile.Close(); err != nil {
			return err
		}
		extra = ", requests.csv"
	}
	return commitAfter(rd, finishRun(rd.Path(), report.NewArmResult("", results[0]), stdout, extra, *cf.json))
}

const validateHelp = `usage: fleetsim validate SCENARIO.toml

Check a scenario file (or a built-in by name) and report every problem with
file, line and key; exit status 2 if there is any.
`

const scenariosHelp = `usage: fleetsim scenarios [show NAME]

List the built-in scenarios, or print one's TOML as a starting point
(fleetsim scenarios show default > mine.toml).
`

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	pos, err := parseFlags(fs, args, stdout, validateHelp)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("validate takes one scenario file")
	}
	sc, err := loadScenario(pos[0])
	if err != nil {
		return err
	}
	warnProfiles(sc, stderr)
	fmt.Fprintf(stdout, "%s: ok (scenario %q)\n", pos[0], sc.Name)
	return nil
}

func cmdScenarios(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("scenarios", flag.ContinueOnError)
	pos, err := parseFlags(fs, args, stdout, scenariosHelp)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		for _, n := range experiments.BuiltinNames() {
			sc, err := experiments.LoadBuiltin(n)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%-18s %s\n", n, sc.Description)
		}
		return nil
	case len(pos) == 2 && pos[0] == "show":
		data, err := experiments.BuiltinTOML(pos[1])
		if err != nil {
			return usageError{err}
		}
		_, err = stdout.Write(data)
		return err
	default:
		return usagef("usage: fleetsim scenarios [show NAME]")
	}
}
