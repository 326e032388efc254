package calibrate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/internal/infile"
)

// Row is one measured benchmark configuration.
type Row struct {
	File             string // where it came from (for messages)
	Line             int    // CSV line number (1-based, header is line 1); 0 for a JSON file
	Model, GPU       string
	TP               int
	Weights, KVDType string // "bf16", "fp8" or "fp4" (kv: bf16/fp8)
	Batching         string // "inflight" (continuous batching, all requests at t=0) or "static"
	ISL, OSL         int    // fixed input and output tokens per request
	NumRequests      int
	MaxSeqs          int     // batch size / concurrency cap; 0 = not stated
	RequestRate      float64 // requests/s of a vLLM serving benchmark; 0 = offline (all at t=0, or rate inf)
	OutputTokensPerS float64 // measured output tokens/s of the replica; 0 = not measured
	TTFTMs           float64 // measured mean time to first token in ms; 0 = not measured
	MeanTPOTMs       float64 // measured mean time per output token in ms (vLLM JSON); 0 = not measured
	Source           string

	// Backend and Version name the engine that was measured ("vllm",
	// "sglang", "trtllm"; "" when the input does not say).
	Backend, Version string
	// Compute is the GEMMs' precision ("" derives it from Weights).
	Compute string
	// DP, EP and PP are the attention-data, expert and pipeline parallel
	// degrees of the replica (0: 1).
	DP, EP, PP int
	// Concurrency, when > 0, makes the row a closed loop: that many clients,
	// each sending its next request when its last one returns (NumRequests
	// is then ignored: Warmup + the Options' rounds of Concurrency).
	Concurrency int
	// Warmup is how many of a closed loop's first requests are not
	// measured.
	Warmup int
	// PhaseRounds, when > 0, says the measured phase started with all
	// Concurrency clients sending at once (a benchmark that drains its
	// warm-up before measuring) and ran this many rounds: the row's mean
	// TTFT is then the first round's burst and PhaseRounds − 1 rounds of
	// the steady loop (Case.burstTTFT). 0: the steady loop only.
	PhaseRounds int
	// MeanITLMs and MeanE2EMs are the measured mean inter-token latency
	// (every gap between two tokens, vLLM's mean_itl_ms) and end-to-end
	// latency; 0 = not measured.
	MeanITLMs, MeanE2EMs float64
	// Weight multiplies the row's share of a fit's loss (0: 1): a row that
	// stands for a configuration class the others do not cover can be
	// given the weight of many.
	Weight float64
	// MaxBatchedTokens and KVBlocks are the engine's limits where the
	// measurement states them (0: the Options' and the memory plan's).
	MaxBatchedTokens, KVBlocks int
	// Lens, when set, are the requests' own input and output lengths, in
	// order (vLLM's --save-detailed input_lens and output_lens); the row is
	// then simulated with them instead of ISL and OSL.
	Lens [][2]int32
}

// Ranges of a row's numbers (issue 33 items 4 and 5).
const (
	// MinMeasured and MaxMeasured bound a measured figure (tokens/s, ms,
	// requests/s) that is not 0: the fit divides by it, and an error
	// relative to 5e-324 was +Inf%; no benchmark measures below 1e-6 or
	// above 1e12 (31 years in ms).
	MinMeasured = 1e-6
	MaxMeasured = 1e12
	// MaxNumRequests bounds a row's requests (num_requests, vLLM's
	// num_prompts or completed): each is simulated (a few µs), and a row
	// of 1e9 ran without end; 10,000,000 is a thousand times a typical
	// benchmark's.
	MaxNumRequests = 10_000_000
)

// Closed says whether the row is a closed loop of clients.
func (r Row) Closed() bool { return r.Concurrency > 0 }

