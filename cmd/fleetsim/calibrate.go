package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/experiments/calibrate"
	"github.com/fleetsim/fleetsim/experiments/plot"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/infile"
	"github.com/fleetsim/fleetsim/internal/tomlx"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
)

const calibrateUsage = `usage: fleetsim calibrate BENCH.csv | RESULT.json... [flags]

Fit an engine profile (the step model's efficiency constants) to measured
throughput and latency, by simulating every row with the real replica code
and least squares on log errors. Input: a CSV in the layout of
public-benchmarks.csv (model,gpu,tp,weights,kv_dtype,batching,isl,osl,
num_requests,max_seqs,output_tokens_per_s,ttft_ms,source); a CSV of
latency under load at fixed concurrency in the AIConfigurator "silicon"
layout (backend,model_path,system,precision,mode,isl,osl,batch_size,
tp_size,...,silicon_ttft_ms,silicon_tpot_ms: each row a closed loop of
batch_size clients, told apart by its header); or vLLM
benchmark_serving.py --save-result JSON files (give --gpu, --model, --tp).
Writes DIR/profile.toml (name it in a scenario: [cluster.replica.perf]
profile = "DIR/profile.toml"), DIR/calibration.csv and DIR/plots/calibration.*
`

// fitArgs is the command line that decides a fit: args without the flags
// that only say where and how much to write (--out, --quiet).
func fitArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		switch {
		case a == "quiet":
		case a == "out" && i+1 < len(args):
			i++
		case strings.HasPrefix(a, "out=") || strings.HasPrefix(a, "quiet="):
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// isSiliconCSV says whether the CSV at path has the silicon layout's
// header (ReadSilicon) rather than public-benchmarks.csv's (ReadCSV).
func isSiliconCSV(path string) (bool, error) {
	f, err := infile.Open(nil, path, infile.CalibrationCSV)
	if err != nil {
		return false, err
	}
	defer f.Close()
	header, err := csv.NewReader(io.LimitReader(f, 1<<16)).Read()
	if err != nil {
		return false, nil // ReadCSV reports it
	}
	return calibrate.IsSiliconHeader(header), nil
}

// spread puts the errors of the fitted cases (in order) at their places
// among all cases; the others are NaN.
func spread(fitted []calibrate.Errors, fit []bool) []calibrate.Errors {
	nan := calibrate.Errors{Throughput: math.NaN(), TTFT: math.NaN(), TPOT: math.NaN(), ITL: math.NaN(), E2E: math.NaN(),
		Pred: calibrate.Prediction{OutputTokensPerS: math.NaN(), TTFTMs: math.NaN(), TPOTMs: math.NaN(), ITLMs: math.NaN(), E2EMs: math.NaN()}}
	out := make([]calibrate.Errors, len(fit))
	j := 0
	for i := range fit {
		out[i] = nan
		if fit[i] {
			out[i] = fitted[j]
			j++
		}
	}
	return out
}

// printBreakdown prints the median absolute error of each metric by backend
// and kind (dense or mixture-of-experts): fitted, and where given K-fold
// (cv) and held out by group (cvBy).
func printBreakdown(w io.Writer, lines []calibrate.Line, cases []*calibrate.Case, cv, cvBy []calibrate.Errors, k int, by string) {
	idx := map[*calibrate.Case]int{}
	for i, c := range cases {
		idx[c] = i
	}
	type key struct{ backend, kind, metric string }
	var keys []key
	seen := map[key]bool{}
	for _, l := range lines {
		kk := key{l.Case.Row.Backend, l.Case.Kind(), l.Metric}
		if kk.backend == "" {
			kk.backend = "-"
		}
		if !seen[kk] {
			seen[kk] = true
			keys = append(keys, kk)
		}
	}
	if len(keys) < 2 {
		return
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.backend != b.backend {
			return a.backend < b.backend
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.metric < b.metric
	})
	pick := func(es []calibrate.Errors, metric string) func(calibrate.Line) float64 {
		return func(l calibrate.Line) float64 {
			e := es[idx[l.Case]]
			switch metric {
			case "ttft_ms":
				return e.TTFT
			case "tpot_ms":
				return e.TPOT
			case "itl_ms":
				return e.ITL
			case "e2e_ms":
				return e.E2E
			}
			return e.Throughput
		}
	}
	head := "backend  kind   metric                  rows  median |err|"
	if cv != nil {
		head += fmt.Sprintf("  %d-fold", k)
	}
	if cvBy != nil {
		head += fmt.Sprintf("  leave-one-%s-out", by)
	}
	fmt.Fprintln(w, head)
	for _, kk := range keys {
		keep := func(l calibrate.Line) bool {
			b := l.Case.Row.Backend
			if b == "" {
				b = "-"
			}
			return b == kk.backend && l.Case.Kind() == kk.kind && l.Metric == kk.metric
		}
		s := calibrate.Summarise(lines, keep, func(l calibrate.Line) float64 { return l.Error })
		fmt.Fprintf(w, "%-8s %-6s %-22s %5d  %11.1f%%", kk.backend, kk.kind, kk.metric, s.N, 100*s.Median)
		// Cross-validation predicts only the rows the fit saw: rows held
		// out of the whole fit (another backend, GPU) have no CV error.
		fitted := func(l calibrate.Line) bool { return l.Fit && keep(l) }
		if cv != nil {
			if c := calibrate.Summarise(lines, fitted, pick(cv, kk.metric)); c.N > 0 {
				fmt.Fprintf(w, "  %6.1f%%", 100*c.Median)
			} else {
				fmt.Fprintf(w, "  %7s", "—")
			}
		}
		if cvBy != nil {
			if c := calibrate.Summarise(lines, fitted, pick(cvBy, kk.metric)); c.N > 0 {
				fmt.Fprintf(w, "  %15.1f%%", 100*c.Median)
			} else {
				fmt.Fprintf(w, "  %16s", "—")
			}
		}
		fmt.Fprintln(w)
	}
}

func cmdCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	modelsFile := fs.String("models", "", "TOML file of [[models]] (and [[gpus]]) the rows name beyond the built-in catalog")
	out := fs.String("out", filepath.Join("fleetsim-out", "calibrate"), "output directory")
	start := fs.String("profile", hw.DefaultProfile, "profile to start from (built-in name or file); with --eval-only, the profile to evaluate")
	name := fs.String("name", "calibrated", "name of the written profile")
	description := fs.String("description", "", "description of the written profile (default: what it was fitted from)")
	holdout := fs.Int("holdout", 0, "K-fold cross-validation: fit K more times, each without every K-th row, and report the held-out errors (0: none)")
	var train, params multiFlag
	fs.Var(&train, "train", "fit only rows matching KEY=V1,V2 (model, gpu, tp, weights, kv_dtype, batching, backend, kind; repeatable: every key must match); the others are predicted and reported as held out")
	fs.Var(&params, "param", "a profile constant to fit (repeatable; default: those the rows constrain)")
	evalOnly := fs.Bool("eval-only", false, "fit nothing: report --profile's error on every row")
	maxSeqs := fs.Int("max-seqs", 0, "batch cap for rows that state none (default 2048, TensorRT-LLM's max_batch_size; use 256 for vLLM)")
	maxTokens := fs.Int("max-batched-tokens", 0, "step token budget (default 8192)")
	kvAdmit := fs.String("kv-admission", "", "KV admission of inflight rows: full (TensorRT-LLM's GUARANTEED_NO_EVICT) or prompt (vLLM, SGLang); default by the row's backend, full when it names none")
	skip := fs.Bool("skip-unrunnable", false, "leave out (and count) rows the simulator cannot run instead of failing")
	twoStage := fs.Bool("two-stage", false, "fit the step constants on TPOT and throughput, then frontend_s and frontend_s_per_token on TTFT")
	robust := fs.Bool("robust", false, "fit a soft-L1 loss on the log errors, so outlying rows weigh linearly")
	holdoutBy := fs.String("holdout-by", "", "cross-validate by holding out whole groups: model, gpu, backend or kind (dense/moe); reported beside any --holdout")
	steadyOnly := fs.Bool("steady-only", false, "closed-loop rows of the silicon layout: predict the steady loop's mean TTFT only (default: the measured phase's first burst of all clients at once counted once in its 20 rounds, as aiperf runs it)")
	lockstep := fs.Bool("lockstep", false, "closed-loop rows: start every client at once (default: their first requests spread over one request's estimated time)")
	jitter := fs.Float64("client-jitter-s", 0, "closed-loop rows: clients' mean pause between a response and the next request, exponential (0: none)")
	metrics := fs.String("metrics", "", "fit only these measured metrics, comma-separated: output_tokens_per_s, ttft_ms, tpot_ms (default all)")
	rounds := fs.Int("rounds", 0, "closed-loop rows: measured requests per client after the warm-up (default 6)")
	iterations := fs.Int("iterations", 0, "closed-loop rows: fits, each on the step tallies of a simulation under the profile before (default 3)")
	gpuMem := fs.Float64("gpu-memory-utilization", 0, "fraction of HBM the engine takes (default 0.9)")
	gpu := fs.String("gpu", "", "JSON inputs: GPU of the benchmarked replica")
	model := fs.String("model", "", "JSON inputs: model")
	tp := fs.Int("tp", 1, "JSON inputs: tensor parallelism")
	weights := fs.String("weights", "bf16", "JSON inputs: weight precision")
	kvDType := fs.String("kv-dtype", "bf16", "JSON inputs: KV-cache precision")
	isl := fs.Int("isl", 0, "JSON inputs: input tokens per request, if the file lacks totals")
	osl := fs.Int("osl", 0, "JSON inputs: output tokens per request, if the file lacks totals")
	quiet := fs.Bool("quiet", false, "print only the summary")
	pos, err := parseFlags(fs, args, stdout, calibrateUsage)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("calibrate: no input; see fleetsim calibrate --help")
	}
	if *holdout < 0 || *holdout == 1 {
		return usagef("calibrate: --holdout must be 0 or at least 2, found %d", *holdout)
	}
	if *maxSeqs < 0 || *maxTokens < 0 || *gpuMem < 0 || *gpuMem > 1 {
		return usagef("calibrate: --max-seqs and --max-batched-tokens must be >= 0, --gpu-memory-utilization in [0, 1]")
	}
	filter, err := calibrate.ParseFilter(train)
	if err != nil {
		return usagef("calibrate: --train %v", err)
	}
	for _, p := range params {
		if _, ok := hw.LookupProfileParam(p); !ok {
			keys := make([]string, len(hw.ProfileParams))
			for i, q := range hw.ProfileParams {
				keys[i] = q.Key
			}
			return usagef("calibrate: --param %q: not a profile constant (%s)", p, strings.Join(keys, ", "))
		}
	}

	// Read everything and check it before anything is written.
	cat := hw.NewCatalog()
	if *modelsFile != "" {
		if err := loadCatalogFile(cat, *modelsFile); err != nil {
			return usageError{err}
		}
	}
	startPP, err := resolveProfile(cat, *start)
	if err != nil {
		return usageError{err}
	}
	var rows []calibrate.Row
	var csvs, jsons []string
	for _, p := range pos {
		if strings.HasSuffix(strings.ToLower(p), ".json") {
			jsons = append(jsons, p)
		} else {
			csvs = append(csvs, p)
		}
	}
	for _, p := range csvs {
		silicon, err := isSiliconCSV(p)
		if err != nil {
			return usageError{err}
		}
		if silicon {
			rs, skipped, err := calibrate.ReadSilicon(p)
			if err != nil {
				return usageError{err}
			}
			if len(skipped) > 0 {
				fmt.Fprintf(stderr, "calibrate: %s: left out %s\n", p, skipped)
			}
			rows = append(rows, rs...)
			continue
		}
		rs, err := calibrate.ReadCSV(p)
		if err != nil {
			return usageError{err}
		}
		rows = append(rows, rs...)
	}
	if len(jsons) > 0 {
		rs, err := calibrate.ReadVLLMJSON(jsons, calibrate.Row{GPU: *gpu, Model: *model, TP: *tp, Weights: *weights,
			KVDType: *kvDType, Batching: "inflight", ISL: *isl, OSL: *osl})
		if err != nil {
			return usageError{err}
		}
		rows = append(rows, rs...)
	}
	if *kvAdmit != "" && *kvAdmit != engine.KVAdmitFull && *kvAdmit != engine.KVAdmitPrompt {
		return usagef("calibrate: --kv-admission must be full or prompt, found %q", *kvAdmit)
	}
	if *rounds < 0 || *iterations < 0 {
		return usagef("calibrate: --rounds and --iterations must be >= 0")
	}
	if *holdoutBy != "" && !slices.Contains(calibrate.FilterKeys, *holdoutBy) {
		return usagef("calibrate: --holdout-by %q: one of %s", *holdoutBy, strings.Join(calibrate.FilterKeys, ", "))
	}
	if *steadyOnly {
		for i := range rows {
			rows[i].PhaseRounds = 0
		}
	}
	opt := calibrate.Options{MaxSeqs: *maxSeqs, MaxBatchedTokens: *maxTokens, GPUMemoryUtilization: *gpuMem, KVAdmission: *kvAdmit,
		SkipUnrunnable: *skip, Robust: *robust, Rounds: *rounds, Iterations: *iterations, ClientJitterS: *jitter, TwoStage: *twoStage, Lockstep: *lockstep}
	if len(params) > 0 {
		opt.Params = params
	}
	if *metrics != "" {
		for _, m := range strings.Split(*metrics, ",") {
			if !slices.Contains(calibrate.Metrics, m) {
				return usagef("calibrate: --metrics %q: each one of %s", *metrics, strings.Join(calibrate.Metrics, ", "))
			}
			opt.Metrics = append(opt.Metrics, m)
		}
	}
	t0 := time.Now()
	cases, skippedRows, err := calibrate.Prepare(rows, cat, startPP, opt)
	if err != nil {
		return usageError{err}
	}
	if len(skippedRows) > 0 {
		fmt.Fprintf(stderr, "calibrate: left out %d rows the simulator cannot run (--skip-unrunnable), the first: %s\n", len(skippedRows), skippedRows[0])
	}
	if len(cases) == 0 {
		return usagef("calibrate: no row left to fit or evaluate")
	}
	fit := make([]bool, len(cases))
	var trainCases []*calibrate.Case
	for i, c := range cases {
		fit[i] = filter.Match(c)
		if fit[i] {
			trainCases = append(trainCases, c)
		}
	}
	if len(trainCases) == 0 && !*evalOnly {
		return usagef("calibrate: no row matches --train %s", strings.Join(train, " "))
	}

	pp := startPP
	var res calibrate.Result
	if !*evalOnly {
		res, err = calibrate.Fit(trainCases, startPP, opt)
		if err != nil {
			return err
		}
		pp = res.Profile
		pp.Name = *name
		pp.Description = "fitted by fleetsim calibrate from profile " + startPP.Name
		if *description != "" {
			pp.Description = *description
		}
		pp.FittedOn = fmt.Sprintf("%d rows of %s", len(trainCases), strings.Join(pos, ", "))
		if len(train) > 0 {
			pp.FittedOn += " matching " + strings.Join(train, " ")
		}
		pp.FittedOn += ": fleetsim calibrate " + strings.Join(fitArgs(args), " ")
		pp.Domain = calibrate.Domain(trainCases)
	} else {
		for i := range fit {
			fit[i] = false
		}
	}
	var cv []calibrate.Errors
	if *holdout > 0 && !*evalOnly {
		cvOpt := opt
		cvOpt.Params = res.Params
		cvAll, err := calibrate.CrossValidate(trainCases, startPP, cvOpt, *holdout)
		if err != nil {
			return usageError{err}
		}
		cv = make([]calibrate.Errors, len(cases))
		j := 0
		nan := calibrate.Errors{Throughput: math.NaN(), TTFT: math.NaN(), TPOT: math.NaN(), ITL: math.NaN(), E2E: math.NaN(),
			Pred: calibrate.Prediction{OutputTokensPerS: math.NaN(), TTFTMs: math.NaN(), TPOTMs: math.NaN(), ITLMs: math.NaN(), E2EMs: math.NaN()}}
		for i := range cases {
			cv[i] = nan
			if fit[i] {
				cv[i] = cvAll[j]
				j++
			}
		}
	}
	var cvBy []calibrate.Errors
	if *holdoutBy != "" && !*evalOnly {
		cvOpt := opt
		cvOpt.Params = res.Params
		byAll, err := calibrate.CrossValidateBy(trainCases, startPP, cvOpt, *holdoutBy)
		if err != nil {
			return usageError{err}
		}
		cvBy = spread(byAll, fit)
	}
	lines, err := calibrate.Lines(cases, fit, pp, cv)
	if err != nil {
		return err
	}
	elapsed := time.Since(t0)

	if !*quiet {
		printCalibrationTable(stdout, lines, !*evalOnly)
	}
	all := func(calibrate.Line) bool { return true }
	fitted := func(l calibrate.Line) bool { return l.Fit }
	held := func(l calibrate.Line) bool { return !l.Fit }
	errOf := func(l calibrate.Line) float64 { return l.Error }
	if *evalOnly {
		s := calibrate.Summarise(lines, all, errOf)
		fmt.Fprintf(stdout, "profile %s on %d measurements: median error %.1f%%, worst %.1f%%\n", pp.Name, s.N, 100*s.Median, 100*s.Worst)
	} else {
		s := calibrate.Summarise(lines, fitted, errOf)
		fmt.Fprintf(stdout, "fitted %d constants (%s) on %d measurements in %d evaluations: median error %.1f%%, worst %.1f%%\n",
			len(res.Params), strings.Join(res.Params, ", "), s.N, res.Evals, 100*s.Median, 100*s.Worst)
		if h := calibrate.Summarise(lines, held, errOf); h.N > 0 {
			fmt.Fprintf(stdout, "held-out rows (not fitted): %d measurements, median error %.1f%%, worst %.1f%%\n", h.N, 100*h.Median, 100*h.Worst)
		}
		if cv != nil {
			c := calibrate.Summarise(lines, fitted, func(l calibrate.Line) float64 { return l.CVError })
			fmt.Fprintf(stdout, "%d-fold cross-validated: median error %.1f%%, worst %.1f%%\n", *holdout, 100*c.Median, 100*c.Worst)
		}
	}
	printBreakdown(stdout, lines, cases, cv, cvBy, *holdout, *holdoutBy)
	fmt.Fprintf(stderr, "calibrate: took %.1f s\n", elapsed.Seconds())

	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	written := []string{}
	if !*evalOnly {
		p := filepath.Join(*out, "profile.toml")
		if err := report.WriteFileAtomic(p, pp.MarshalTOML()); err != nil {
			return err
		}
		written = append(written, p)
	}
	p := filepath.Join(*out, "calibration.csv")
	if err := report.WriteFileAtomic(p, calibrate.CSV(lines)); err != nil {
		return err
	}
	written = append(written, p)
	plots, err := plot.Dir(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %d plot files in %s\n", strings.Join(written, ", "), len(plots), filepath.Join(*out, "plots"))
	return nil
}

