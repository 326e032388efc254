package plot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/results"
)

// inputs are the results files Dir reads, in the order it reports them.
var inputs = []string{"summary.json", results.CDFFile.Name, results.TimeseriesFile.Name, results.SweepFile.Name,
	results.SizeFile.Name, results.SizeSearchFile.Name, results.FailuresFile.Name,
	results.TrainingTimelineFile.Name, results.ETTRFile.Name, results.CalibrationFile.Name, results.ReplicationsFile.Name, sizeMixFile,
	results.PlanFile.Name}

// Dir draws every figure whose results exist in the run directory dir into
// dir/plots/ and returns the paths written, sorted:
//
//	cdf.csv                      → ttft_cdf, tpot_cdf, itl_cdf, e2e_cdf and
//	                               their tails ttft_ccdf, … e2e_ccdf
//	                               (metrics present)
//	timeseries.csv               → kv_utilisation, load_timeseries,
//	                               arrivals_timeseries,
//	                               availability_timeseries, usd_per_hour
//	                               (provisioned replicas × each arm's
//	                               price from its summary.json; split by
//	                               group and tier for a fleet of groups)
//	sweep.csv                    → sweep_ttft_p99, sweep_goodput,
//	                               cost_vs_slo (cost and attainment columns)
//	replications.csv, kv_tiers.* → kv_tiers (stacked share of prompt tokens by tier)
//	size.csv, size_search.csv    → size_cost, size_ttft, and
//	                               cost_vs_slo (one point per size tried,
//	                               from size_search.csv's slo_attainment)
//	size_mix.csv                 → cost_vs_slo (one point per mix tried)
//	plan.csv                     → plan_frontier (fleetsim plan: every
//	                               configuration sized, its Pareto
//	                               frontier and the chosen fleet)
//	failures.csv                 → failures_timeline
//	ettr.csv                     → ettr
//	training_timeline.csv        → training_timeline (one run), or
//	                               training_timeline_ARM per arm
//	calibration.csv              → calibration (output tokens/s),
//	                               calibration_ttft, calibration_tpot
//	                               (metrics present)
//	replications.csv             → ab_quantiles and cost_vs_slo (an A/B
//	                               run: arms other than "", and no
//	                               sweep.csv, size.csv, size_search.csv or
//	                               size_mix.csv)
//
// summary.json, when present (else the first arms/NAME/summary.json, as in
// an A/B or sweep directory), gives the titles their scenario name and the
// SLO lines their thresholds; without one (a `fleetsim calibrate`
// directory) the titles have no scenario name and there are no SLO lines.
// A missing file, or a missing optional column, skips the figures that
// need it. Every input is read and checked before anything is written: a
// malformed file is an error naming the file and line, and so is a
// directory holding nothing to draw; both match ErrBadInput.
func Dir(dir string) ([]string, error) {
	figs, err := dirFigures(dir)
	if err != nil {
		return nil, err
	}
	return Write(dir, figs...)
}

// Check reads and checks every input in dir and builds the figures Dir
// would draw, without drawing them, and returns their names: a fast test
// that Dir will accept the directory.
func Check(dir string) ([]string, error) {
	figs, err := dirFigures(dir)
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	return names, err
}

// dirFigures is Dir's figures of dir, built but not drawn.
func dirFigures(dir string) ([]Figure, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, badInput("%v", err)
	}
	if !st.IsDir() {
		return nil, badInput("%s is not a directory", dir)
	}
	meta, err := dirMeta(dir)
	if err != nil {
		return nil, err
	}
	tables := map[string]*table{}
	var found []string
	if _, err := os.Lstat(filepath.Join(dir, "summary.json")); err == nil {
		found = append(found, "summary.json")
	}
	for _, name := range inputs[1:] {
		t, ok, err := readTable(dir, name)
		if err != nil {
			return nil, err
		}
		if ok {
			tables[name] = t
			found = append(found, name)
		}
	}
	if len(found) == 0 {
		return nil, badInput("no results to plot in %s: expected %s", dir, strings.Join(inputs, ", "))
	}
	figs, err := figures(meta, tables)
	if err != nil {
		return nil, err
	}
	if len(figs) == 0 {
		return nil, badInput("nothing to plot in %s: %s hold no series (expected rows in %s)", dir, strings.Join(found, ", "), strings.Join(inputs[1:], ", "))
	}
	return figs, nil
}