// Where is "FILE:LINE" (or "FILE" for a JSON file).
func (r Row) Where() string {
	if r.Line > 0 {
		return fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	return r.File
}

// InputError lists every problem found in the input files, one per line, in
// the form "FILE:LINE: COLUMN: message" (CSV) or "FILE: KEY: message" (JSON).
// At most maxErrorLines problems are listed, then "... and N more".
type InputError struct{ Lines []string }

func (e *InputError) Error() string { return strings.Join(e.Lines, "\n") }

const maxErrorLines = 50

// inputError returns nil for no lines, else an *InputError capped at
// maxErrorLines lines.
func inputError(lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	if len(lines) > maxErrorLines {
		n := len(lines) - maxErrorLines
		lines = append(lines[:maxErrorLines:maxErrorLines], fmt.Sprintf("... and %d more", n))
	}
	return &InputError{Lines: lines}
}

// Allowed values of the enumerated fields.
var (
	weightsValues  = []string{"bf16", "fp8", "fp4", "int4"}
	kvDTypeValues  = []string{"bf16", "fp8"}
	batchingValues = []string{"inflight", "static"}
)

// oneOf checks v (already lower-cased) against allowed and returns "" or a
// message such as `must be bf16, fp8 or fp4, got "int8"`.
func oneOf(v string, allowed []string) string {
	for _, a := range allowed {
		if v == a {
			return ""
		}
	}
	list := strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
	return fmt.Sprintf("must be %s, got %q", list, v)
}

// CSV columns.
const (
	colModel    = "model"
	colGPU      = "gpu"
	colTP       = "tp"
	colWeights  = "weights"
	colKVDType  = "kv_dtype"
	colBatching = "batching"
	colISL      = "isl"
	colOSL      = "osl"
	colNumReq   = "num_requests"
	colMaxSeqs  = "max_seqs"
	colOutTPS   = "output_tokens_per_s"
	colTTFT     = "ttft_ms"
	colSource   = "source"
)

// csvRequired are the columns every CSV must have, in the order missing ones
// are reported; csvOptional may be absent.
var (
	csvRequired = []string{colModel, colGPU, colTP, colWeights, colKVDType, colBatching,
		colISL, colOSL, colNumReq, colOutTPS, colTTFT}
	csvOptional = []string{colMaxSeqs, colSource, "weight", "backend", "compute", "dp", "ep", "pp", "max_batched_tokens",
		"kv_blocks", "concurrency", "request_rate", "tpot_ms", "itl_ms", "e2e_ms"}
)

// ReadCSV reads benchmark rows from a CSV file with a header line (the layout
// of shared/data/calibration/public-benchmarks.csv). Column names are matched
// case-insensitively and in any order; model, gpu, tp, weights, kv_dtype,
// batching, isl, osl, num_requests, output_tokens_per_s and ttft_ms are
// required, max_seqs and source optional, and any other column is an error.
// Values are trimmed of spaces; weights, kv_dtype and batching are matched
// case-insensitively and stored lower-case. An empty max_seqs,
// output_tokens_per_s or ttft_ms is 0, but a row needs one of the two
// measurements. Model and GPU names are not checked here.
//
// All problems are reported at once in an *InputError, each as
// "FILE:LINE: COLUMN: message" with FILE the path as given and LINE the
// physical line (the header is line 1).
func ReadCSV(path string) ([]Row, error) {
	f, err := infile.Open(nil, path, infile.CalibrationCSV)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCSV(path, f)
}

func readCSV(path string, r io.Reader) ([]Row, error) {
	var errs []string
	addf := func(line int, col, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if col == "" {
			errs = append(errs, fmt.Sprintf("%s:%d: %s", path, line, msg))
			return
		}
		errs = append(errs, fmt.Sprintf("%s:%d: %s: %s", path, line, col, msg))
	}

	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked below, with a message naming the line
	cr.ReuseRecord = false

	header, err := cr.Read()
	if err == io.EOF {
		return nil, inputError([]string{path + ": empty file (need a header line and at least one row)"})
	}
	if err != nil {
		return nil, inputError([]string{csvReadError(path, err)})
	}

	// Map the header.
	index := make(map[string]int, len(header))
	known := make(map[string]bool)
	for _, c := range csvRequired {
		known[c] = true
	}
	for _, c := range csvOptional {
		known[c] = true
	}
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // a byte-order mark written by spreadsheets
		}
		name := strings.ToLower(strings.TrimSpace(h))
		switch {
		case name == "":
			addf(1, "", "column %d has no name", i+1)
		case !known[name]:
			addf(1, name, "unknown column (known: %s)", strings.Join(append(append([]string{}, csvRequired...), csvOptional...), ", "))
		case hasKey(index, name):
			addf(1, name, "duplicate column")
		default:
			index[name] = i
		}
	}
	for _, c := range csvRequired {
		if !hasKey(index, c) {
			addf(1, c, "missing column")
		}
	}

	var rows []Row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// A malformed quote and the like: the rest of the file cannot be
			// split into fields reliably.
			errs = append(errs, csvReadError(path, err))
			break
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			addf(line, "", "%d fields, but the header has %d", len(rec), len(header))
			continue
		}
		row := Row{File: path, Line: line}
		// field returns the trimmed value of column c, and whether the
		// column exists.
		field := func(c string) (string, bool) {
			i, ok := index[c]
			if !ok {
				return "", false
			}
			return strings.TrimSpace(rec[i]), true
		}
		fieldLine := func(c string) int {
			l, _ := cr.FieldPos(index[c])
			return l
		}
		str := func(c string, dst *string) {
			v, ok := field(c)
			if !ok {
				return
			}
			if v == "" {
				addf(fieldLine(c), c, "empty")
				return
			}
			*dst = v
		}
		enum := func(c string, allowed []string, dst *string) {
			v, ok := field(c)
			if !ok {
				return
			}
			v = strings.ToLower(v)
			if msg := oneOf(v, allowed); msg != "" {
				addf(fieldLine(c), c, "%s", msg)
				return
			}
			*dst = v
		}
		// integer parses column c into dst; an empty value is allowed (0)
		// when min is 0. It reports whether the value is valid.
		integer := func(c string, min int, dst *int) bool {
			v, ok := field(c)
			if !ok {
				return false
			}
			if v == "" {
				if min <= 0 {
					return true
				}
				addf(fieldLine(c), c, "empty")
				return false
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				addf(fieldLine(c), c, "not an integer: %q", v)
				return false
			}
			if n < min {
				addf(fieldLine(c), c, "must be at least %d, got %d", min, n)
				return false
			}
			*dst = n
			return true
		}
		// number parses an optional non-negative finite number (empty = 0).
		number := func(c string, dst *float64) bool {
			v, ok := field(c)
			if !ok {
				return false
			}
			if v == "" {
				return true
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				addf(fieldLine(c), c, "not a number: %q", v)
				return false
			}
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				addf(fieldLine(c), c, "not a finite number: %q", v)
				return false
			}
			if x < 0 {
				addf(fieldLine(c), c, "must not be negative, got %s", v)
				return false
			}
			if x != 0 && (x < MinMeasured || x > MaxMeasured) {
				addf(fieldLine(c), c, "must be 0 (not measured) or between %g and %g, got %s", MinMeasured, MaxMeasured, v)
				return false
			}
			*dst = x
			return true
		}

		str(colModel, &row.Model)
		str(colGPU, &row.GPU)
		integer(colTP, 1, &row.TP)
		enum(colWeights, weightsValues, &row.Weights)
		enum(colKVDType, kvDTypeValues, &row.KVDType)
		enum(colBatching, batchingValues, &row.Batching)
		integer(colISL, 1, &row.ISL)
		integer(colOSL, 1, &row.OSL)
		if integer(colNumReq, 1, &row.NumRequests) && row.NumRequests > MaxNumRequests {
			addf(fieldLine(colNumReq), colNumReq, "at most %d (a hard limit), got %d", MaxNumRequests, row.NumRequests)
		}
		integer(colMaxSeqs, 0, &row.MaxSeqs)
		_, hasOut := index[colOutTPS]
		_, hasTTFT := index[colTTFT]
		okOut := number(colOutTPS, &row.OutputTokensPerS)
		okTTFT := number(colTTFT, &row.TTFTMs)
		// Only when both measurements parsed (or their column is missing,
		// already reported): a bad value is not also "no measurement".
		if (okOut || !hasOut) && (okTTFT || !hasTTFT) && row.OutputTokensPerS == 0 && row.TTFTMs == 0 && row.MeanTPOTMs == 0 && row.MeanITLMs == 0 && row.MeanE2EMs == 0 {
			addf(line, colOutTPS, "a row needs %s, %s, tpot_ms, itl_ms or e2e_ms", colOutTPS, colTTFT)
		}
		if v, ok := field(colSource); ok {
			row.Source = v
		}
		// The optional engine and layout columns: empty is the default.
		if v, ok := field("backend"); ok && v != "" {
			if msg := oneOf(strings.ToLower(v), []string{"sglang", "trtllm", "vllm"}); msg != "" {
				addf(fieldLine("backend"), "backend", "%s", msg)
			} else {
				row.Backend = strings.ToLower(v)
			}
		}
		if v, ok := field("compute"); ok && v != "" {
			if msg := oneOf(strings.ToLower(v), []string{"bf16", "fp8", "fp4"}); msg != "" {
				addf(fieldLine("compute"), "compute", "%s", msg)
			} else {
				row.Compute = strings.ToLower(v)
			}
		}
		if v, ok := field("weight"); ok && v != "" {
			if x, err := strconv.ParseFloat(v, 64); err != nil || !(x > 0) || x > 1e6 || math.IsInf(x, 0) {
				addf(fieldLine("weight"), "weight", "must be a number in (0, 1e6], got %q", v)
			} else {
				row.Weight = x
			}
		}
		integer("dp", 0, &row.DP)
		integer("ep", 0, &row.EP)
		integer("pp", 0, &row.PP)
		integer("max_batched_tokens", 0, &row.MaxBatchedTokens)
		integer("kv_blocks", 0, &row.KVBlocks)
		integer("concurrency", 0, &row.Concurrency)
		number("request_rate", &row.RequestRate)
		number("tpot_ms", &row.MeanTPOTMs)
		number("itl_ms", &row.MeanITLMs)
		number("e2e_ms", &row.MeanE2EMs)
		rows = append(rows, row)
	}
	if len(rows) == 0 && len(errs) == 0 {
		errs = append(errs, path+": no rows after the header")
	}
	if err := inputError(errs); err != nil {
		return nil, err
	}
	return rows, nil
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// csvReadError formats an encoding/csv error as "FILE:LINE: csv: message".
func csvReadError(path string, err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s:%d: csv: %v", path, pe.Line, pe.Err)
	}
	return fmt.Sprintf("%s: %v", path, err)
}