func printCalibrationTable(w io.Writer, lines []calibrate.Line, roles bool) {
	cv := len(lines) > 0 && !math.IsNaN(lines[0].CVError)
	fmt.Fprintf(w, "%-28s %-12s %-5s %3s %-6s %13s %-19s %11s %11s %7s", "row", "model", "gpu", "tp", "batch", "isl/osl", "metric", "measured", "predicted", "error")
	if cv {
		fmt.Fprintf(w, " %8s", "cv error")
	}
	fmt.Fprintln(w)
	for _, l := range lines {
		r := l.Case.Row
		batch := r.Batching
		if r.MaxSeqs > 0 {
			batch = fmt.Sprintf("%s/%d", r.Batching, r.MaxSeqs)
		}
		where := r.Where()
		if len(where) > 28 {
			where = "…" + where[len(where)-27:]
		}
		mark := ""
		if roles && !l.Fit {
			mark = " (held out)"
		}
		fmt.Fprintf(w, "%-28s %-12s %-5s %3d %-6s %13s %-19s %11.1f %11.1f %+6.1f%%", where, r.Model, r.GPU, r.TP, batch,
			fmt.Sprintf("%d/%d", r.ISL, r.OSL), l.Metric, l.Measured, l.Predicted, 100*l.Error)
		if cv {
			if math.IsNaN(l.CVError) {
				fmt.Fprintf(w, " %8s", "")
			} else {
				fmt.Fprintf(w, " %+7.1f%%", 100*l.CVError)
			}
		}
		fmt.Fprintln(w, mark)
	}
}

