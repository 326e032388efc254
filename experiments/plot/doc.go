// Package plot draws the figures of a run directory from its recorded
// results: it reads summary.json and the CSV files that runs, A/B
// comparisons, sweeps and sizings write, and renders each figure as
// plots/NAME.png and plots/NAME.svg with gonum/plot. It never runs a
// simulation (STYLE.md, practice 14): `fleetsim plot DIR` redraws from saved
// results, and the experiments that write those results may call the same
// functions directly on their in-memory rows.
//
// How to read it:
//
//   - dir.go: Dir, the entry point, which maps each results file to the
//     figures it feeds and skips those whose file or columns are missing.
//   - data.go: the row types (CDFPoint, TimePoint, Sweep, SizeRow,
//     SearchPoint, FailureEvent, ETTRPoint, CalibrationPoint, Meta) and the strict readers of
//     the files, whose errors name FILE:LINE and match ErrBadInput.
//   - figures.go: one builder per figure (CDF, CCDF, KVUtilisation, Load,
//     Arrivals, Availability, CostTimeline and CostVsSLO (cost.go),
//     SweepTTFT, SweepGoodput, SizeCost, SizeTTFT, FailuresTimeline, ETTR,
//     Calibration: measured vs predicted from `fleetsim calibrate`),
//     each taking parsed rows and returning a Figure.
//   - render.go: Write, which renders figures in memory and writes each
//     file through a temporary file and a rename, and the tick and colour
//     choices shared by every figure.
//
// Every figure has a title (with the scenario name when summary.json gives
// one), axis labels with units, a legend to the right of the axes and, where
// one applies and is set, a dashed SLO line. Units: latencies in ms, time in
// simulated seconds (hours for failure timelines, minutes for checkpoint
// intervals), rates in requests per simulated second, money in USD. Output
// is deterministic: the same results give byte-identical PNG and SVG files.
package plot