// ReadVLLMJSON reads result files written by vLLM's
// benchmarks/benchmark_serving.py --save-result (also `vllm bench serve
// --save-result`), one row per file, in the order given.
//
// From the file: NumRequests = completed (num_prompts if absent);
// RequestRate = request_rate (the string "inf", null or absent = 0, offline);
// MaxSeqs = max_concurrency (null or absent: defaults.MaxSeqs, normally 0 =
// not stated); OutputTokensPerS = output_throughput (required);
// TTFTMs = mean_ttft_ms and MeanTPOTMs = mean_tpot_ms (absent = 0);
// ISL = round(total_input_tokens / completed) and
// OSL = round(total_output_tokens / completed), or the means over the
// per-request lists input_lens / output_lens (sum / completed) when the totals
// are absent, or else defaults.ISL / defaults.OSL (the --isl/--osl flags).
// Batching is always "inflight". Model, GPU, TP, Weights and KVDType come from
// defaults (a vLLM file does not say the GPU), except that the optional keys
// "fleetsim_model", "fleetsim_gpu" (strings) and "fleetsim_tp" (a number or a
// string holding an integer) override them; add them when running the
// benchmark with --metadata fleetsim_gpu=H100 fleetsim_tp=2 (vLLM stores
// metadata values as strings). Source is defaults.Source, or else a
// description built from date, backend and model_id.
//
// Unknown keys are ignored. Python's non-standard NaN and Infinity tokens are
// read as null. A file over 64 MiB is rejected. All problems of all files are
// reported at once in an *InputError, each as "FILE: KEY: message".
func ReadVLLMJSON(paths []string, defaults Row) ([]Row, error) {
	var errs []string
	var rows []Row
	for _, p := range paths {
		row, fileErrs := readVLLMFile(p, defaults)
		if len(fileErrs) > 0 {
			errs = append(errs, fileErrs...)
			continue
		}
		rows = append(rows, row)
	}
	if len(paths) == 0 {
		errs = append(errs, "no vLLM result files given")
	}
	if err := inputError(errs); err != nil {
		return nil, err
	}
	return rows, nil
}

