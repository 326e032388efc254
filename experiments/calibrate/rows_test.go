package calibrate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/infile"
)

// sharedCSV is the published-benchmark table of the shared data folder,
// relative to this package's directory (experiments/calibrate).
const sharedCSV = "../../../shared/data/calibration/public-benchmarks.csv"

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// inputLines returns the lines of an *InputError.
func inputLines(t *testing.T, err error) []string {
	t.Helper()
	require.Error(t, err)
	var ie *InputError
	require.True(t, errors.As(err, &ie), "want *InputError, got %T: %v", err, err)
	require.Equal(t, strings.Join(ie.Lines, "\n"), err.Error())
	return ie.Lines
}

func TestReadCSVSharedBenchmarks(t *testing.T) {
	if _, err := os.Stat(sharedCSV); err != nil {
		t.Skipf("shared calibration data absent: %v", err)
	}
	rows, err := ReadCSV(sharedCSV)
	require.NoError(t, err)
	require.Len(t, rows, 82)

	inflight8b := 0
	for _, r := range rows {
		if r.Model == "llama-3-8b" && r.Batching == "inflight" {
			inflight8b++
		}
		require.Equal(t, sharedCSV, r.File)
	}
	require.Equal(t, 63, inflight8b)

	// Line 2: the first trtllm-bench sweep row.
	require.Equal(t, Row{
		File: sharedCSV, Line: 2,
		Model: "llama-3-8b", GPU: "H100", TP: 1, Weights: "fp8", KVDType: "fp8", Batching: "inflight",
		ISL: 1024, OSL: 1024, NumRequests: 3000, MaxSeqs: 0,
		OutputTokensPerS: 10893.9,
		Source:           "trtllm-0.16 trtllm-bench, third-party sweep (shaamil101-etched/trtllm-benchmarks throughput_summary.csv)",
	}, rows[0])
	require.Equal(t, sharedCSV+":2", rows[0].Where())

	// Line 65: the first static-batching row (TensorRT-LLM v0.6.1).
	r := rows[63]
	require.Equal(t, 65, r.Line)
	require.Equal(t, "llama-2-7b", r.Model)
	require.Equal(t, "static", r.Batching)
	require.Equal(t, []int{1, 128, 128, 6144, 768}, []int{r.TP, r.ISL, r.OSL, r.NumRequests, r.MaxSeqs})
	require.Equal(t, 19694.0, r.OutputTokensPerS)
	require.Zero(t, r.TTFTMs)

	// Line 70: LLaMA-2 70B on TP 4.
	r = rows[68]
	require.Equal(t, 70, r.Line)
	require.Equal(t, []int{4, 128, 2048, 3840, 480}, []int{r.TP, r.ISL, r.OSL, r.NumRequests, r.MaxSeqs})
	require.Equal(t, 5944.0, r.OutputTokensPerS)

	// Line 83: the last batch-1 first-token latency row.
	r = rows[81]
	require.Equal(t, 83, r.Line)
	require.Equal(t, "llama-2-70b", r.Model)
	require.Equal(t, "H100", r.GPU)
	require.Equal(t, []int{4, 2048, 1, 1, 1}, []int{r.TP, r.ISL, r.OSL, r.NumRequests, r.MaxSeqs})
	require.Zero(t, r.OutputTokensPerS)
	require.Equal(t, 109.0, r.TTFTMs)
	require.True(t, strings.HasPrefix(r.Source, "TensorRT-LLM performance.md low-latency table"))
}

func TestReadCSVColumnOrderAndOptional(t *testing.T) {
	// Columns in another order, upper-case names and values, spaces, a BOM,
	// no max_seqs or source column, and a quoted field spanning two lines.
	p := writeFile(t, "bench.csv", "\ufeffTTFT_ms, output_tokens_per_s ,num_requests,osl,isl,batching,kv_dtype,weights,tp,gpu,model\n"+
		",1200.5,100,128,512,Static,BF16,FP4,2,\"B200\",llama-3-8b\n"+
		"35,,1,1,2048,inflight,fp8,bf16,1,\"H100\nSXM\",llama-3-8b\n"+
		"\n"+
		"0,7,10,10,10,inflight,fp8,fp8,8,H200,llama-3-70b\n")
	rows, err := ReadCSV(p)
	require.NoError(t, err)
	require.Equal(t, []Row{
		{File: p, Line: 2, Model: "llama-3-8b", GPU: "B200", TP: 2, Weights: "fp4", KVDType: "bf16", Batching: "static",
			ISL: 512, OSL: 128, NumRequests: 100, OutputTokensPerS: 1200.5},
		{File: p, Line: 3, Model: "llama-3-8b", GPU: "H100\nSXM", TP: 1, Weights: "bf16", KVDType: "fp8", Batching: "inflight",
			ISL: 2048, OSL: 1, NumRequests: 1, TTFTMs: 35},
		{File: p, Line: 6, Model: "llama-3-70b", GPU: "H200", TP: 8, Weights: "fp8", KVDType: "fp8", Batching: "inflight",
			ISL: 10, OSL: 10, NumRequests: 10, OutputTokensPerS: 7},
	}, rows)
}

