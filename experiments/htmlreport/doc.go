// Package htmlreport builds `fleetsim report DIR`: one self-contained HTML
// file from a run, A/B, sweep or size directory, for a planner to attach to
// a design review. It reads what the directory holds and never simulates:
//
//   - provenance: the scenario's name, mode and fleet, replications and
//     seeds, from each summary.json, and every file of the directory with
//     its size and SHA-256;
//   - headline results: one row per headline metric of summary.json, one
//     column per arm, mean ± 95% CI half-width (from its ci95);
//   - the comparison tables the directory holds (ab.csv, sweep.csv,
//     size.csv, size_search.csv, size_mix.csv, ettr.csv), cell for cell,
//     read by the reader fleetsim plot uses; an A/B's
//     ab.csv first as its headline metrics' rows;
//   - every figure fleetsim plot would draw, rendered in memory as SVG and
//     inlined;
//   - summary.md, the tables the command printed (an A/B's verdicts);
//   - every value of each summary.json, flattened to dotted keys;
//   - the scenario file when the directory holds one (scenario.toml) or
//     one is given (Options.Scenario, Options.ScenarioTOML).
//
// The page has no script, loads nothing (a Content-Security-Policy of
// default-src 'none' forbids it), uses inline CSS and system fonts, and is
// byte-identical for the same directory: it holds no time but the
// directory's own. Numbers are shown as summary.json writes them (Cell);
// every value cell carries data-arm and data-key attributes naming where
// it came from, which the browser test checks against summary.json.
package htmlreport
