// Package hw is what a replica runs on and what it runs: the GPU and model
// catalog, the precisions and layouts a model can be deployed in, and the
// step model that gives the duration of one engine step, with the engine
// profiles (efficiency constants) it reads.
//
// It knows nothing of requests, replicas or fleets: a replica (package
// models) asks a StepModel how long a step of a given shape lasts, and a
// fleet asks CheckDeployment whether a layout can run at all.
//
// Read it in this order:
//
//	catalog.go    GPU, LLM and Catalog: the built-in GPUs and dense models,
//	              with their sources, and what a scenario adds ([[gpus]],
//	              [[models]]); KV bytes per token
//	moe.go        the mixture-of-experts and multi-head-latent-attention
//	              fields of an LLM, and the built-in MoE models
//	perf.go       Precision; StepShape, StepModel (the roofline-style step
//	              time of a dense TP group) and DecodeRun, a decode-only run's
//	              closed form (DESIGN.md, fixed decision 5); CheckTP,
//	              CheckPrecision
//	layout.go     Layout (TP, DP, EP, PP), Deployment, CheckDeployment and
//	              NewDeployedStepModel: mixture-of-experts GEMMs over the
//	              touched experts, expert parallelism's all-to-all, attention
//	              data parallelism, pipeline stages
//	spec.go       SpecConfig and speculative decoding's step and run
//	profile.go    PerfProfile (an engine's constants), ProfileParams (their
//	              keys and physical bounds, which calibration searches), the
//	              built-in profiles embedded from profiles/*.toml
//	steptally.go  StepRecord (one executed step or run) and StepTally, which
//	              sums records so a run replays under any profile in
//	              O(distinct token counts) (fleetsim calibrate)
//
// To add a GPU or a model, add a row to catalog.go (or moe.go) with its
// source; to add an engine, add a profile under profiles/. Every function
// here is pure: no clock, no randomness, no state but the step model's
// cache of decode-run terms (so a StepModel belongs to one engine).
package hw