func TestReadCSVReportsEveryProblem(t *testing.T) {
	// A missing column (isl), a non-numeric value, a bad enum and a row with
	// neither measurement: all four reported in one error.
	p := writeFile(t, "bench.csv", "gpu,model,tp,weights,kv_dtype,batching,osl,num_requests,max_seqs,output_tokens_per_s,ttft_ms,source\n"+
		"H100,llama-3-8b,1,fp8,fp8,inflight,128,100,,5000,,fine\n"+
		"H100,llama-3-8b,two,fp8,fp8,inflight,128,100,,5000,,\n"+
		"H100,llama-3-8b,1,int8,fp8,inflight,128,100,,5000,,\n"+
		"H100,llama-3-8b,1,fp8,fp8,inflight,128,100,,,,\n")
	rows, err := ReadCSV(p)
	require.Nil(t, rows)
	require.Equal(t, []string{
		p + ":1: isl: missing column",
		p + ":3: tp: not an integer: \"two\"",
		p + ":4: weights: must be bf16, fp8, fp4 or int4, got \"int8\"",
		p + ":5: output_tokens_per_s: a row needs output_tokens_per_s, ttft_ms, tpot_ms, itl_ms or e2e_ms",
	}, inputLines(t, err))
}

func TestReadCSVMoreProblems(t *testing.T) {
	header := "model,gpu,tp,weights,kv_dtype,batching,isl,osl,num_requests,max_seqs,output_tokens_per_s,ttft_ms,source,gpus,tp\n"
	p := writeFile(t, "b.csv", header+
		"llama-3-8b,H100,0,fp8,fp16,batch,0,-5,1.5,-1,NaN,-3,x,1,1\n"+
		",,1,fp8,fp8,inflight,1,1,1,,abc,1e400,x,1,1\n"+
		"llama-3-8b,H100,1,fp8,fp8,inflight,1,1,1\n"+
		"llama-3-8b,H100,1,fp8,fp8,inflight,1,1,1,,0,0,x,1,1\n")
	_, err := ReadCSV(p)
	require.Equal(t, []string{
		p + ":1: gpus: unknown column (known: model, gpu, tp, weights, kv_dtype, batching, isl, osl, num_requests, output_tokens_per_s, ttft_ms, max_seqs, source, weight, backend, compute, dp, ep, pp, max_batched_tokens, kv_blocks, concurrency, request_rate, tpot_ms, itl_ms, e2e_ms)",
		p + ":1: tp: duplicate column",
		p + ":2: tp: must be at least 1, got 0",
		p + ":2: kv_dtype: must be bf16 or fp8, got \"fp16\"",
		p + ":2: batching: must be inflight or static, got \"batch\"",
		p + ":2: isl: must be at least 1, got 0",
		p + ":2: osl: must be at least 1, got -5",
		p + ":2: num_requests: not an integer: \"1.5\"",
		p + ":2: max_seqs: must be at least 0, got -1",
		p + ":2: output_tokens_per_s: not a finite number: \"NaN\"",
		p + ":2: ttft_ms: must not be negative, got -3",
		p + ":3: model: empty",
		p + ":3: gpu: empty",
		p + ":3: output_tokens_per_s: not a number: \"abc\"",
		p + ":3: ttft_ms: not a finite number: \"1e400\"",
		p + ":4: 9 fields, but the header has 15",
		p + ":5: output_tokens_per_s: a row needs output_tokens_per_s, ttft_ms, tpot_ms, itl_ms or e2e_ms",
	}, inputLines(t, err))
}