// resolveProfile finds a profile by built-in name or reads a file.
func resolveProfile(cat *hw.Catalog, spec string) (hw.PerfProfile, error) {
	if pp, ok := cat.Profiles[spec]; ok && !(hw.PerfSpec{Profile: spec}).IsPath() {
		return pp, nil
	}
	if !(hw.PerfSpec{Profile: spec}).IsPath() {
		return hw.PerfProfile{}, fmt.Errorf("--profile %q: no such built-in profile (%s) and not a .toml file", spec, strings.Join(hw.BuiltinProfileNames(), ", "))
	}
	pp, err := hw.ReadProfile(spec)
	if err != nil {
		return hw.PerfProfile{}, fmt.Errorf("--profile: %w", err)
	}
	return pp, nil
}

// loadCatalogFile adds a TOML file's [[models]] and [[gpus]] to cat.
func loadCatalogFile(cat *hw.Catalog, path string) error {
	data, err := infile.ReadFile(nil, path, infile.Models)
	if err != nil {
		return fmt.Errorf("--models: %v", err)
	}
	var f struct {
		Models []hw.LLM `toml:"models"`
		GPUs   []hw.GPU `toml:"gpus"`
	}
	doc, err := tomlx.Decode(path, data, &f)
	if err != nil {
		return err
	}
	var ps config.Problems
	for i := range f.Models {
		key := fmt.Sprintf("models.%d", i)
		if c := f.Models[i].Config; c != "" {
			// As in a scenario: a config.json relative to this file, the
			// table's keys over it.
			if !filepath.IsAbs(c) {
				c = filepath.Join(filepath.Dir(path), c)
			}
			imp, err := hw.ReadHFConfig(c)
			if err != nil {
				ps.Add(key+".config", "cannot use model config:\n%v", err)
				continue
			}
			f.Models[i] = imp.WithOverrides(f.Models[i].Name, f.Models[i], func(k string) bool { return doc.Has(key + "." + k) })
		}
		f.Models[i].Validate(key, &ps)
	}
	for i := range f.GPUs {
		f.GPUs[i].Validate(fmt.Sprintf("gpus.%d", i), &ps)
	}
	if len(ps.List) > 0 {
		return doc.Problems(ps.List)
	}
	for _, m := range f.Models {
		cat.LLMs[m.Name] = m
	}
	for _, g := range f.GPUs {
		cat.GPUs[g.Name] = g
	}
	return nil
}