func readVLLMFile(path string, defaults Row) (Row, []string) {
	data, err := infile.ReadFile(nil, path, infile.BenchmarkJSON)
	if errors.Is(err, infile.ErrTooLarge) {
		return Row{}, []string{fmt.Sprintf("%v; not a benchmark_serving result file?", err)}
	}
	if err != nil {
		return Row{}, []string{err.Error()}
	}
	return parseVLLM(path, data, defaults)
}

// vllmResult is one decoded result file, keeping each value raw so that its
// type is checked with a message naming the key.
type vllmResult struct {
	path string
	keys map[string]json.RawMessage
	errs []string
}

func (v *vllmResult) addf(key, format string, args ...any) {
	v.errs = append(v.errs, fmt.Sprintf("%s: %s: %s", v.path, key, fmt.Sprintf(format, args...)))
}

// raw returns the value of key, or nil when it is absent or null.
func (v *vllmResult) raw(key string) json.RawMessage {
	r, ok := v.keys[key]
	if !ok || string(r) == "null" {
		return nil
	}
	return r
}

// absent says why key has no value: "missing" or "null" (Python writes NaN,
// read as null).
func (v *vllmResult) absent(key string) string {
	if _, ok := v.keys[key]; ok {
		return "null (or NaN)"
	}
	return "missing"
}