func TestReadCSVCapsMessages(t *testing.T) {
	var b strings.Builder
	b.WriteString("model,gpu,tp,weights,kv_dtype,batching,isl,osl,num_requests,output_tokens_per_s,ttft_ms\n")
	for range 60 {
		b.WriteString("m,g,x,fp8,fp8,inflight,1,1,1,1,\n")
	}
	p := writeFile(t, "many.csv", b.String())
	_, err := ReadCSV(p)
	lines := inputLines(t, err)
	require.Len(t, lines, 51)
	require.Equal(t, p+":2: tp: not an integer: \"x\"", lines[0])
	require.Equal(t, p+":51: tp: not an integer: \"x\"", lines[49])
	require.Equal(t, "... and 10 more", lines[50])
}

func TestReadCSVEmptyAndMalformed(t *testing.T) {
	p := writeFile(t, "empty.csv", "")
	_, err := ReadCSV(p)
	require.Equal(t, []string{p + ": empty file (need a header line and at least one row)"}, inputLines(t, err))

	p = writeFile(t, "header.csv", "model,gpu,tp,weights,kv_dtype,batching,isl,osl,num_requests,output_tokens_per_s,ttft_ms\n")
	_, err = ReadCSV(p)
	require.Equal(t, []string{p + ": no rows after the header"}, inputLines(t, err))

	p = writeFile(t, "quote.csv", "model,gpu,tp,weights,kv_dtype,batching,isl,osl,num_requests,output_tokens_per_s,ttft_ms\n"+
		"m,g,1,fp8,fp8,inflight,1,1,1,1,\n"+
		"m,g\"x,1,fp8,fp8,inflight,1,1,1,1,\n")
	_, err = ReadCSV(p)
	require.Equal(t, []string{p + ":3: csv: bare \" in non-quoted-field"}, inputLines(t, err))

	_, err = ReadCSV(filepath.Join(t.TempDir(), "absent.csv"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// The files testdata/vllm-*.json are hand-made in the format that vLLM's
// benchmarks/benchmark_serving.py --save-result writes (key names and order
// of that script; the numbers are invented but consistent), not output of a
// real run.
var vllmDefaults = Row{Model: "llama-3-8b", GPU: "H100", TP: 1, Weights: "fp8", KVDType: "fp8"}

func TestReadVLLMJSON(t *testing.T) {
	offline := filepath.Join("testdata", "vllm-offline.json")
	online := filepath.Join("testdata", "vllm-rate4-h200-tp2.json")
	rows, err := ReadVLLMJSON([]string{offline, online}, vllmDefaults)
	require.NoError(t, err)
	require.Len(t, rows, 2)

	// Request rate "inf", max_concurrency 4 (a closed loop of 4 clients),
	// per-request lists present (each request's lengths are kept).
	r := rows[0]
	require.Equal(t, offline, r.Where())
	lens := make([][2]int32, 8)
	for i := range lens {
		lens[i] = [2]int32{1024, 32}
	}
	require.Equal(t, Row{
		File: offline, Line: 0,
		Model: "llama-3-8b", GPU: "H100", TP: 1, Weights: "fp8", KVDType: "fp8", Batching: "inflight",
		ISL: 1024, OSL: 32, NumRequests: 8, Concurrency: 4, RequestRate: 0,
		OutputTokensPerS: 435.5519259561726, TTFTMs: 62.335125, MeanTPOTMs: r.MeanTPOTMs,
		MeanITLMs: r.MeanITLMs, MeanE2EMs: 282.08425, Lens: lens,
		Source: "vLLM benchmark_serving, backend vllm, model_id meta-llama/Llama-3.1-8B-Instruct, date 20250314-101522",
	}, r)
	require.InDelta(t, 7.0887, r.MeanTPOTMs, 1e-4)
	require.InDelta(t, 7.0887, r.MeanITLMs, 1e-4)

	// Request rate 4, max_concurrency null, 199 of 200 completed, and the
	// fleetsim_* metadata (strings, as --metadata writes them) override
	// the defaults.
	r = rows[1]
	require.Equal(t, "llama-3-70b", r.Model)
	require.Equal(t, "H200", r.GPU)
	require.Equal(t, 2, r.TP)
	require.Equal(t, "fp8", r.Weights)
	require.Equal(t, 199, r.NumRequests)
	require.Equal(t, 0, r.MaxSeqs)
	require.Equal(t, 4.0, r.RequestRate)
	require.Equal(t, 512, r.ISL) // 101837 / 199 = 511.7
	require.Equal(t, 256, r.OSL) // 50944 / 199
	require.Equal(t, 973.8878, r.OutputTokensPerS)
	require.Equal(t, 118.4127, r.TTFTMs)
	require.Equal(t, 24.6613, r.MeanTPOTMs)

	// A Source in the defaults is kept; a number for fleetsim_tp works too.
	d := vllmDefaults
	d.Source = "my H100 box"
	p := writeFile(t, "tp.json", `{"completed": 10, "total_input_tokens": 1000, "total_output_tokens": 500,
		"output_throughput": 100, "fleetsim_tp": 4, "request_rate": "inf", "max_concurrency": null}`)
	rows, err = ReadVLLMJSON([]string{p}, d)
	require.NoError(t, err)
	require.Equal(t, "my H100 box", rows[0].Source)
	require.Equal(t, 4, rows[0].TP)
	require.Equal(t, []int{100, 50, 10}, []int{rows[0].ISL, rows[0].OSL, rows[0].NumRequests})
}

func TestReadVLLMJSONLengthsFallback(t *testing.T) {
	// No totals: the per-request lists, else the defaults (--isl/--osl).
	p := writeFile(t, "lists.json", `{"num_prompts": 4, "output_throughput": 50.5,
		"input_lens": [100, 110, 90, 101], "output_lens": [20, 20, 0, 20], "mean_ttft_ms": 12}`)
	d := vllmDefaults
	d.ISL, d.OSL = 7, 9
	rows, err := ReadVLLMJSON([]string{p}, d)
	require.NoError(t, err)
	require.Equal(t, []int{100, 15, 4}, []int{rows[0].ISL, rows[0].OSL, rows[0].NumRequests})

	p = writeFile(t, "bare.json", `{"completed": 3, "output_throughput": 50.5}`)
	rows, err = ReadVLLMJSON([]string{p}, d)
	require.NoError(t, err)
	require.Equal(t, []int{7, 9, 3}, []int{rows[0].ISL, rows[0].OSL, rows[0].NumRequests})
	require.Equal(t, "vLLM benchmark_serving", rows[0].Source)
}

func TestReadVLLMJSONPythonConstants(t *testing.T) {
	// Python's json.dump writes NaN and Infinity; they read as null.
	p := writeFile(t, "nan.json", `{"completed": 2, "total_input_tokens": 20, "total_output_tokens": 20,
		"output_throughput": 10, "mean_ttft_ms": NaN, "std_itl_ms": Infinity, "p99_itl_ms": -Infinity,
		"generated_texts": ["NaN Infinity \"NaN\""]}`)
	rows, err := ReadVLLMJSON([]string{p}, vllmDefaults)
	require.NoError(t, err)
	require.Zero(t, rows[0].TTFTMs)
	require.Equal(t, 10.0, rows[0].OutputTokensPerS)
}

func TestReadVLLMJSONErrors(t *testing.T) {
	// Every problem of every file at once, each naming the file and key.
	run1 := writeFile(t, "run1.json", `{"backend": "vllm", "completed": 5, "total_output_tokens": 50, "mean_ttft_ms": 30}`)
	run2 := writeFile(t, "run2.json", `{"completed": "five", "request_rate": "fast", "max_concurrency": 2.5,
		"output_throughput": -1, "fleetsim_tp": "two", "total_input_tokens": 100, "total_output_tokens": 100}`)
	run3 := writeFile(t, "run3.json", `{"completed": 0, "output_throughput": NaN, "total_input_tokens": 0, "total_output_tokens": 0}`)
	run4 := writeFile(t, "run4.json", `[1, 2]`)
	run5 := writeFile(t, "run5.json", "{\n  \"completed\": 5,\n  \"output_throughput\": 1,,\n}")
	_, err := ReadVLLMJSON([]string{run1, run2, run3, run4, run5}, Row{GPU: "H100", TP: 1, Weights: "fp8"})
	require.Equal(t, []string{
		run1 + ": fleetsim_model: no model given (set the default or add the key)",
		run1 + ": kv_dtype: must be bf16 or fp8, got \"\" (from the defaults)",
		run1 + ": output_throughput: missing",
		run1 + ": total_input_tokens: missing, and no default ISL given",
		run2 + ": fleetsim_tp: not an integer: \"two\"",
		run2 + ": fleetsim_model: no model given (set the default or add the key)",
		run2 + ": kv_dtype: must be bf16 or fp8, got \"\" (from the defaults)",
		run2 + ": completed: not a number: \"five\"",
		run2 + ": request_rate: must be a number or \"inf\", got \"fast\"",
		run2 + ": max_concurrency: not an integer: 2.5",
		run2 + ": output_throughput: must not be negative, got -1",
		run3 + ": fleetsim_model: no model given (set the default or add the key)",
		run3 + ": kv_dtype: must be bf16 or fp8, got \"\" (from the defaults)",
		run3 + ": completed: no request completed",
		run3 + ": output_throughput: null (or NaN)",
		run4 + ": not a JSON object (a benchmark_serving --save-result file)",
		run5 + ":3: invalid JSON: invalid character ',' looking for beginning of object key string",
	}, inputLines(t, err))

	_, err = ReadVLLMJSON(nil, vllmDefaults)
	require.Equal(t, []string{"no vLLM result files given"}, inputLines(t, err))
}

func TestReadVLLMJSONTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(infile.BenchmarkJSON.Max+1)) // sparse: no disk used
	require.NoError(t, f.Close())
	_, err = ReadVLLMJSON([]string{p}, vllmDefaults)
	require.Equal(t, []string{fmt.Sprintf("%s: larger than 64 MiB, the limit for a benchmark result file (docs/reference.md, Limits); not a benchmark_serving result file?", p)}, inputLines(t, err))
}

// The silicon layout's reader reports every malformed row at once as
// FILE:LINE: COLUMN: message, counts the rows it leaves out by reason, and
// reads the rest as closed loops.
func TestReadSiliconReportsEveryProblem(t *testing.T) {
	header := strings.Join(siliconColumns, ",")
	row := func(kv map[string]string) string {
		vals := map[string]string{"id": "x", "backend": "vllm", "model_path": "meta-llama/Llama-3.1-70B", "system": "h200_sxm",
			"precision": "fp8", "mode": "agg", "isl": "1024", "osl": "1024", "gemm_quant_mode": "fp8", "moe_quant_mode": "fp8",
			"batch_size": "16", "tp_size": "8", "pp_size": "1", "attention_dp_size": "1", "moe_tp_size": "1", "moe_ep_size": "1",
			"silicon_ttft_ms": "100.5", "silicon_tpot_ms": "9.7"}
		for k, v := range kv {
			vals[k] = v
		}
		out := make([]string, len(siliconColumns))
		for i, c := range siliconColumns {
			out[i] = vals[c]
		}
		return strings.Join(out, ",")
	}
	good := row(nil)
	src := strings.Join([]string{header,
		good,
		row(map[string]string{"tp_size": "eight"}),
		row(map[string]string{"silicon_tpot_ms": "-3", "system": "a100_sxm"}),
		row(map[string]string{"model_path": "acme/unknown-7B"}),
		row(map[string]string{"precision": "int8"}),
		row(map[string]string{"mode": "disagg"}),
		row(map[string]string{"model_path": "zhipuai/GLM-5"}),
	}, "\n") + "\n"
	_, _, err := readSilicon("s.csv", strings.NewReader(src))
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, []string{
		`s.csv:3: tp_size: not an integer: "eight"`,
		`s.csv:4: system: unknown system "a100_sxm" (known: b200_sxm, gb200_sxm, h100_sxm, h200_sxm)`,
		`s.csv:4: silicon_tpot_ms: must be a finite number > 0, got "-3"`,
		`s.csv:5: model_path: unknown model "acme/unknown-7B" (known: ` + strings.Join(siliconModelNames(), ", ") + `)`,
		`s.csv:6: precision: unknown precision "int8" / gemm_quant_mode "fp8" / moe_quant_mode "fp8" (known: fp8, fp8_block, nvfp4, fp4, int4_wo, bf16 or blank)`,
	}, ie.Lines)

	// Without the bad rows: one closed loop, two rows left out and counted.
	src = strings.Join([]string{header, good, row(map[string]string{"mode": "disagg"}), row(map[string]string{"model_path": "zhipuai/GLM-5"})}, "\n") + "\n"
	rows, skip, err := readSilicon("s.csv", strings.NewReader(src))
	require.NoError(t, err)
	require.Len(t, rows, 1)
	r := rows[0]
	require.Equal(t, "llama-3.1-70b", r.Model)
	require.Equal(t, "H200", r.GPU)
	require.Equal(t, 16, r.Concurrency)
	require.Equal(t, 32, r.Warmup)
	require.Equal(t, "fp8", r.Weights)
	require.InDelta(t, 100.5, r.TTFTMs, 0)
	require.InDelta(t, 9.7, r.MeanTPOTMs, 0)
	require.Len(t, skip, 2)
	require.Contains(t, skip.String(), "1 disaggregated rows")
}
