package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
)

// --json: a command's results as one JSON document on stdout and nothing
// else; the run directory is written as without it. The documents reuse
// what the run directory holds (summary.json, ab.csv, sweep.csv, size.csv),
// so the two never disagree.

// finishRun writes a run's directory and prints its table, or with asJSON
// its summary.json.
func finishRun(dir string, arm *report.ArmResult, stdout io.Writer, extra string, asJSON bool) error {
	if !asJSON {
		return experiments.FinishRun(dir, arm, stdout, extra)
	}
	if err := experiments.FinishRun(dir, arm, io.Discard, extra); err != nil {
		return err
	}
	js, err := arm.SummaryJSON()
	if err != nil {
		return err
	}
	_, err = stdout.Write(js)
	return err
}

// abJSON is `fleetsim ab --json`: every arm's summary.json by arm name, and
// the paired differences of every other arm against the baseline (the
// rows of ab.csv).
type abJSON struct {
	Baseline string                     `json:"baseline"`
	ArmNames []string                   `json:"arm_names"`
	Arms     map[string]json.RawMessage `json:"arms"`
	Diffs    []map[string]any           `json:"diffs"`
}

// finishAB writes an A/B's directory and prints its report, or with asJSON
// an abJSON.
func finishAB(dir string, res *experiments.ABResult, stdout io.Writer, asJSON bool) error {
	if !asJSON {
		return experiments.FinishAB(dir, res, stdout)
	}
	if err := experiments.FinishAB(dir, res, io.Discard); err != nil {
		return err
	}
	out := abJSON{Baseline: res.Arms[0].Name, Arms: map[string]json.RawMessage{}}
	for _, a := range res.Arms {
		js, err := a.SummaryJSON()
		if err != nil {
			return err
		}
		out.ArmNames = append(out.ArmNames, a.Name)
		out.Arms[a.Name] = js
	}
	var err error
	if out.Diffs, err = csvRows(res.ABCSV(), "metric", "arm_a", "arm_b"); err != nil {
		return err
	}
	return printJSON(stdout, out)
}

// sweepJSON is `fleetsim sweep --json`: the rows of sweep.csv (ettr.csv for
// a training sweep), one object per grid point keyed by column.
type sweepJSON struct {
	Scenario     string           `json:"scenario"`
	Replications int              `json:"replications"`
	Rows         []map[string]any `json:"rows"`
}

// finishSweep writes a sweep's directory and prints its table, or with
// asJSON a sweepJSON.
func finishSweep(dir, name string, reps int, res *experiments.SweepResult, stdout io.Writer, asJSON bool) error {
	if !asJSON {
		return experiments.FinishSweep(dir, name, reps, res, stdout)
	}
	if err := experiments.FinishSweep(dir, name, reps, res, io.Discard); err != nil {
		return err
	}
	data := res.CSV()
	if res.Training() {
		data = res.ETTRCSV()
	}
	rows, err := csvRows(data)
	if err != nil {
		return err
	}
	return printJSON(stdout, sweepJSON{Scenario: name, Replications: reps, Rows: rows})
}

// sizeJSON is `fleetsim size --json`: N, the rows of size.csv (N without
// failures, N, N+1, N+2) and of size_search.csv (every size tried).
type sizeJSON struct {
	Scenario   string           `json:"scenario"`
	N          int              `json:"n"`
	Confidence float64          `json:"confidence"`
	Rows       []map[string]any `json:"rows"`
	Search     []map[string]any `json:"search"`
}

func newSizeJSON(name string, res *experiments.SizeResult) (sizeJSON, error) {
	out := sizeJSON{Scenario: name, N: res.N, Confidence: res.Confidence}
	var err error
	if out.Rows, err = csvRows(res.CSV(), "row"); err != nil {
		return out, err
	}
	out.Search, err = csvRows(res.SearchCSV())
	return out, err
}

// printJSON writes v to w as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// csvRows turns a CSV with a header into one object per row, keyed by
// column: an empty cell is null, true and false are booleans, a finite
// number is a number, and anything else, or any cell of the columns named
// in text, is a string.
func csvRows(data []byte, text ...string) ([]map[string]any, error) {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, err
	}
	isText := map[string]bool{}
	for _, t := range text {
		isText[t] = true
	}
	rows := []map[string]any{}
	for _, rec := range recs[min(1, len(recs)):] {
		row := map[string]any{}
		for i, col := range recs[0] {
			row[col] = cell(rec[i], isText[col])
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func cell(s string, text bool) any {
	switch {
	case text:
		return s
	case s == "":
		return nil
	case s == "true" || s == "false":
		return s == "true"
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	return s
}