// figures parses the tables present and builds every figure they allow.
func figures(m Meta, tables map[string]*table) ([]Figure, error) {
	var figs []Figure
	add := func(f Figure, err error) error {
		if err != nil {
			return err
		}
		figs = append(figs, f)
		return nil
	}
	if t := tables[results.CDFFile.Name]; t != nil {
		pts, err := readCDF(t)
		if err != nil {
			return nil, err
		}
		for _, metric := range []string{"ttft", "tpot", "itl", "e2e"} {
			for _, p := range pts {
				if p.Metric == metric {
					if err := add(CDF(m, metric, pts)); err != nil {
						return nil, err
					}
					if err := add(CCDF(m, metric, pts)); err != nil {
						return nil, err
					}
					break
				}
			}
		}
	}
	if t := tables[results.TimeseriesFile.Name]; t != nil {
		pts, err := readTimeseries(t)
		if err != nil {
			return nil, err
		}
		delete(tables, results.TimeseriesFile.Name) // read: free it
		if len(pts) > 0 && (t.has(results.KVUsedFrac) || t.has(results.KVCachedFrac)) {
			if err := add(KVUtilisation(m, pts)); err != nil {
				return nil, err
			}
		}
		if len(pts) > 0 && (t.has(results.InFlight) || t.has(results.Waiting)) {
			if err := add(Load(m, pts)); err != nil {
				return nil, err
			}
		}
		if len(pts) > 0 && (t.has(results.ArrivalsPerS) || t.has(results.CompletionsPerS)) {
			if err := add(Arrivals(m, pts)); err != nil {
				return nil, err
			}
		}
		if len(pts) > 0 && t.has(results.AvailableReplicas) {
			if err := add(Availability(m, pts)); err != nil {
				return nil, err
			}
		}
		if len(pts) > 0 && t.has(results.USDPerHour) {
			if err := add(CostTimeline(m, pts)); err != nil {
				return nil, err
			}
		}
	}
	if t := tables[results.SweepFile.Name]; t != nil {
		s, err := readSweep(t)
		if err != nil {
			return nil, err
		}
		if len(s.Rows) > 0 && t.has(results.TTFTP99Ms) {
			if err := add(SweepTTFT(m, s)); err != nil {
				return nil, err
			}
		}
		if len(s.Rows) > 0 && (t.has(results.GoodputRPS) || t.has(results.ThroughputRPS)) {
			if err := add(SweepGoodput(m, s)); err != nil {
				return nil, err
			}
		}
		if pts := sweepCostSLO(s); t.has(results.USDPerMonth, results.SLOAttainment) && hasCostSLO(pts) {
			if err := add(CostVsSLO(m, pts)); err != nil {
				return nil, err
			}
		}
	}
	if t := tables[results.PlanFile.Name]; t != nil {
		rows, err := readPlan(t)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			if err := add(PlanFrontier(m, rows)); err != nil {
				return nil, err
			}
		}
	}
	var rows []SizeRow
	var search []SearchPoint
	has := func(col string) bool {
		for _, name := range []string{results.SizeFile.Name, results.SizeSearchFile.Name} {
			if t := tables[name]; t != nil && t.len() > 0 && t.has(col) {
				return true
			}
		}
		return false
	}
	if t := tables[results.SizeFile.Name]; t != nil {
		var err error
		if rows, err = readSize(t); err != nil {
			return nil, err
		}
	}
	if t := tables[results.SizeSearchFile.Name]; t != nil {
		var err error
		if search, err = readSearch(t); err != nil {
			return nil, err
		}
	}
	if has(results.USDPerMonth) {
		if err := add(SizeCost(m, rows, search)); err != nil {
			return nil, err
		}
	}
	if has(results.TTFTP99Ms) {
		if err := add(SizeTTFT(m, rows, search)); err != nil {
			return nil, err
		}
	}
	if t := tables[results.SizeSearchFile.Name]; t != nil && t.has(results.USDPerMonth, results.SLOAttainment) && hasCostSLO(sizeCostSLO(search, rows)) {
		if err := add(CostVsSLO(m, sizeCostSLO(search, rows))); err != nil {
			return nil, err
		}
	}
	if t := tables[sizeMixFile]; t != nil {
		pts, err := readSizeMix(t)
		if err != nil {
			return nil, err
		}
		if hasCostSLO(pts) {
			if err := add(CostVsSLO(m, pts)); err != nil {
				return nil, err
			}
		}
	}
	if t := tables[results.FailuresFile.Name]; t != nil {
		ev, err := readFailures(t)
		if err != nil {
			return nil, err
		}
		if len(ev) > 0 {
			if err := add(FailuresTimeline(m, ev)); err != nil {
				return nil, err
			}
		}
	}
	if t := tables[results.TrainingTimelineFile.Name]; t != nil {
		pts, err := readTrainingTimeline(t)
		if err != nil {
			return nil, err
		}
		var arms []string
		for _, q := range pts {
			if !slices.Contains(arms, q.Arm) {
				arms = append(arms, q.Arm)
			}
		}
		for _, arm := range arms {
			if err := add(TrainingTimeline(m, arm, pts)); err != nil {
				return nil, err
			}
		}
	}
	if t := tables[results.ETTRFile.Name]; t != nil {
		pts, err := readETTR(t)
		if err != nil {
			return nil, err
		}
		if len(pts.Points) > 0 {
			if err := add(ETTR(m, pts)); err != nil {
				return nil, err
			}
		}
	}
	if t := tables[results.CalibrationFile.Name]; t != nil {
		pts, err := readCalibration(t)
		if err != nil {
			return nil, err
		}
		for _, metric := range CalibrationMetrics {
			for _, p := range pts {
				if p.Metric == metric {
					if err := add(Calibration(m, metric, pts)); err != nil {
						return nil, err
					}
					break
				}
			}
		}
	}
	if t := tables[results.ReplicationsFile.Name]; t != nil && tables[results.SweepFile.Name] == nil &&
		tables[results.SizeFile.Name] == nil && tables[results.SizeSearchFile.Name] == nil && tables[sizeMixFile] == nil {
		qs, err := readABQuantiles(t)
		if err != nil {
			return nil, err
		}
		ab := false
		for _, q := range qs {
			ab = ab || q.Arm != ""
		}
		if ab {
			if err := add(ABQuantilesFigure(m, qs)); err != nil {
				return nil, err
			}
		}
		pts, err := readCostSLO(t)
		if err != nil {
			return nil, err
		}
		named := false // an arm other than "": an A/B directory
		for _, p := range pts {
			named = named || p.Label != ""
		}
		if named && hasCostSLO(pts) {
			if err := add(CostVsSLO(m, pts)); err != nil {
				return nil, err
			}
		}
	}
	if t := tables[results.ReplicationsFile.Name]; t != nil {
		shares, err := readKVTiers(t)
		if err != nil {
			return nil, err
		}
		if len(shares) > 0 {
			if err := add(KVTiersFigure(m, shares)); err != nil {
				return nil, err
			}
		}
	}
	return figs, nil
}

// dirMeta reads dir/summary.json or, in an A/B or sweep directory that has
// none at the top, the first arms/NAME/summary.json in name order (the arms
// share the scenario name and SLO).
func dirMeta(dir string) (Meta, error) {
	m, ok, err := readMeta(dir, "summary.json")
	if ok || err != nil {
		return m, err
	}
	ents, err := os.ReadDir(filepath.Join(dir, "arms"))
	if err != nil {
		return Meta{}, nil // no arms: no summary
	}
	for _, e := range ents { // sorted by name
		if !e.IsDir() {
			continue
		}
		m, ok, err := readMeta(dir, filepath.Join("arms", e.Name(), "summary.json"))
		if ok || err != nil {
			return m, err
		}
	}
	return Meta{}, nil
}
