package tomlx

import (
	"errors"
	"strconv"
	"testing"
)

func itoa(i int) string { return strconv.Itoa(i) }

// FuzzDecode checks that Decode never panics, that every error it returns
// is a non-empty *Error, and that on every document the parser accepts the
// line scanner knows every key the parser found. Normal `go test` runs only the seed corpus; fuzz
// with `go test -run '^$' -fuzz FuzzDecode -fuzztime 20s ./internal/tomlx/`.
func FuzzDecode(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add(tc.src)
	}
	f.Add(positionsSrc)
	f.Add("a = [[[[{b = [1, {c = '''\n'''}]}]]]]\n[[x.y]]\n[x.y.z]\n[[x.y]]\n")
	f.Add("\"\"\"\n'''\n\"\\")
	f.Fuzz(func(t *testing.T, src string) {
		s := defaultScenario()
		doc, err := Decode("fuzz.toml", []byte(src), &s)
		if doc == nil {
			t.Fatal("nil Doc")
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.Items) == 0 {
				t.Fatalf("error %T %q is not a non-empty *Error", err, err)
			}
			_ = err.Error()
		}
		var raw map[string]any
		if _, perr := safeDecode(src, &raw); perr == nil {
			for _, k := range rawPaths(nil, raw) {
				if !doc.Has(k) {
					t.Fatalf("scanner misses key %s", k)
				}
			}
		}
		for k := range doc.lines {
			if doc.Line(k) <= 0 || !doc.Has(k) {
				t.Fatalf("key %q recorded without a line", k)
			}
			_ = doc.Line(k + ".absent")
		}
	})
}

// rawPaths lists the key path of every value and table in a parsed tree.
func rawPaths(path []string, v any) []string {
	var out []string
	if len(path) > 0 {
		out = append(out, joinPath(path))
	}
	switch d := v.(type) {
	case map[string]any:
		for k, e := range d {
			out = append(out, rawPaths(extend(path, k), e)...)
		}
	case []map[string]any:
		for i, e := range d {
			out = append(out, rawPaths(extend(path, itoa(i)), e)...)
		}
	case []any:
		for i, e := range d {
			out = append(out, rawPaths(extend(path, itoa(i)), e)...)
		}
	}
	return out
}
