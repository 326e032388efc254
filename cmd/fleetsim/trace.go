package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/workloads"
)

// traceStatsJSON is `fleetsim trace stats --json`.
type traceStatsJSON struct {
	File                   string      `json:"file"`
	Format                 string      `json:"format"`
	Rows                   int64       `json:"rows"`
	SpanS                  float64     `json:"span_s"`
	RatePerS               float64     `json:"rate_per_s"`
	Input                  lengthsJSON `json:"input_tokens"`
	Output                 lengthsJSON `json:"output_tokens"`
	InputOutputRatio       float64     `json:"input_output_ratio"`
	ZeroOutputs            int64       `json:"zero_outputs"`
	PrefixReuseTokenWeight *float64    `json:"prefix_reuse_token_weighted,omitempty"`
	PrefixReuseBlockWeight *float64    `json:"prefix_reuse_block_weighted,omitempty"`
}

type lengthsJSON struct {
	Mean float64 `json:"mean"`
	P50  int64   `json:"p50"`
	P99  int64   `json:"p99"`
	Min  int64   `json:"min"`
	Max  int64   `json:"max"`
}

const traceHelp = `usage: fleetsim trace stats FILE [--format mooncake|azure] [--json]

Summarise a request trace: rows, span and rate, input and output lengths,
and prefix reuse (an unbounded cache) where the trace has block hashes.
`

func cmdTrace(args []string, stdout, _ io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		args = []string{"stats", "--help"}
	}
	if len(args) == 0 || args[0] != "stats" {
		return usagef("usage: fleetsim trace stats FILE [--format mooncake|azure] [--json]")
	}
	fs := flag.NewFlagSet("trace stats", flag.ContinueOnError)
	format := fs.String("format", "", "trace format: mooncake or azure (default: from the extension)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args[1:], stdout, traceHelp)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: fleetsim trace stats FILE [--format mooncake|azure] [--json]")
	}
	st, err := traceStats(pos[0], *format)
	if err != nil {
		return usageError{err}
	}
	if *asJSON {
		out := traceStatsJSON{File: pos[0], Format: st.Format, Rows: st.Rows, SpanS: r6(st.SpanS), RatePerS: r6(st.RatePerS),
			Input: lengths(st.Input), Output: lengths(st.Output), InputOutputRatio: r6(st.InputOutputRatio),
			ZeroOutputs: st.ZeroOutputs}
		if st.HasPrefix {
			a, b := r6(st.PrefixReuseTokens), r6(st.PrefixReuseBlocks)
			out.PrefixReuseTokenWeight, out.PrefixReuseBlockWeight = &a, &b
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "trace        %s (%s)\n", pos[0], st.Format)
	fmt.Fprintf(stdout, "rows         %d over %.1f s (%.2f req/s)\n", st.Rows, st.SpanS, st.RatePerS)
	fmt.Fprintf(stdout, "%-12s %10s %8s %8s %8s %8s\n", "tokens", "mean", "p50", "p99", "min", "max")
	for _, row := range []struct {
		n string
		l workloads.LengthStats
	}{{"input", st.Input}, {"output", st.Output}} {
		fmt.Fprintf(stdout, "%-12s %10.1f %8d %8d %8d %8d\n", row.n, row.l.Mean, row.l.P50, row.l.P99, row.l.Min, row.l.Max)
	}
	fmt.Fprintf(stdout, "input:output %.1f:1\n", st.InputOutputRatio)
	if st.ZeroOutputs > 0 {
		fmt.Fprintf(stdout, "zero-length outputs %d (replayed as 1 token)\n", st.ZeroOutputs)
	}
	if st.HasPrefix {
		fmt.Fprintf(stdout, "prefix reuse %.1f%% token-weighted, %.1f%% block-weighted (unbounded cache)\n",
			100*st.PrefixReuseTokens, 100*st.PrefixReuseBlocks)
	}
	return nil
}

func lengths(l workloads.LengthStats) lengthsJSON {
	return lengthsJSON{Mean: r6(l.Mean), P50: l.P50, P99: l.P99, Min: l.Min, Max: l.Max}
}

func r6(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return math.Round(x*1e6) / 1e6
}

// traceStats is workloads.TraceStats of a file, or of a trace shipped in
// the binary ("builtin:NAME", as a scenario's workload.trace.path names it).
func traceStats(path, format string) (workloads.Stats, error) {
	if fsys, inner, ok := scenario.BuiltinTrace(path); ok {
		if _, err := fs.Stat(fsys, inner); err != nil {
			names, _ := fs.Glob(fsys, "traces/*.*")
			for i, n := range names {
				names[i] = scenario.BuiltinTracePrefix + strings.TrimPrefix(n, "traces/")
			}
			return workloads.Stats{}, fmt.Errorf("no built-in trace %q; built-ins: %s", path, strings.Join(names, ", "))
		}
		return workloads.TraceStatsFS(fsys, inner, format)
	}
	return workloads.TraceStats(path, format)
}
