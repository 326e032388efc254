package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/htmlreport"
)

const reportHelp = `usage: fleetsim report DIR [--out FILE] [--scenario FILE|BUILTIN]

Write one self-contained HTML file from a run, A/B, sweep or size
directory, for a design review: provenance (scenario, fleet, seeds, every
file with its SHA-256), the headline results per arm (mean ± 95% CI), the
directory's tables (ab.csv, sweep.csv, size.csv, ...), every figure
fleetsim plot draws (inline SVG), every value of summary.json, and the
scenario file (DIR/scenario.toml, or --scenario FILE or a built-in's name:
a run directory does not record its scenario). The page has no
script and loads nothing; the same directory gives the same file.
Writes DIR/report.html unless --out names another file.
`

// cmdReport is `fleetsim report DIR`: the HTML report of a run directory.
// A missing directory, one that is not a run directory, or a malformed
// results file is bad input (exit status 2); nothing is written then.
func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "write the report to `FILE` (default DIR/report.html)")
	scen := fs.String("scenario", "", "show the scenario `FILE` (or built-in) the directory was run from (default DIR/scenario.toml, if any)")
	pos, err := parseFlags(fs, args, stdout, reportHelp)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("fleetsim report: want one run directory, got %d arguments (usage: fleetsim report DIR [--out FILE])", len(pos))
	}
	opt := htmlreport.Options{Scenario: *scen}
	if *scen != "" && !strings.HasSuffix(*scen, ".toml") && !strings.ContainsRune(*scen, os.PathSeparator) {
		if _, err := os.Stat(*scen); err != nil { // a built-in's name, as fleetsim run takes it
			b, err := experiments.BuiltinTOML(*scen)
			if err != nil {
				return usageError{fmt.Errorf("--scenario: %w", err)}
			}
			opt = htmlreport.Options{ScenarioTOML: b, ScenarioSource: "built-in " + *scen}
		}
	}
	path, err := htmlreport.Write(pos[0], *out, opt)
	if errors.Is(err, htmlreport.ErrBadInput) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return nil
}
