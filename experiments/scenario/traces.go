package scenario

import "embed"

// Traces shipped in the binary, so built-in replays need nothing beside it.
// Sources and licences: traces/SOURCES.md.
//
//go:embed traces/*.jsonl traces/*.csv
var traceFS embed.FS

// BuiltinTracePrefix marks a trace path inside the binary, e.g.
// "builtin:conversation_trace.jsonl".
const BuiltinTracePrefix = "builtin:"
