package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/workloads"
)

// usageError marks bad command lines and bad input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const usage = `fleetsim — a deterministic discrete-event simulator of GPU serving fleets

usage:
  fleetsim run [SCENARIO.toml | BUILTIN] [--out DIR] [--seed N] [--replications N]
               [--workers N] [--requests] [--shard i/n] [--json] [--quiet]
      simulate a scenario (default: the built-in "default"), print a results
      table and write the run directory (DIR defaults to fleetsim-out/NAME);
      --requests also streams DIR/requests.csv, one row per completed request
  fleetsim ab SCENARIO.toml | fleetsim ab A.toml B.toml [--replications N] [--out DIR]
      paired A/B: arms from [[arms]] tables (or two files) on the same seeds;
      prints both arms side by side and paired differences with 95% CIs
  fleetsim sweep SCENARIO.toml [--param KEY=LO..HI:STEP | KEY=V1,V2,...]... [--replications N]
      run a grid over scenario keys; writes sweep.csv
  fleetsim size SCENARIO.toml --slo ttft_p99=800ms,success=99.9% [--confidence 0.95]
      find the fewest replicas that meet the SLO; report N, N+1, N+2 with $ per month
  fleetsim plan SCENARIO.toml --slo ttft_p99=1s,tpot_p99=50ms
      search GPU types, TP/EP and engine limits ([plan]) for the cheapest fleet
      that meets the SLO; writes plan.csv and best.toml
  fleetsim merge PART.json... [--out DIR] [--json]
      run, ab and sweep take --shard i/n to run one shard and write a part
      file; merge combines the parts into what one machine would write
  fleetsim validate SCENARIO.toml
      check a scenario file and report every problem with file, line and key
  fleetsim scenarios [show NAME]
      list the built-in scenarios, or print one as a starting point
  fleetsim plot DIR
      draw the plots of a run directory into DIR/plots (PNG and SVG)
  fleetsim report DIR [--out FILE] [--scenario FILE|BUILTIN]
      one self-contained HTML file of a run directory (DIR/report.html):
      provenance, results, tables, figures, for a design review
  fleetsim trace stats FILE [--format mooncake|azure] [--json]
      summarise a request trace (rows, rate, lengths, prefix reuse)
  fleetsim failures list | show PROFILE [--gpus N] | replay FILE
      failure profiles (rates, MTBF) and fault-log statistics
  fleetsim calibrate BENCH.csv | RESULT.json... [--models FILE] [--out DIR] [--holdout K]
      fit an engine profile (the step model's constants) to measured
      throughput and latency; report each row's error
  fleetsim models list | gpus | show NAME|CONFIG.json
      the catalog's models and GPUs; a model, or a Hugging Face config.json
      read as [[models]] config = reads it
  fleetsim version | fleetsim --version
      print the module version and VCS revision this binary was built from

flags of run, ab, sweep, size and plan (before or after the scenario):
  --out DIR          output directory (default fleetsim-out/NAME, or NAME-ab, NAME-sweep-KEYS, NAME-size, NAME-plan)
  --seed N           master seed (default: the scenario's; 0 is a seed like any other)
  --replications N   replications per scenario (default: the scenario's [run] replications)
  --workers N        runs at once (default: all cores); results do not depend on it
  --shard i/n        run, ab and sweep only: run shard i of n and write a part file
  --json             print the results as JSON on stdout instead of the table
  --quiet            no progress on stderr

fleetsim COMMAND --help (or fleetsim help COMMAND) lists a command's flags.
Results go to stdout and are byte-identical for the same scenario and seed;
progress and notes go to stderr.

exit status: 0 success, 1 failure while running (e.g. an output file that
cannot be written), 2 bad usage or bad input (nothing is written), 3 internal
error (a bug in fleetsim: please report it with the message and stack
printed), 130 interrupted (SIGINT or SIGTERM; temporary files are removed)
`

// Exit statuses (README, "Exit status").
const (
	exitFailure     = 1   // a failure while running
	exitUsage       = 2   // bad usage or bad input
	exitInternal    = 3   // a bug: a panic, recovered
	exitInterrupted = 130 // SIGINT or SIGTERM (128 + SIGINT)
)

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		report.RemoveTemps()
		fmt.Fprintf(os.Stderr, "\nfleetsim: stopped by %v; temporary files removed, nothing written\n", s)
		os.Exit(exitInterrupted)
	}()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit status. A panic (a
// bug, whatever the input) is recovered here, or on a simulation's worker
// (experiments.InternalError), and reported as an internal error with its
// stack: exit status 3.
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			report.RemoveTemps()
			internalError(stderr, r, debug.Stack())
			code = exitInternal
		}
		if code != 0 {
			report.RemoveMadeIfEmpty() // a shard's --out, made before it failed
		}
	}()
	err := dispatch(args, stdout, stderr)
	if perr := stopCPUProfile(err == nil); err == nil {
		err = perr
	}
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ie *experiments.InternalError
	if errors.As(err, &ie) {
		internalError(stderr, err, ie.Stack)
		return exitInternal
	}
	fmt.Fprintln(stderr, "fleetsim: "+strings.ReplaceAll(err.Error(), "\n", "\n  "))
	var ue usageError
	var te *workloads.TraceError
	var le *experiments.LimitError
	if errors.As(err, &ue) || errors.As(err, &te) || errors.As(err, &le) {
		return exitUsage // a malformed trace row or a limit found while replaying is bad input too
	}
	return exitFailure
}

// internalError reports a recovered panic.
func internalError(w io.Writer, v any, stack []byte) {
	fmt.Fprintf(w, "fleetsim: internal error (a bug in fleetsim, not in your input; please report it with this message): %v\n%s", v, stack)
}

// testDispatchHook, set by tests only, runs before each command.
var testDispatchHook func() error

func dispatch(args []string, stdout, stderr io.Writer) error {
	if testDispatchHook != nil {
		if err := testDispatchHook(); err != nil {
			return err
		}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "scenarios":
		return cmdScenarios(args[1:], stdout, stderr)
	case "trace":
		return cmdTrace(args[1:], stdout, stderr)
	case "ab":
		return cmdAB(args[1:], stdout, stderr)
	case "sweep":
		return cmdSweep(args[1:], stdout, stderr)
	case "size":
		return cmdSize(args[1:], stdout, stderr)
	case "plan":
		return cmdPlan(args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(args[1:], stdout, stderr)
	case "failures":
		return cmdFailures(args[1:], stdout, stderr)
	case "plot":
		return cmdPlot(args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "calibrate":
		return cmdCalibrate(args[1:], stdout, stderr)
	case "models":
		return cmdModels(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return cmdVersion(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" && args[1] != "help" {
			return dispatch([]string{args[1], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return usagef("unknown command %q; commands: run, ab, sweep, size, plan, merge, validate, scenarios, trace, failures, plot, report, calibrate, models, version (see fleetsim help)", args[0])
	}
}

// parseFlags parses fs from args allowing flags before and after positional
// arguments, and returns the positionals. On -h, -help or --help it prints
// help (the command's usage and description) and every flag with its
// description to stdout, and returns flag.ErrHelp, which run maps to exit
// status 0. A flag the command does not take is a usageError that says why
// when refused explains it.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, help string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printHelp(stdout, fs, help)
				return nil, err
			}
			if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
				if why, ok := refused[fs.Name()][name]; ok {
					return nil, usagef("%s does not take --%s: %s", fs.Name(), name, why)
				}
			}
			return nil, usagef("%s: %v (see fleetsim %s --help)", fs.Name(), err, fs.Name())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// refused explains, by command and flag name, flags that a command does
// not take though its neighbours do.
var refused = map[string]map[string]string{
	"size": {"shard": "a sizing search picks each fleet size from the results of the last, so it cannot be split " +
		"into shards; run it on one machine (it uses every core; see --workers)"},
	"plan": {"shard": "plan's search picks what to simulate from the results so far and is not sharded yet; " +
		"run it on one machine (it uses every core; see --workers)"},
}

// printHelp writes a command's help and its flags to w.
func printHelp(w io.Writer, fs *flag.FlagSet, help string) {
	fmt.Fprint(w, help)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nflags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// flagsSet lists the flags given on the command line, by name.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
