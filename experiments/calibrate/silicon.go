package calibrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/internal/infile"
)

// The concurrency-based serving layout ("silicon" rows): one engine
// deployment measured at a fixed concurrency, mean TTFT and TPOT, as the
// AIConfigurator project (github.com/ai-dynamo/aiconfigurator, Apache-2.0,
// systems/silicon_sample.csv) publishes them. The reading taken here, from
// that project's benchmark template (generator/config/backend_templates/
// benchmark/bench_run.sh.j2: aiperf --concurrency C --num-requests C·rounds
// --warmup-request-count 2·C --streaming, fixed ISL and OSL, ignore_eos):
//
//   - batch_size is the concurrency C: C clients, each with one request in
//     flight, a new one sent when one completes (a closed loop);
//   - the first 2·C requests warm up and are not measured; aiperf
//     (github.com/ai-dynamo/aiperf, Apache-2.0) drains them before it
//     measures (aiperf/timing/credit_issuing_strategy.py: each phase waits
//     for its credits to return), and its concurrency mode issues credits
//     as fast as its semaphore allows (aiperf/timing/request_rate_
//     strategy.py, CONCURRENCY_BURST), so the measured phase starts with
//     all C requests at once;
//   - the measured phase is 20 rounds (the template's
//     AICONFIGURATOR_BENCH_MULTI_ROUND default, --num-requests C·20), so
//     its mean TTFT holds that first burst once in 20 (PhaseRounds; the
//     rows that give only their concurrency as provenance do not name
//     their harness and are read the same way). The
//     clients are taken to fall out of step after it: the measured TTFTs
//     at a few clients are a lone request's, where identical requests
//     kept in step would queue their prefills every round (docs/
//     calibration.md);
//   - silicon_ttft_ms and silicon_tpot_ms are means over the measured
//     requests, TPOT per request being (E2E − TTFT)/(OSL − 1);
//   - tp_size, attention_dp_size and moe_ep_size are the worker's tensor,
//     attention-data and expert parallel degrees (a worker's GPUs are
//     tp·dp·pp; MoE TP × EP covers the same GPUs); pp_size its stages.
//
// Columns not listed in siliconColumns are an error; prefill_* and decode_*
// are read only for their presence (disaggregated rows are reported as not
// supported by this reader).
var siliconColumns = []string{"id", "silicon_data_source", "backend", "backend_version", "model_path", "system",
	"precision", "mode", "isl", "osl", "gemm_quant_mode", "moe_quant_mode", "batch_size", "tp_size", "pp_size",
	"attention_dp_size", "moe_tp_size", "moe_ep_size", "prefill_batch_size", "prefill_num_workers",
	"prefill_tp_size", "prefill_pp_size", "prefill_attention_dp_size", "prefill_moe_tp_size", "prefill_moe_ep_size",
	"decode_batch_size", "decode_num_workers", "decode_tp_size", "decode_pp_size", "decode_attention_dp_size",
	"decode_moe_tp_size", "decode_moe_ep_size", "silicon_ttft_ms", "silicon_tpot_ms"}

// SiliconRounds is the rounds of a silicon row's measured phase (the
// benchmark template's AICONFIGURATOR_BENCH_MULTI_ROUND default: aiperf
// --num-requests C·20): Row.PhaseRounds.
const SiliconRounds = 20

// siliconRequired are the columns a silicon file must have.
var siliconRequired = []string{"backend", "model_path", "system", "precision", "mode", "isl", "osl",
	"batch_size", "tp_size", "silicon_ttft_ms", "silicon_tpot_ms"}

// IsSiliconHeader says whether a CSV header is the silicon layout's (it
// names silicon_ttft_ms).
func IsSiliconHeader(header []string) bool {
	for _, h := range header {
		if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), "silicon_ttft_ms") {
			return true
		}
	}
	return false
}

// siliconModels maps a Hugging Face model path to the catalog's name. A
// checkpoint's quantisation (-FP8, -NVFP4) is the row's precision.
var siliconModels = map[string]string{
	"meta-llama/Llama-3.1-8B":           "llama-3.1-8b",
	"meta-llama/Llama-3.1-8B-Instruct":  "llama-3.1-8b",
	"nvidia/Llama-3.1-8B-Instruct-FP8":  "llama-3.1-8b",
	"meta-llama/Llama-3.1-70B":          "llama-3.1-70b",
	"meta-llama/Llama-3.1-70B-Instruct": "llama-3.1-70b",
	"Qwen/Qwen3-32B":                    "qwen3-32b",
	"nvidia/Qwen3-32B-NVFP4":            "qwen3-32b",
	"Qwen/Qwen3-235B-A22B":              "qwen3-235b-a22b",
	"Qwen/Qwen3-235B-A22B-FP8":          "qwen3-235b-a22b",
	"deepseek-ai/DeepSeek-V3":           "deepseek-v3",
	"deepseek-ai/DeepSeek-R1":           "deepseek-r1",
	"nvidia/DeepSeek-R1-NVFP4":          "deepseek-r1",
	"nvidia/DeepSeek-V3.1-NVFP4":        "deepseek-v3.1",
	"openai/gpt-oss-120b":               "gpt-oss-120b",
	"moonshotai/Kimi-K2.5":              "kimi-k2.5",
	"MiniMaxAI/MiniMax-M2.5":            "minimax-m2.5",
}

