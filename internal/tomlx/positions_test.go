package tomlx

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func reflectTypeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

const positionsSrc = `# scenario
name = "x"

[workload.arrival]
rate_per_s = 2.0
tokens = [
  128,
  """multi
line""",
  {inner = 1},
]
text = '''
[not_a_table]
'''
after = 1

[[arms]]
label = "a"
router = { name = "p2c",
           choices = 2 }
[[arms]]
label = "b"
[arms.router]
name = "rr"
[[arms.hedges]]
after_ms = 10
[[arms.hedges]]
after_ms = 20
"quoted.key" = 1
a.b.c = 3
`

func TestDocLines(t *testing.T) {
	doc := newDoc("p.toml", []byte(positionsSrc))
	tests := []struct {
		key  string
		line int
		has  bool
	}{
		{"name", 2, true},
		{"workload", 4, true}, // implied by [workload.arrival]
		{"workload.arrival", 4, true},
		{"workload.arrival.rate_per_s", 5, true},
		{"workload.arrival.tokens", 6, true},
		{"workload.arrival.tokens.0", 7, true},
		{"workload.arrival.tokens.1", 8, true},
		{"workload.arrival.tokens.2", 10, true},
		{"workload.arrival.tokens.2.inner", 10, true},
		{"workload.arrival.text", 12, true},
		{"workload.arrival.after", 15, true},
		{"arms", 17, true},
		{"arms.0", 17, true},
		{"arms.0.label", 18, true},
		{"arms.0.router", 19, true},
		{"arms.0.router.name", 19, true},
		{"arms.0.router.choices", 20, true},
		{"arms.1", 21, true},
		{"arms.1.label", 22, true},
		{"arms.1.router", 23, true},
		{"arms.1.router.name", 24, true},
		{"arms.1.hedges", 25, true},
		{"arms.1.hedges.0.after_ms", 26, true},
		{"arms.1.hedges.1", 27, true},
		{"arms.1.hedges.1.after_ms", 28, true},
		{`arms.1.hedges.1."quoted.key"`, 29, true},
		{"arms.1.hedges.1.a.b.c", 30, true},
		{"arms.1.hedges.1.a", 30, true},
		// absent keys: nearest present parent
		{"workload.arrival.process", 4, false},
		{"arms.1.router.choices", 23, false},
		{"arms.0.router.weights.3", 19, false},
		{"not_a_table", 0, false},
		{"horizon_s", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.line, doc.Line(tc.key), "Line(%q)", tc.key)
		assert.Equal(t, tc.has, doc.Has(tc.key), "Has(%q)", tc.key)
	}
}

func TestDocLinesMatchParser(t *testing.T) {
	// Every key the parser sees is known to the scanner.
	for _, src := range []string{positionsSrc, strings.ReplaceAll(positionsSrc, "\n", "\r\n")} {
		var raw map[string]any
		_, err := safeDecode(src, &raw)
		require.NoError(t, err)
		doc := newDoc("p.toml", []byte(src))
		for _, k := range rawPaths(nil, raw) {
			assert.True(t, doc.Has(k), "scanner misses %s", k)
		}
		assert.Equal(t, 28, doc.Line("arms.1.hedges.1.after_ms"))
	}
}

func TestDocNil(t *testing.T) {
	var d *Doc
	assert.Equal(t, 0, d.Line("a"))
	assert.False(t, d.Has("a"))
	assert.Equal(t, "<input>: a: bad", d.Problems([]config.Problem{{Key: "a", Msg: "bad"}}).Error())
}

func TestProblems(t *testing.T) {
	doc := newDoc("p.toml", []byte(positionsSrc))
	var ps config.Problems
	ps.Positive("workload.arrival.rate_per_s", -1)
	ps.PositiveInt("arms.1.router.choices", 0) // absent: line of [arms.router]
	ps.Add("budget", "must be set")            // absent, no parent: no line
	ps.OneOf("arms.0.router.name", "p2c", []string{"rr"})
	ps.Add("name", "too short")

	e := doc.Problems(ps.List)
	require.NotNil(t, e)
	assert.Equal(t, "p.toml: budget: must be set\n"+
		"p.toml:2: name: too short\n"+
		"p.toml:5: workload.arrival.rate_per_s: must be a finite number > 0, found -1\n"+
		"p.toml:19: arms.0.router.name: unknown name \"p2c\"; valid names: rr\n"+
		"p.toml:23: arms.1.router.choices: must be an integer > 0, found 0", e.Error())
	assert.Equal(t, []Item{
		{Line: 0, Key: "budget", Msg: "must be set"},
		{Line: 2, Key: "name", Msg: "too short"},
		{Line: 5, Key: "workload.arrival.rate_per_s", Msg: "must be a finite number > 0, found -1"},
		{Line: 19, Key: "arms.0.router.name", Msg: `unknown name "p2c"; valid names: rr`},
		{Line: 23, Key: "arms.1.router.choices", Msg: "must be an integer > 0, found 0"},
	}, e.Items)
	require.Error(t, e.Err())

	assert.Nil(t, doc.Problems(nil))
	assert.NoError(t, doc.Problems(nil).Err(), "Err on a nil *Error is a nil error")
}

func TestParentKey(t *testing.T) {
	tests := map[string]string{
		"a":               "",
		"a.b":             "a",
		"a.b.c":           "a.b",
		`a."b.c"`:         "a",
		`"a.b".c`:         `"a.b"`,
		`a."x\".y"`:       "a",
		`a."x\".y".z`:     `a."x\".y"`,
		"arms.1.router.n": "arms.1.router",
	}
	for in, want := range tests {
		assert.Equal(t, want, parentKey(in), in)
	}
	assert.Equal(t, `a."b.c".d`, joinPath([]string{"a", "b.c", "d"}))
	assert.Equal(t, `""`, joinPath([]string{""}))
}

func TestScannerStrings(t *testing.T) {
	src := "\ufeffa = \"x\\\"y\" # c\n" +
		"\"k\\u00e9y\" = 1\n" +
		"'lit.key' = 2\n" +
		"b = \"\"\"q\"\"\"\"\" \n" + // content ends with two quotes
		"c = '''x''''' \n" +
		"d = 1979-05-27 07:32:00Z\n" +
		"e = \"\"\"\\\n  \\\"\"\" \"\"\"\n" +
		"f = 1\n"
	lines := scanLines(src)
	assert.Equal(t, map[string]int{
		"a": 1, `"kéy"`: 2, `"lit.key"`: 3, "b": 4, "c": 5, "d": 6, "e": 7, "f": 9,
	}, lines)
	var raw map[string]any
	_, err := safeDecode(src, &raw)
	require.NoError(t, err)
	assert.Len(t, raw, len(lines))
}
