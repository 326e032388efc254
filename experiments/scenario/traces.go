package scenario

import (
	"embed"
	"io/fs"
	"strings"
)

// Traces shipped in the binary, so built-in replays need nothing beside it.
// Sources and licences: traces/SOURCES.md.
//
//go:embed traces/*.jsonl traces/*.csv
var traceFS embed.FS

// BuiltinTracePrefix marks a trace path inside the binary, e.g.
// "builtin:conversation_trace.jsonl".
const BuiltinTracePrefix = "builtin:"

// BuiltinTrace resolves a "builtin:NAME" trace path to the file system and
// path inside the binary that hold it; ok is false for any other path.
func BuiltinTrace(path string) (fsys fs.FS, inner string, ok bool) {
	name, ok := strings.CutPrefix(path, BuiltinTracePrefix)
	if !ok {
		return nil, "", false
	}
	return traceFS, "traces/" + name, true
}