// siliconUnmodelled are models of the public file whose architecture the
// step model does not represent, and why.
var siliconUnmodelled = map[string]string{
	"zhipuai/GLM-5":          "DeepSeek sparse attention (an indexer picks 2,048 keys per query)",
	"Qwen/Qwen3.5-397B-A17B": "hybrid linear (Gated DeltaNet) and full attention layers",
}

// siliconSystems maps the file's system names to catalog GPUs.
var siliconSystems = map[string]string{"h100_sxm": "H100", "h200_sxm": "H200", "b200_sxm": "B200", "gb200_sxm": "GB200"}

// SiliconSkip counts the rows ReadSilicon left out, by reason.
type SiliconSkip map[string]int

// String lists the reasons, most rows first.
func (s SiliconSkip) String() string {
	type kv struct {
		k string
		n int
	}
	var xs []kv
	for k, n := range s {
		xs = append(xs, kv{k, n})
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].n > xs[j].n || xs[i].n == xs[j].n && xs[i].k < xs[j].k })
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf("%d %s", x.n, x.k))
	}
	return strings.Join(parts, "; ")
}

// ReadSilicon reads a CSV in the silicon layout. Aggregated rows become
// closed-loop Rows (Concurrency = batch_size, Warmup = 2·batch_size);
// disaggregated rows and rows of models whose architecture is not modelled
// are left out and counted in the SiliconSkip (the caller says so). Every
// malformed row is an error: FILE:LINE: COLUMN: message, all at once.
//
// Engine limits the file does not state are the Options' (max_batched
// tokens) or the concurrency (max_seqs = C: a closed loop of C clients never
// has more than C requests). The KV cache is BF16 for vLLM and SGLang
// (their kv_cache_dtype "auto" follows the activations) and FP8 for
// TensorRT-LLM's FP8 and FP4 checkpoints (its quantised checkpoints carry
// an FP8 KV cache): assumptions, the file does not say.
func ReadSilicon(path string) ([]Row, SiliconSkip, error) {
	f, err := infile.Open(nil, path, infile.CalibrationCSV)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return readSilicon(path, f)
}

