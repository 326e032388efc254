// Package workloads produces demand: arrival processes, token-length
// distributions, sessions with shared prefixes, and streaming readers for
// public traces (Mooncake JSONL, Azure LLM inference CSV). Everything is a
// Source that yields Requests in arrival order without holding the whole
// workload in memory.
package workloads
