#!/usr/bin/env bash
# fit-profiles.sh: regenerate the shipped engine profiles
# models/hw/profiles/{vllm,sglang,trtllm}-{hopper,blackwell}.toml from the
# public serving measurements in testdata/silicon-h100-h200-b200.csv
# (closed loops at fixed concurrency; README "Calibrating to your engine").
#
#   experiments/calibrate/fit-profiles.sh [NAME...]   # default: all six
#
# Each profile is one engine on one GPU generation, fitted from the same
# start (the built-in legacy profile: the default before these profiles,
# which no silicon row shaped) in two stages
# (the step constants on TPOT, then the front end on TTFT), robustly, on the
# rows the simulator can run. The engine settings the file does not state
# are assumptions, per engine (fleetsim calibrate --help):
#   vLLM:          max_num_batched_tokens 8192 (the V1 engine's default for
#                  the API server on GPUs of 70 GB or more), KV admission on
#                  the prompt
#   SGLang:        chunked_prefill_size 8192 (its default), prompt admission
#   TensorRT-LLM:  max_num_tokens 8192 (its default), GUARANTEED_NO_EVICT
# Takes several minutes a profile on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=experiments/calibrate/testdata/silicon-h100-h200-b200.csv
bin=$(mktemp -d)/fleetsim
go build -o "$bin" ./cmd/fleetsim
fit() { # name backend gpus budget description [more inputs]
	local name=$1 backend=$2 gpus=$3 budget=$4 desc=$5
	shift 5
	echo "== $name" >&2
	"$bin" calibrate "$data" "$@" --train "backend=$backend" --train "gpu=$gpus" --skip-unrunnable \
		--robust --two-stage --max-batched-tokens "$budget" --name "$name" --description "$desc" \
		--profile legacy \
		--out "fleetsim-out/profiles/$name" --quiet
	cp "fleetsim-out/profiles/$name/profile.toml" "models/hw/profiles/$name.toml"
}
want=("$@")
run() { [ ${#want[@]} -eq 0 ] || [[ " ${want[*]} " == *" $1 "* ]]; }
# vllm-hopper also fits the one published vLLM throughput of a small BF16
# model on one GPU (testdata/vllm-sharegpt.csv, weighted), a configuration
# the closed-loop rows do not have.
run vllm-hopper && fit vllm-hopper vllm H100,H200 8192 "vLLM 0.1x (V1 engine) on H100/H200: fitted on public closed-loop serving runs (TTFT, TPOT) and vLLM's ShareGPT throughput of Llama-3.1-8B" experiments/calibrate/testdata/vllm-sharegpt.csv
run vllm-blackwell && fit vllm-blackwell vllm B200 8192 "vLLM 0.1x (V1 engine) on B200: fitted on public closed-loop serving runs (TTFT, TPOT)"
run sglang-hopper && fit sglang-hopper sglang H100,H200 8192 "SGLang 0.5 on H100/H200: fitted on public closed-loop serving runs (TTFT, TPOT)"
run sglang-blackwell && fit sglang-blackwell sglang B200 8192 "SGLang 0.5 on B200: fitted on public closed-loop serving runs of DeepSeek-V3/R1 (MoE only)"
run trtllm-hopper && fit trtllm-hopper trtllm H100,H200 8192 "TensorRT-LLM 1.x on H100/H200: fitted on public closed-loop serving runs (TTFT, TPOT)"
run trtllm-blackwell && fit trtllm-blackwell trtllm B200 8192 "TensorRT-LLM 1.x on B200: fitted on public closed-loop serving runs (TTFT, TPOT)"
