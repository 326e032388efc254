package experiments

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// Finishing a command: writing its run directory and printing its report.
// The commands and `fleetsim merge` share these, so a sharded run merged
// writes exactly what one machine would have.

// FinishRun writes a plain run's directory and prints its table. extra
// names files the caller wrote there (", requests.csv").
func FinishRun(dir string, arm *report.ArmResult, w io.Writer, extra string) error {
	written, err := report.WriteRunDirFiles(dir, []*report.ArmResult{arm}, "", false)
	if err != nil {
		return err
	}
	shown := report.ShownDir(dir)
	if err := report.CommitStaged(dir); err != nil {
		return err
	}
	fmt.Fprint(w, arm.Table())
	fmt.Fprintf(w, "\nwrote %s (%s%s)\n", shown, strings.Join(written, ", "), extra)
	return nil
}

// FinishAB writes an A/B's directory and prints its report.
func FinishAB(dir string, res *ABResult, w io.Writer) error {
	text := res.Report()
	written, err := report.WriteRunDirFiles(dir, res.Arms, "## A/B\n\n"+res.Markdown(), true)
	if err != nil {
		return err
	}
	if err := report.WriteFileAtomic(filepath.Join(dir, results.ABFile.Name), res.ABCSV()); err != nil {
		return err
	}
	shown := report.ShownDir(dir)
	if err := report.CommitStaged(dir); err != nil {
		return err
	}
	fmt.Fprint(w, text)
	fmt.Fprintf(w, "\nwrote %s (%s, %s)\n", shown, results.ABFile.Name, strings.Join(written, ", "))
	return nil
}

// FinishSweep writes a sweep's directory and prints its table. Every
// point's summary.json is under arms/, even for one point.
func FinishSweep(dir, name string, reps int, res *SweepResult, w io.Writer) error {
	arms := make([]*report.ArmResult, len(res.Points))
	for i, p := range res.Points {
		arms[i] = p.Arm
	}
	table := res.Table()
	written, err := report.WriteRunDirFiles(dir, arms, "## Sweep\n\n"+res.Markdown(), true)
	if err != nil {
		return err
	}
	file, data := results.SweepFile.Name, res.CSV()
	if res.Training() {
		file, data = results.ETTRFile.Name, res.ETTRCSV() // the serving columns would be empty
	}
	if err := report.WriteFileAtomic(filepath.Join(dir, file), data); err != nil {
		return err
	}
	shown := report.ShownDir(dir)
	if err := report.CommitStaged(dir); err != nil {
		return err
	}
	fmt.Fprintf(w, "sweep of %s: %d points × %d replications\n\n%s\nwrote %s (%s, %s)\n",
		name, len(res.Points), reps, table, shown, file, strings.Join(written, ", "))
	return nil
}

// NewABResult compares every arm with the first.
func NewABResult(arms []*report.ArmResult) *ABResult {
	out := &ABResult{Arms: arms}
	for _, b := range arms[1:] {
		out.Diffs = append(out.Diffs, Paired(arms[0], b))
	}
	return out
}

// SizeVerdict judges one fleet size of a sizing search as the search does
// (the one-sided bound at confidence conf of each target's mean over the
// arm's replications) and says so for a progress report: "meets the SLO",
// or "misses" and each missed target's bound and limit.
func SizeVerdict(a *report.ArmResult, targets []scenario.Target, conf float64) (bool, string) {
	ok, bounds := meets(a, targets, conf)
	if ok {
		return true, "meets the SLO"
	}
	miss := &SizePoint{}
	var missed []scenario.Target
	for i, t := range targets {
		if t.Upper && !(bounds[i] <= t.Limit) || !t.Upper && !(bounds[i] >= t.Limit) {
			missed = append(missed, t)
			miss.Bounds = append(miss.Bounds, bounds[i])
		}
	}
	return false, "misses " + describeBounds(miss, missed)
}
