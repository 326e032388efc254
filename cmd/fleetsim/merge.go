package main

import (
	"flag"
	"io"
	"path/filepath"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
)

const mergeHelp = `usage: fleetsim merge PART.json... [flags]

Combine the part files that run, ab and sweep write with --shard i/n (one
per shard, all of them) into the directory and report that one machine
would have written, byte for byte.
`

// cmdMerge is `fleetsim merge PART... [--out DIR]`: combine the part files
// of a sharded run, ab or sweep into the directory one machine would have
// written.
func cmdMerge(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "", "output directory (default fleetsim-out/NAME, NAME-ab or NAME-sweep-KEYS)")
	asJSON := fs.Bool("json", false, "print the results as JSON on stdout, as run, ab and sweep --json do")
	pos, err := parseFlags(fs, args, stdout, mergeHelp)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("usage: fleetsim merge PART.json... [--out DIR]")
	}
	part, results, err := experiments.ReadParts(pos)
	if err != nil {
		return usageError{err}
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("fleetsim-out", part.Scenario)
		switch part.Kind {
		case "sweep":
			dir = filepath.Join("fleetsim-out", experiments.SweepDirName(part.Scenario, part.Axes))
		case "run":
		default:
			dir += "-" + part.Kind
		}
	}
	rd, err := report.NewRunDir(dir)
	if err != nil {
		return usageError{err}
	}
	defer rd.Abort()
	switch part.Kind {
	case "run":
		return commitAfter(rd, finishRun(rd.Path(), report.NewArmResult("", results[0]), stdout, "", *asJSON))
	case "ab":
		return commitAfter(rd, finishAB(rd.Path(), experiments.AssembleAB(part.Names, results), stdout, *asJSON))
	case "sweep":
		return commitAfter(rd, finishSweep(rd.Path(), part.Scenario, part.Reps[0], experiments.AssembleSweep(part.Axes, part.Values, results), stdout, *asJSON))
	}
	return usagef("merge: unknown part kind %q", part.Kind)
}
