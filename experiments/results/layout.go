package results

import (
	"slices"
	"strings"
)

// The layout of a run directory: every path fleetsim writes in one. A run
// directory is replaced by a new run only when everything in it is one of
// these (experiments/report.NewRunDir checks it recursively); anything
// else is a user's and is never moved or deleted.
//
//	summary.json, summary.md, size_mix.csv, report.html (fleetsim report),
//	best.toml (fleetsim plan) and the CSV files of Files
//	                 (columns.csv, the data dictionary, in every one)
//	                 (but calibration.csv, which calibrate writes into its
//	                 own --out): regular files at the top
//	arms/NAME/summary.json
//	                 one directory per arm (A/B), NAME an arm name, or
//	                 sweep point (every sweep, even of one point: its
//	                 KEY=VALUE pairs joined by commas, ArmDir)
//	plots/FIGURE.png, plots/FIGURE.svg
//	                 the figures of fleetsim plot, FIGURE one of
//	                 PlotFigures or training_timeline_ARM

// RunDirFiles are the regular files at the top of a run directory.
var RunDirFiles = func() []string {
	names := []string{"summary.json", "summary.md", "size_mix.csv", "report.html", PlanBestFile}
	for _, f := range Files {
		if f != CalibrationFile {
			names = append(names, f.Name)
		}
	}
	slices.Sort(names)
	return names
}()

// PlanBestFile is the winning deployment fleetsim plan writes as a
// scenario file beside plan.csv.
const PlanBestFile = "best.toml"

// RunDirDirs are the directories at the top of a run directory.
const (
	ArmsDir  = "arms"
	PlotsDir = "plots"
)

// ArmDir is the directory under arms/ of the arm named name: the name,
// with a sweep point's spaces between its KEY=VALUE pairs made commas
// (which no point's value holds), so that no directory name has a space:
// arms/cluster.replicas=4,workload.arrival.rate_per_s=20.
func ArmDir(name string) string { return strings.ReplaceAll(name, " ", ",") }

// ArmFiles are the files of an arm's directory under arms/.
var ArmFiles = []string{"summary.json"}

// PlotFigures are the names (without extension) of the figures fleetsim
// plot writes under plots/, but a training arm's timeline
// (PlotTrainingArmPrefix followed by the arm's name).
var PlotFigures = []string{
	"ab_quantiles", "arrivals_timeseries", "availability_timeseries",
	"calibration", "calibration_e2e", "calibration_itl", "calibration_tpot", "calibration_ttft",
	"cost_vs_slo", "e2e_ccdf", "e2e_cdf", "ettr", "failures_timeline", "itl_ccdf", "itl_cdf",
	"kv_tiers", "kv_utilisation", "load_timeseries", "plan_frontier", "size_cost", "size_ttft",
	"sweep_goodput", "sweep_ttft_p99", "tpot_ccdf", "tpot_cdf", "training_timeline",
	"ttft_ccdf", "ttft_cdf", "usd_per_hour",
}

// PlotTrainingArmPrefix starts the name of an arm's training timeline.
const PlotTrainingArmPrefix = "training_timeline_"

// PlotFormats are the extensions of the figures' files.
var PlotFormats = []string{"png", "svg"}

// IsPlotFile says whether name (a base name) is a file fleetsim plot
// writes under plots/.
func IsPlotFile(name string) bool {
	stem, ext, ok := cutExt(name)
	if !ok || !slices.Contains(PlotFormats, ext) {
		return false
	}
	if slices.Contains(PlotFigures, stem) {
		return true
	}
	arm, ok := strings.CutPrefix(stem, PlotTrainingArmPrefix)
	return ok && arm != "" && !strings.ContainsAny(arm, "/\\") && !strings.HasPrefix(arm, ".")
}

// cutExt splits name at its last dot.
func cutExt(name string) (stem, ext string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}