// number returns the value of key as a finite non-negative number; ok is
// false when the key is absent or null (not reported) or invalid (reported).
func (v *vllmResult) number(key string) (x float64, ok bool) {
	r := v.raw(key)
	if r == nil {
		return 0, false
	}
	if err := json.Unmarshal(r, &x); err != nil {
		v.addf(key, "not a number: %s", clip(r))
		return 0, false
	}
	if math.IsInf(x, 0) {
		v.addf(key, "not a finite number: %s", clip(r))
		return 0, false
	}
	if x < 0 {
		v.addf(key, "must not be negative, got %s", clip(r))
		return 0, false
	}
	if x != 0 && (x < MinMeasured || x > MaxMeasured) {
		v.addf(key, "must be 0 (not measured) or between %g and %g, got %s", MinMeasured, MaxMeasured, clip(r))
		return 0, false
	}
	return x, true
}

// integer is number restricted to whole values that fit an int.
func (v *vllmResult) integer(key string) (int, bool) {
	x, ok := v.number(key)
	if !ok {
		return 0, false
	}
	if x != math.Trunc(x) || x > 1<<53 {
		v.addf(key, "not an integer: %s", clip(v.raw(key)))
		return 0, false
	}
	return int(x), true
}

// str returns the value of key as a string ("" when absent or null).
func (v *vllmResult) str(key string) string {
	r := v.raw(key)
	if r == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		v.addf(key, "not a string: %s", clip(r))
		return ""
	}
	return strings.TrimSpace(s)
}

// lensMean returns sum(list)/n for a per-request list of token counts.
func (v *vllmResult) lensMean(key string, n int) (int, bool) {
	r := v.raw(key)
	if r == nil || n <= 0 {
		return 0, false
	}
	var list []float64
	if err := json.Unmarshal(r, &list); err != nil {
		v.addf(key, "not a list of numbers")
		return 0, false
	}
	sum := 0.0
	for _, x := range list {
		sum += x
	}
	return int(math.Round(sum / float64(n))), true
}

