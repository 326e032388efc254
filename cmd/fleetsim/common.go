package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// commonFlags are the flags every multi-run command takes.
type commonFlags struct {
	name          string
	fs            *flag.FlagSet
	out           *string
	reps, workers *int
	seed          *uint64
	quiet, json   *bool
	cpuprofile    *string
	shard         *string // nil for a command that cannot be sharded
	sh            experiments.Shard
	set           map[string]bool // flags given on the command line
	keys          multiFlag       // --set KEY=VALUE, in order
	// outName names the default output directory instead of the
	// scenario's name: a scenario file whose name is a built-in's (see
	// load).
	outName string
	loaded  bool // load has run
}

// addCommonFlags registers --out, --replications, --seed, --workers,
// --quiet, --json, --cpuprofile and --set on fs for command name, and --shard when shardable.
func addCommonFlags(fs *flag.FlagSet, name string, shardable bool) *commonFlags {
	out := filepath.Join("fleetsim-out", "NAME-"+name)
	if name == "run" {
		out = filepath.Join("fleetsim-out", "NAME")
	}
	c := &commonFlags{
		name:       name,
		fs:         fs,
		out:        fs.String("out", "", "output directory (default "+out+", NAME the scenario's name)"),
		reps:       fs.Int("replications", 0, "replications (default: the scenario's [run] replications)"),
		seed:       fs.Uint64("seed", 0, "master seed (default: the scenario's; 0 is a seed like any other)"),
		workers:    fs.Int("workers", 0, "runs at once (default: all cores); results do not depend on it"),
		quiet:      fs.Bool("quiet", false, "no progress on stderr"),
		json:       fs.Bool("json", false, "print the results as JSON on stdout, and nothing else (the run directory is still written)"),
		cpuprofile: fs.String("cpuprofile", "", "write a CPU profile of the command to this file (go tool pprof reads it), kept only if the command succeeds"),
	}
	fs.Var(&c.keys, "set", "KEY=VALUE: set a scenario key for this command, repeatable (e.g. --set workload.arrival.rate_per_s=40)")
	if shardable {
		c.shard = fs.String("shard", "", "run shard i/n of the replications and write a part file (merge them with fleetsim merge)")
	}
	return c
}

// check validates the flags' values; call it after parsing.
func (c *commonFlags) check() error {
	c.set = flagsSet(c.fs)
	if *c.reps < 0 || *c.workers < 0 {
		return usagef("%s: --replications and --workers must be >= 0", c.name)
	}
	if c.shard != nil && *c.shard != "" {
		sh, err := experiments.ParseShard(*c.shard)
		if err != nil {
			return usageError{err}
		}
		c.sh = sh
		if *c.json {
			return usagef("%s: --json cannot be combined with --shard: a shard writes a part file, not results; "+
				"merge the parts with fleetsim merge --json", c.name)
		}
	}
	if *c.cpuprofile != "" {
		return startCPUProfile(*c.cpuprofile)
	}
	return nil
}

// runDir prepares the output directory before anything runs: a shard
// checks that it can write its part file into dir; other commands build
// their run directory as a temporary sibling of dir (experiments.RunDir),
// committed by finish. An unwritable or foreign --out is bad usage.
func (c *commonFlags) runDir(dir string) (*report.RunDir, error) {
	if c.sh.Active() {
		if err := report.CheckWritable(dir); err != nil {
			return nil, usageError{err}
		}
		return nil, nil
	}
	rd, err := report.NewRunDir(dir)
	if err != nil {
		return nil, usageError{err}
	}
	return rd, nil
}

// commitAfter commits rd when err (the writing's result) is nil.
func commitAfter(rd *report.RunDir, err error) error {
	if err != nil {
		return err
	}
	return rd.Commit()
}

// checkShard refuses, before anything runs, a shard count larger than the
// job count of scs.
func (c *commonFlags) checkShard(scs []*scenario.Scenario) error {
	if !c.sh.Active() {
		return nil
	}
	if err := c.sh.CheckShard(experiments.JobCount(scs)); err != nil {
		return usagef("%s: %v", c.name, err)
	}
	return nil
}