func readSilicon(path string, r io.Reader) ([]Row, SiliconSkip, error) {
	var errs []string
	addf := func(line int, col, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s:%d: %s: %s", path, line, col, fmt.Sprintf(format, args...)))
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, inputError([]string{path + ": empty file (need a header line and at least one row)"})
	}
	if err != nil {
		return nil, nil, inputError([]string{csvReadError(path, err)})
	}
	index := map[string]int{}
	known := map[string]bool{}
	for _, c := range siliconColumns {
		known[c] = true
	}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		switch {
		case !known[name]:
			addf(1, name, "unknown column for the silicon layout")
		case hasKey(index, name):
			addf(1, name, "duplicate column")
		default:
			index[name] = i
		}
	}
	for _, c := range siliconRequired {
		if !hasKey(index, c) {
			addf(1, c, "missing column")
		}
	}
	if len(errs) > 0 {
		return nil, nil, inputError(errs)
	}
	skip := SiliconSkip{}
	var rows []Row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, csvReadError(path, err))
			break
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			errs = append(errs, fmt.Sprintf("%s:%d: %d fields, but the header has %d", path, line, len(rec), len(header)))
			continue
		}
		get := func(c string) string {
			if i, ok := index[c]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		bad := len(errs)
		integer := func(c string, min int) int {
			v := get(c)
			if v == "" {
				if min <= 0 {
					return 0
				}
				addf(line, c, "empty")
				return 0
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				addf(line, c, "not an integer: %q", v)
				return 0
			}
			if n < min {
				addf(line, c, "must be at least %d, got %d", min, n)
			}
			return n
		}
		positive := func(c string) float64 {
			v := get(c)
			x, err := strconv.ParseFloat(v, 64)
			switch {
			case v == "":
				addf(line, c, "empty")
			case err != nil && !errors.Is(err, strconv.ErrRange):
				addf(line, c, "not a number: %q", v)
			case err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0:
				addf(line, c, "must be a finite number > 0, got %q", v)
			default:
				return x
			}
			return 0
		}
		mode := strings.ToLower(get("mode"))
		if mode != "agg" && mode != "disagg" {
			addf(line, "mode", `must be agg or disagg, got %q`, get("mode"))
		}
		backend := strings.ToLower(get("backend"))
		if backend != "vllm" && backend != "sglang" && backend != "trtllm" {
			addf(line, "backend", "must be vllm, sglang or trtllm, got %q", get("backend"))
		}
		sys := get("system")
		gpu, okGPU := siliconSystems[strings.ToLower(sys)]
		if !okGPU {
			addf(line, "system", "unknown system %q (known: b200_sxm, gb200_sxm, h100_sxm, h200_sxm)", sys)
		}
		weights, compute, msg := siliconPrecision(get("precision"), get("gemm_quant_mode"), get("moe_quant_mode"))
		if msg != "" {
			addf(line, "precision", "%s", msg)
		}
		row := Row{File: path, Line: line, GPU: gpu, Backend: backend, Version: get("backend_version"),
			Weights: weights, Compute: compute, Batching: "inflight",
			ISL: integer("isl", 1), OSL: integer("osl", 1),
			TTFTMs: positive("silicon_ttft_ms"), MeanTPOTMs: positive("silicon_tpot_ms"), Source: get("id")}
		row.KVDType = "bf16"
		if backend == "trtllm" && (weights == "fp8" || weights == "fp4") {
			row.KVDType = "fp8"
		}
		if mode == "disagg" {
			if len(errs) == bad {
				skip["disaggregated rows (not read by this layout's reader yet)"]++
			}
			continue
		}
		row.Concurrency = integer("batch_size", 1)
		row.TP = integer("tp_size", 1)
		row.PP = integer("pp_size", 0)
		row.DP = integer("attention_dp_size", 0)
		row.EP = integer("moe_ep_size", 0)
		integer("moe_tp_size", 0)
		if row.OSL < 2 {
			addf(line, "osl", "a TPOT needs at least 2 output tokens, got %d", row.OSL)
		}
		hf := get("model_path")
		if why, ok := siliconUnmodelled[hf]; ok {
			if len(errs) == bad {
				skip[fmt.Sprintf("rows of %s (%s: not modelled)", hf, why)]++
			}
			continue
		}
		name, ok := siliconModels[hf]
		if !ok {
			addf(line, "model_path", "unknown model %q (known: %s)", hf, strings.Join(siliconModelNames(), ", "))
			continue
		}
		row.Model = name
		if len(errs) > bad {
			continue
		}
		row.Warmup = 2 * row.Concurrency
		row.PhaseRounds = SiliconRounds
		row.MaxSeqs = row.Concurrency
		rows = append(rows, row)
	}
	if len(rows) == 0 && len(errs) == 0 && len(skip) == 0 {
		errs = append(errs, path+": no rows after the header")
	}
	if err := inputError(errs); err != nil {
		return nil, nil, err
	}
	return rows, skip, nil
}

func siliconModelNames() []string {
	var out []string
	for k := range siliconModels {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// siliconPrecision reads a row's precision columns as weights and compute
// precisions: fp8 (W8A8; fp8_block is FP8 with block scales), nvfp4 / fp4
// (NVFP4 on Blackwell, MXFP4 W4A16 elsewhere), int4_wo (weight-only INT4:
// W4A16), blank (the checkpoint's own: BF16). gemm_quant_mode names the
// dense GEMMs', moe_quant_mode the experts'; fleetsim has one weight format
// per replica and takes the narrower (the experts' on MoE models, where
// they are most of the bytes).
func siliconPrecision(precision, gemm, moe string) (weights, compute, msg string) {
	of := func(q string) (string, bool) {
		switch strings.ToLower(q) {
		case "fp8", "fp8_block":
			return "fp8", true
		case "nvfp4", "fp4", "mxfp4", "w4a16_mxfp4":
			return "fp4", true
		case "int4_wo", "int4":
			return "int4", true
		case "bf16", "fp16", "float16", "bfloat16", "":
			return "", true
		}
		return "", false
	}
	p, ok1 := of(precision)
	g, ok2 := of(gemm)
	m, ok3 := of(moe)
	if !ok1 || !ok2 || !ok3 {
		return "", "", fmt.Sprintf("unknown precision %q / gemm_quant_mode %q / moe_quant_mode %q (known: fp8, fp8_block, nvfp4, fp4, int4_wo, bf16 or blank)", precision, gemm, moe)
	}
	w := "bf16"
	for _, q := range []string{p, g, m} {
		if q != "" && bits(q) < bits(w) {
			w = q
		}
	}
	return w, "", ""
}

func bits(p string) int {
	switch p {
	case "fp8":
		return 8
	case "fp4", "int4":
		return 4
	}
	return 16
}