// clip shortens a raw value for a message.
func clip(r json.RawMessage) string {
	s := string(r)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

func parseVLLM(path string, data []byte, defaults Row) (Row, []string) {
	v := &vllmResult{path: path}
	data = pythonJSONConstants(data)
	if err := json.Unmarshal(data, &v.keys); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
			return Row{}, []string{fmt.Sprintf("%s:%d: invalid JSON: %v", path, line, se)}
		case errors.As(err, &te):
			return Row{}, []string{fmt.Sprintf("%s: not a JSON object (a benchmark_serving --save-result file)", path)}
		default:
			return Row{}, []string{fmt.Sprintf("%s: invalid JSON: %v", path, err)}
		}
	}
	if v.keys == nil { // the file is "null"
		return Row{}, []string{fmt.Sprintf("%s: not a JSON object (a benchmark_serving --save-result file)", path)}
	}

	row := Row{
		File:     path,
		Model:    defaults.Model,
		GPU:      defaults.GPU,
		TP:       defaults.TP,
		Weights:  strings.ToLower(defaults.Weights),
		KVDType:  strings.ToLower(defaults.KVDType),
		Batching: "inflight",
		MaxSeqs:  defaults.MaxSeqs,
		Source:   defaults.Source,
	}

	// Overrides of the defaults.
	if s := v.str("fleetsim_model"); s != "" {
		row.Model = s
	}
	if s := v.str("fleetsim_gpu"); s != "" {
		row.GPU = s
	}
	if r := v.raw("fleetsim_tp"); r != nil {
		var s string
		if json.Unmarshal(r, &s) == nil { // --metadata stores strings
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				v.addf("fleetsim_tp", "not an integer: %s", clip(r))
			} else {
				row.TP = n
			}
		} else if n, ok := v.integer("fleetsim_tp"); ok {
			row.TP = n
		}
	}
	if row.Model == "" {
		v.addf("fleetsim_model", "no model given (set the default or add the key)")
	}
	if row.GPU == "" {
		v.addf("fleetsim_gpu", "no GPU given (set the default or add the key)")
	}
	if row.TP < 1 {
		v.addf("fleetsim_tp", "tensor-parallel degree must be at least 1, got %d", row.TP)
	}
	if msg := oneOf(row.Weights, weightsValues); msg != "" {
		v.addf("weights", "%s (from the defaults)", msg)
	}
	if msg := oneOf(row.KVDType, kvDTypeValues); msg != "" {
		v.addf("kv_dtype", "%s (from the defaults)", msg)
	}

	// Requests.
	switch {
	case v.raw("completed") != nil:
		if n, ok := v.integer("completed"); ok {
			if n > MaxNumRequests {
				v.addf("completed", "at most %d (a hard limit), got %d", MaxNumRequests, n)
			}
			if n == 0 {
				v.addf("completed", "no request completed")
			}
			row.NumRequests = n
		}
	case v.raw("num_prompts") != nil:
		if n, ok := v.integer("num_prompts"); ok {
			if n > MaxNumRequests {
				v.addf("num_prompts", "at most %d (a hard limit), got %d", MaxNumRequests, n)
			}
			if n == 0 {
				v.addf("num_prompts", "must be at least 1, got 0")
			}
			row.NumRequests = n
		}
	default:
		v.addf("completed", "%s", v.absent("completed"))
	}

	// Traffic.
	if r := v.raw("request_rate"); r != nil {
		var s string
		if json.Unmarshal(r, &s) == nil {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "inf", "infinity", "+inf":
				row.RequestRate = 0
			default:
				x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
				if err != nil || math.IsNaN(x) || x < 0 {
					v.addf("request_rate", `must be a number or "inf", got %s`, clip(r))
				} else if !math.IsInf(x, 0) {
					row.RequestRate = x
				}
			}
		} else if x, ok := v.number("request_rate"); ok {
			row.RequestRate = x
		}
	}
	if r := v.raw("max_concurrency"); r != nil && string(r) != "null" {
		// The benchmark client's cap on requests in flight (a semaphore in
		// front of the arrivals); with request_rate inf, a closed loop.
		if n, ok := v.integer("max_concurrency"); ok {
			if n < 1 {
				v.addf("max_concurrency", "must be at least 1, got %d", n)
			}
			row.Concurrency = n
		}
	}

	// Measurements.
	if x, ok := v.number("output_throughput"); ok {
		row.OutputTokensPerS = x
	} else if v.raw("output_throughput") == nil {
		v.addf("output_throughput", "%s", v.absent("output_throughput"))
	}
	if x, ok := v.number("mean_ttft_ms"); ok {
		row.TTFTMs = x
	}
	if x, ok := v.number("mean_tpot_ms"); ok {
		row.MeanTPOTMs = x
	}
	if v.raw("mean_itl_ms") != nil {
		if x, ok := v.number("mean_itl_ms"); ok {
			row.MeanITLMs = x
		}
	}
	if v.raw("mean_e2el_ms") != nil {
		if x, ok := v.number("mean_e2el_ms"); ok {
			row.MeanE2EMs = x
		}
	}
	if len(v.errs) == 0 && row.OutputTokensPerS == 0 && row.TTFTMs == 0 {
		v.addf("output_throughput", "is 0 and mean_ttft_ms too: nothing measured")
	}

	// Lengths.
	row.ISL = v.meanLength("total_input_tokens", "input_lens", row.NumRequests, defaults.ISL, "ISL")
	row.OSL = v.meanLength("total_output_tokens", "output_lens", row.NumRequests, defaults.OSL, "OSL")
	row.Lens = v.lens()

	if row.Source == "" {
		parts := []string{"vLLM benchmark_serving"}
		if s := v.str("backend"); s != "" {
			parts = append(parts, "backend "+s)
		}
		if s := v.str("model_id"); s != "" {
			parts = append(parts, "model_id "+s)
		}
		if s := v.str("date"); s != "" {
			parts = append(parts, "date "+s)
		}
		row.Source = strings.Join(parts, ", ")
	}
	if len(v.errs) > 0 {
		return Row{}, v.errs
	}
	return row, nil
}