// resultFlags are the flags given that change results, in canonical form,
// for a part's provenance; extra are the command's own (sweep's --param).
func (c *commonFlags) resultFlags(extra ...string) []string {
	var out []string
	if c.set["seed"] {
		out = append(out, fmt.Sprintf("--seed=%d", *c.seed))
	}
	if c.set["replications"] && *c.reps > 0 {
		out = append(out, fmt.Sprintf("--replications=%d", *c.reps))
	}
	return append(out, extra...)
}

// writePart writes a shard's part file, with the provenance of the job set
// scs, and says so.
func (c *commonFlags) writePart(w io.Writer, dir string, p *experiments.Part, scs []*scenario.Scenario, extra ...string) error {
	prov, err := experiments.NewProvenance(p.Kind, c.resultFlags(extra...), scs, p.Of)
	if err != nil {
		return err
	}
	p.Prov = prov
	path, err := p.Write(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s (%d of the %s's jobs); merge all %d parts with: fleetsim merge %s/part-*-of-%d.json --out DIR\n",
		path, len(p.Jobs), p.Kind, p.Of, dir, p.Of)
	return nil
}

// load reads a scenario (file or built-in) and applies --seed and
// --replications when given.
//
// A scenario file (not a built-in) whose name is a built-in's, as an
// edited copy of one keeps it (fleetsim scenarios show default >
// mine.toml), writes by default to a directory named after the file
// (fleetsim-out/mine), never over the built-in's; when the file's name is
// a built-in's too, the command is refused without --out, naming the
// clash. The first scenario loaded (an A/B's first arm) names the
// directory.
func (c *commonFlags) load(arg string) (*scenario.Scenario, error) {
	sc, fromFile, err := loadScenarioFrom(arg)
	if err != nil {
		return nil, err
	}
	first := !c.loaded
	c.loaded = true
	if fromFile && first && *c.out == "" && slices.Contains(experiments.BuiltinNames(), sc.Name) {
		stem := scenario.NameFromFile(arg)
		if stem == sc.Name || slices.Contains(experiments.BuiltinNames(), stem) {
			return nil, usagef("%s: its name %q is a built-in scenario's, and so is its file's (%q): its run directory would replace the built-in's (%s); set name = \"...\" in it, rename the file, or give --out DIR",
				arg, sc.Name, stem, c.dir(sc.Name))
		}
		c.outName = stem
	}
	if sc, err = experiments.SetKeys(sc, c.keys); err != nil {
		return nil, usageError{err}
	}
	var seed *uint64
	if c.set["seed"] {
		seed = c.seed
	}
	return applyRunFlags(sc, seed, *c.reps)
}

// warnProfiles prints, on stderr, every pool of sc whose replica lies
// outside what its engine profile was fitted on.
func warnProfiles(sc *scenario.Scenario, stderr io.Writer) {
	for _, w := range sc.ProfileWarnings() {
		fmt.Fprintf(stderr, "fleetsim: warning: %s\n", w)
	}
}

// dir is the output directory for scenario name.
func (c *commonFlags) dir(name string) string {
	if *c.out != "" {
		return *c.out
	}
	if c.outName != "" {
		name = c.outName
	}
	if c.name == "run" {
		return filepath.Join("fleetsim-out", name)
	}
	return filepath.Join("fleetsim-out", name+"-"+c.name)
}

// sweepDir is the output directory of a sweep of scenario name over axes:
// --out, or fleetsim-out/NAME-sweep-KEYS (experiments.SweepDirName).
func (c *commonFlags) sweepDir(name string, axes []scenario.Axis) string {
	if *c.out != "" || len(axes) == 0 {
		return c.dir(name)
	}
	if c.outName != "" {
		name = c.outName
	}
	return filepath.Join("fleetsim-out", experiments.SweepDirName(name, axes))
}

// options are the run options: workers, the shard, and progress on stderr
// (nil with --quiet) labelled with what runs. Call the progress's finish
// when the work is done.
func (c *commonFlags) options(stderr io.Writer, what string) (experiments.RunOptions, *progress) {
	opt := experiments.RunOptions{Workers: *c.workers, Shard: c.sh}
	if *c.quiet {
		return opt, nil
	}
	p := newProgress(stderr, c.name+" "+what)
	p.hook(&opt)
	return opt, p
}
