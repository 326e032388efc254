package results

import (
	"slices"
	"strings"
)

// The data dictionary: columns.csv, written into every run directory,
// says what each of its files holds and what each column of its CSV files
// means, with units, from this schema: the fixed columns as declared, the
// dynamic ones (swept keys, summary.json keys, per-group and per-target
// columns) by the file's rule for them.

// Dictionary column names.
const (
	DictFile    = "file"
	DictColumn  = "column"
	DictUnits   = "units"
	DictMeaning = "meaning"
)

// ColumnsFile is the data dictionary itself.
var ColumnsFile = &File{Name: "columns.csv", Meaning: "the data dictionary: one row per file of the run directory (column empty: what the file holds, a row of it for a CSV file), then one per column of each CSV file, in header order",
	Columns: []Column{
		{DictFile, "", "the file, relative to the run directory"},
		{DictColumn, "", "the column's header name; empty on the file's own row"},
		{DictUnits, "", "the column's unit (ms, s, req/s, fraction, USD, ...); empty for a label, or where the column's name says it (see docs/outputs.md)"},
		{DictMeaning, "", "what the file or the column holds"},
	}}

// otherFiles are the run directory's files that are not CSV files of
// this schema, and what they hold.
var otherFiles = map[string]string{
	"summary.json":              "the run's metrics (latencies in ms, rates per simulated second, money in USD; docs/outputs.md lists every key); with several replications each number is the mean, with ci95 holding the 95% CI half-widths",
	"summary.md":                "the results as Markdown tables, and each arm's terminal report",
	"size_mix.csv":              "fleetsim size on a fleet of groups: one row per mix of group sizes tried, ending with slo_attainment and slo_attainment_ci95",
	ArmsDir + "/*/summary.json": "one summary.json per A/B arm or sweep point (arms/NAME, a sweep point's NAME its KEY=VALUE pairs joined by commas)",
}

// Dictionary is columns.csv for a run directory holding files (paths
// relative to it; arms/NAME/summary.json counted once as arms/*/...) whose
// CSV files have the headers given (by file name). Files are listed in
// sorted order, columns.csv among them.
func Dictionary(files []string, headers map[string][]string) []byte {
	t := NewTable(ColumnsFile, nil, nil)
	names := slices.Clone(files)
	if !slices.Contains(names, ColumnsFile.Name) {
		names = append(names, ColumnsFile.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, n := range names {
		f, ok := Lookup(n)
		if !ok {
			t.Row(n, "", "", otherFiles[n])
			continue
		}
		t.Row(n, "", "", f.Meaning)
		h := headers[n]
		if n == ColumnsFile.Name {
			h = f.Names()
		}
		lead := f.Leading(h)
		for i, c := range h {
			unit, meaning := f.describe(c, i < len(lead))
			t.Row(n, c, unit, meaning)
		}
	}
	return t.Bytes()
}

// describe is column c's unit and meaning in f; before says c comes
// before the fixed columns.
func (f *File) describe(c string, before bool) (string, string) {
	for _, col := range append(slices.Clone(f.Columns), f.Optional...) {
		if col.Name == c && !before {
			return col.Unit, col.Meaning
		}
	}
	if base, ok := strings.CutSuffix(c, "_ci95"); ok {
		unit, _ := f.describe(base, before)
		return unit, "the 95% CI half-width of " + base + " (Student t over replications); empty from one replication"
	}
	rule := f.After
	if before {
		rule = f.Before
	}
	if f == ReplicationsFile {
		return keyUnit(c), "the replication's value of summary.json key " + c + " (docs/outputs.md); " + rule
	}
	if f == SizeFile {
		if strings.HasSuffix(c, "_ms") {
			return "ms", "mean over replications of the --slo target's metric, " + strings.TrimSuffix(strings.TrimPrefix(c, "target_"), "_ms")
		}
		return "fraction", "mean over replications of the --slo target's metric, " + strings.TrimSuffix(strings.TrimPrefix(c, "target_"), "_frac")
	}
	if before {
		return "", "a swept scenario key: " + rule
	}
	return keyUnit(c), rule
}

// keyUnit is the unit of a dynamic column named by a summary.json key or
// a per-group column, from its name; "" when the name does not say.
func keyUnit(k string) string {
	last := k[strings.LastIndexByte(k, '.')+1:]
	switch {
	case strings.Contains(k, "_ms.") && (last == "n"):
		return "count"
	case strings.Contains(k, "_ms.") || strings.HasSuffix(last, "_ms"):
		return "ms"
	case strings.HasPrefix(k, USDPerHour+".") || strings.HasPrefix(k, SpotUSDPerHour+"."):
		return "USD/h"
	case strings.HasPrefix(k, ProvisionedReplicas+".") || strings.HasPrefix(k, ProvisionedSpotReplicas+"."):
		return "replicas"
	case strings.HasSuffix(last, "per_month"):
		return "USD/month"
	case strings.Contains(last, "usd"):
		return "USD"
	case strings.HasSuffix(last, "_per_s"):
		return "per s"
	case strings.HasSuffix(last, "_s"):
		return "s"
	case strings.HasSuffix(last, "_hours"), strings.HasSuffix(last, "_h"):
		return "h"
	case strings.HasSuffix(last, "_kwh"):
		return "kWh"
	case strings.HasSuffix(last, "_bytes"):
		return "bytes"
	case strings.HasSuffix(last, "rate"), strings.HasSuffix(last, "fraction"), strings.HasSuffix(last, "_frac"),
		last == "utilization_mean", last == "cached_fraction_mean", last == "fragmentation_mean",
		last == "availability", last == "slo_attainment", last == "mfu", last == "ettr":
		return "fraction"
	}
	return ""
}