// meanLength is the per-request token count from the total key, else from
// the per-request list, else the default; 0 after all of them is an error
// naming the total key.
// lens reads --save-detailed's per-request input_lens and output_lens
// (both, as long as each other, every length at least 1; outputs of 0 are
// requests that failed and are left out, as vLLM's means leave them out);
// nil when either is absent.
func (v *vllmResult) lens() [][2]int32 {
	ri, ro := v.raw("input_lens"), v.raw("output_lens")
	if ri == nil || ro == nil {
		return nil
	}
	var in, out []int64
	if json.Unmarshal(ri, &in) != nil {
		v.addf("input_lens", "not a list of integers: %s", clip(ri))
		return nil
	}
	if json.Unmarshal(ro, &out) != nil {
		v.addf("output_lens", "not a list of integers: %s", clip(ro))
		return nil
	}
	if len(in) != len(out) {
		v.addf("output_lens", "has %d entries but input_lens %d", len(out), len(in))
		return nil
	}
	var ls [][2]int32
	for i := range in {
		if in[i] < 1 || in[i] > math.MaxInt32 || out[i] < 0 || out[i] > math.MaxInt32 {
			v.addf("input_lens", "entry %d: lengths %d and %d out of range", i, in[i], out[i])
			return nil
		}
		if out[i] == 0 {
			continue
		}
		ls = append(ls, [2]int32{int32(in[i]), int32(out[i])})
	}
	if len(ls) == 0 {
		return nil
	}
	return ls
}

func (v *vllmResult) meanLength(totalKey, listKey string, completed, def int, what string) int {
	if completed <= 0 {
		return def // the request count is already reported
	}
	if total, ok := v.integer(totalKey); ok {
		n := int(math.Round(float64(total) / float64(completed)))
		if n < 1 {
			v.addf(totalKey, "%d tokens over %d completed requests: %s below 1", total, completed, what)
		}
		return n
	} else if v.raw(totalKey) != nil {
		return 0 // invalid, reported
	}
	if n, ok := v.lensMean(listKey, completed); ok {
		if n < 1 {
			v.addf(listKey, "mean below 1 token")
		}
		return n
	}
	if def < 1 {
		v.addf(totalKey, "%s, and no default %s given", v.absent(totalKey), what)
	}
	return def
}

// pythonJSONConstants replaces the bare NaN, Infinity and -Infinity that
// Python's json module writes (not JSON) by null, outside strings. Valid
// JSON is returned unchanged.
func pythonJSONConstants(data []byte) []byte {
	if json.Valid(data) {
		return data
	}
	var out bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case bytes.HasPrefix(data[i:], []byte("NaN")):
			out.WriteString("null")
			i += len("NaN") - 1
			continue
		case bytes.HasPrefix(data[i:], []byte("Infinity")):
			out.WriteString("null")
			i += len("Infinity") - 1
			continue
		case bytes.HasPrefix(data[i:], []byte("-Infinity")):
			out.WriteString("null")
			i += len("-Infinity") - 1
			continue
		}
		out.WriteByte(c)
	}
	return out.Bytes()
}
