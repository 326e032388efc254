package tomlx

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testArrival struct {
	Process  string  `toml:"process"`
	RatePerS float64 `toml:"rate_per_s"`
}

type testWorkload struct {
	Arrival testArrival `toml:"arrival"`
	Tokens  []int       `toml:"tokens"`
}

type testRouter struct {
	Name    string `toml:"name"`
	Choices int    `toml:"choices"`
}

type testArm struct {
	Label  string     `toml:"label"`
	Router testRouter `toml:"router"`
}

type testScenario struct {
	Name     string            `toml:"name"`
	Seed     uint64            `toml:"seed"`
	HorizonS float64           `toml:"horizon_s"`
	Replicas int32             `toml:"replicas"`
	Warmup   time.Duration     `toml:"warmup"`
	Start    time.Time         `toml:"start"`
	Workload testWorkload      `toml:"workload"`
	Arms     []testArm         `toml:"arms"`
	Tags     map[string]string `toml:"tags"`
	Extra    map[string]any    `toml:"extra"`
	Notes    string            `toml:"notes"`
}

func defaultScenario() testScenario {
	return testScenario{
		Name:     "default",
		Seed:     1,
		HorizonS: 3600,
		Replicas: 4,
		Workload: testWorkload{Arrival: testArrival{Process: "poisson", RatePerS: 10}},
	}
}

// decodeCases is shared with FuzzDecode as its seed corpus.
var decodeCases = []struct {
	name string
	src  string
	want string // the whole Error() text; "" for success
}{
	{
		name: "valid",
		src: `name = "a"  # comment
seed = 7
[workload.arrival]
rate_per_s = 2.5
[[arms]]
label = "p2c"
router = { name = "p2c", choices = 2 }
[[arms]]
label = "rr"
[arms.router]
name = "round_robin"
`,
	},
	{
		name: "unknown top-level key with suggestion",
		src:  "name = \"a\"\nsead = 3\n",
		want: `test.toml:2: sead: unknown key; did you mean "seed"?`,
	},
	{
		name: "unknown key is case-sensitive",
		src:  "Seed = 3\n",
		want: `test.toml:1: Seed: unknown key; did you mean "seed"?`,
	},
	{
		name: "unknown nested key with suggestion",
		src:  "[workload.arrival]\nproces = \"poisson\"\nrate_per_sec = 3.0\n",
		want: "test.toml:2: workload.arrival.proces: unknown key; did you mean \"process\"?\n" +
			"test.toml:3: workload.arrival.rate_per_sec: unknown key; did you mean \"rate_per_s\"?",
	},
	{
		name: "unknown key without close match lists valid keys",
		src:  "[workload.arrival]\nburstiness = 2\n",
		want: "test.toml:2: workload.arrival.burstiness: unknown key; valid keys in [workload.arrival]: process, rate_per_s",
	},
	{
		name: "unknown table is reported once, not its keys",
		src:  "[cluster]\nreplicas = 3\ngpus = 8\n",
		want: "test.toml:1: cluster: unknown key; valid keys at the top level: arms, extra, horizon_s, name, notes, replicas, seed, start, tags, warmup, workload",
	},
	{
		name: "unknown key in array of tables",
		src:  "[[arms]]\nlabel = \"a\"\n[[arms]]\nlabel = \"b\"\nrouterr = {}\nweight = 1\n",
		want: "test.toml:5: arms.1.routerr: unknown key; did you mean \"router\"?\n" +
			"test.toml:6: arms.1.weight: unknown key; valid keys in [[arms]]: label, router",
	},
	{
		name: "wrong type string for number",
		src:  "[workload.arrival]\nrate_per_s = \"fast\"\n",
		want: `test.toml:2: workload.arrival.rate_per_s: expected a number, found string "fast"`,
	},
	{
		name: "wrong types in array of tables, all reported",
		src:  "[[arms]]\nrouter.choices = 2.5\n[[arms]]\n[arms.router]\nchoices = \"two\"\nname = 3\n",
		want: "test.toml:2: arms.0.router.choices: expected an integer, found float 2.5\n" +
			"test.toml:5: arms.1.router.choices: expected an integer, found string \"two\"\n" +
			"test.toml:6: arms.1.router.name: expected a string, found integer 3",
	},
	{
		name: "table where an array of tables is expected",
		src:  "[arms]\nlabel = \"a\"\n",
		want: "test.toml:1: arms: expected an array, found a table; write [[arms]] once for each element",
	},
	{
		name: "scalar where a table is expected",
		src:  "workload = 5\n",
		want: "test.toml:1: workload: expected a table, found integer 5",
	},
	{
		name: "integer ranges",
		src:  "seed = -1\nreplicas = 3000000000\n",
		want: "test.toml:1: seed: expected a non-negative integer, found integer -1\n" +
			"test.toml:2: replicas: expected an integer between -2147483648 and 2147483647, found integer 3000000000",
	},
	{
		name: "duration",
		src:  "warmup = \"5 minutes\"\n",
		want: `test.toml:1: warmup: expected a duration such as "250ms", "1.5s" or "2h45m", found string "5 minutes"`,
	},
	{
		name: "text unmarshaler",
		src:  "start = \"yesterday\"\n",
		want: `test.toml:1: start: invalid value string "yesterday": parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
	},
	{
		name: "nan and inf anywhere",
		src:  "horizon_s = nan\n[workload]\ntokens = [1,\n  +inf]\n[extra]\nx = { y = -inf }\n",
		want: "test.toml:1: horizon_s: must be a finite number, found nan\n" +
			"test.toml:4: workload.tokens.1: must be a finite number, found inf\n" +
			"test.toml:6: extra.x.y: must be a finite number, found -inf",
	},
	{
		name: "syntax error: unquoted string",
		src:  "name = \"a\"\n[workload.arrival]\nprocess = poisson\n",
		want: `test.toml:3: workload.arrival.process: syntax error at column 11: expected value but found "poisson" instead; hint: text must be quoted, e.g. name = "fast"`,
	},
	{
		name: "syntax error: duplicate key",
		src:  "seed = 1\nseed = 2\n",
		want: "test.toml:2: seed: syntax error at column 1: Key 'seed' has already been defined.; hint: each key and each [table] may appear only once",
	},
	{
		// The newline is the offending token: the error is on the header's
		// line, not the next, and names no key (the last key read is the
		// table before).
		name: "syntax error: unterminated table header",
		src:  "name = \"x\"\n[cluster]\ngpu = \"H100\"\nreplicas = 2\n[workload\nkind = \"x\"\n",
		want: `test.toml:5: syntax error at column 10: expected '.' or ']' to end table name, but got '\n' instead; hint: table headers look like [name] or [[name]]`,
	},
	{
		name: "syntax error: key without a value",
		src:  "name = \"x\"\nrate = \n[cluster]\n",
		want: `test.toml:2: rate: syntax error at column 8: expected value but found '\n' instead; hint: every key needs a value after '='`,
	},
	{
		name: "syntax error: unterminated array",
		src:  "[workload]\ntokens = [1,\n2\n",
		want: "test.toml:3: workload.tokens: syntax error at column 2: expected a comma (',') or array terminator (']'), but got end of file; hint: look for a missing comma or closing bracket",
	},
	{
		name: "lines stay right after multi-line values",
		src: `notes = """
[fake]
seed = "not a key" # nor a comment
"""
[workload]
tokens = [
  1, # a comment with a ] bracket
  2,
]
[extra]
s = '''
]
'''
q = "a # b [c]"
[workload.arrival]
rate = 1
`,
		want: `test.toml:16: workload.arrival.rate: unknown key; did you mean "rate_per_s"?`,
	},
	{
		name: "several problems sorted by line",
		src: `horizon_s = "long"
sead = 1
[workload.arrival]
rate_per_s = inf
[[arms]]
label = 3
[tags]
team = 1
`,
		want: "test.toml:1: horizon_s: expected a number, found string \"long\"\n" +
			"test.toml:2: sead: unknown key; did you mean \"seed\"?\n" +
			"test.toml:4: workload.arrival.rate_per_s: must be a finite number, found inf\n" +
			"test.toml:6: arms.0.label: expected a string, found integer 3\n" +
			"test.toml:8: tags.team: expected a string, found integer 1",
	},
}

func TestDecode(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			got := defaultScenario()
			doc, err := Decode("test.toml", []byte(tc.src), &got)
			require.NotNil(t, doc)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var e *Error
			require.True(t, errors.As(err, &e), "error is %T", err)
			assert.Equal(t, "test.toml", e.File)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

func TestDecodeValues(t *testing.T) {
	src := `name = "a"
seed = 0
warmup = "1m30s"
[workload.arrival]
rate_per_s = 2
[[arms]]
label = "p2c"
router = { name = "p2c", choices = 2 }
[[arms]]
label = "rr"
[arms.router]
name = "round_robin"
[extra]
anything = [1, "two", { three = 3.0 }]
`
	got := defaultScenario()
	doc, err := Decode("s.toml", []byte(src), &got)
	require.NoError(t, err)

	want := defaultScenario()
	want.Name = "a"
	want.Seed = 0
	want.Warmup = 90 * time.Second
	want.Workload.Arrival.RatePerS = 2 // an integer is accepted for a float
	want.Arms = []testArm{
		{Label: "p2c", Router: testRouter{Name: "p2c", Choices: 2}},
		{Label: "rr", Router: testRouter{Name: "round_robin"}},
	}
	want.Extra = map[string]any{"anything": []any{int64(1), "two", map[string]any{"three": 3.0}}}
	assert.Equal(t, want, got)
	assert.Equal(t, "poisson", got.Workload.Arrival.Process, "absent key keeps its default")

	assert.True(t, doc.Has("seed"), "set to 0 is present")
	assert.False(t, doc.Has("horizon_s"), "absent keeps the default")
	assert.Equal(t, "s.toml", doc.File())
}

func TestDecodeBadTarget(t *testing.T) {
	var notPointer testScenario
	var nilPointer *testScenario
	var scalar int
	for _, v := range []any{notPointer, nilPointer, &scalar, nil} {
		doc, err := Decode("x.toml", []byte("a = 1\n"), v)
		require.NotNil(t, doc)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "x.toml: tomlx: Decode needs a non-nil pointer")
	}
}

func TestDecodeIntoMap(t *testing.T) {
	got := map[string]float64{}
	_, err := Decode("m.toml", []byte("a = 1\nb = 2.5\nc = \"x\"\nd = nan\n"), &got)
	require.Error(t, err)
	assert.Equal(t, "m.toml:3: c: expected a number, found string \"x\"\nm.toml:4: d: must be a finite number, found nan", err.Error())
}

func TestDecodeEmptyFilename(t *testing.T) {
	var s testScenario
	_, err := Decode("", []byte("x = 1\n"), &s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "<input>:1: x: unknown key")
}

type embeddedBase struct {
	ID   string `toml:"id"`
	Kind string `toml:"kind"`
}

type withEmbedded struct {
	embeddedBase
	Kind   int    `toml:"kind"` // hides embeddedBase.Kind
	Hidden string `toml:"-"`
	Plain  bool
	//lint:ignore U1000 an unexported field the decoder must skip
	secret int
}

func TestStructFields(t *testing.T) {
	fields := structFields(reflectTypeOf[withEmbedded]())
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	assert.ElementsMatch(t, []string{"id", "kind", "Plain"}, names)
	assert.Equal(t, "int", fields["kind"].String())

	var w withEmbedded
	_, err := Decode("e.toml", []byte("id = \"x\"\nkind = 3\nPlain = true\nHidden = \"h\"\n"), &w)
	require.Error(t, err)
	assert.Equal(t, `e.toml:4: Hidden: unknown key; valid keys at the top level: Plain, id, kind`, err.Error())

	_, err = Decode("e.toml", []byte("id = \"x\"\nkind = 3\nPlain = true\n"), &w)
	require.NoError(t, err)
	assert.Equal(t, withEmbedded{embeddedBase: embeddedBase{ID: "x"}, Kind: 3, Plain: true}, w)
}

func TestSuggest(t *testing.T) {
	names := []string{"choices", "horizon_s", "name", "rate_per_s", "warmup"}
	tests := []struct {
		key  string
		want string // "" for no suggestion
	}{
		{"nmae", "name"},      // transposition: one edit
		{"Name", "name"},      // case
		{"choice", "choices"}, // deletion
		{"rate_per_sec", "rate_per_s"},
		{"horizon_ms", "horizon_s"},
		{"rate", "rate_per_s"}, // unit suffix missing
		{"warmup_s", "warmup"}, // unit suffix added
		{"nam", "name"},
		{"rete", ""}, // two edits is too many for four letters
		{"zzz", ""},
		{"", ""},
	}
	for _, tc := range tests {
		got, ok := suggest(tc.key, names)
		assert.Equal(t, tc.want != "", ok, tc.key)
		assert.Equal(t, tc.want, got, tc.key)
	}
	_, ok := suggest("rate", []string{"rate_per_s", "rate_per_min"})
	assert.False(t, ok, "two suffix matches: no suggestion")

	assert.Equal(t, 3, editDistance("kitten", "sitting"))
	assert.Equal(t, 1, editDistance("ab", "ba"))
	assert.Equal(t, 0, editDistance("", ""))
	assert.Equal(t, 2, editDistance("µs", ""))
}

// TestSyntaxHints pins the parser's line, column and message (columns are
// BurntSushi's, which may point just before the offending text) and our hint.
func TestSyntaxHints(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"a =\n", "test.toml:1: a: syntax error at column 4: expected value but found '\\n' instead; hint: every key needs a value after '='"},
		{"a = \"x\nb = 1\n", "test.toml:1: a: syntax error at column 7: strings cannot contain newlines; hint: use \"\"\"triple quotes\"\"\" for a multi-line string"},
		{"a = 1 b = 2\n", "test.toml:1: syntax error at column 6: expected a top-level item to end with a newline, comment, or EOF, but got 'b' instead; hint: put each key = value on its own line"},
		{"a = 1990-13-01\n", "test.toml:1: a: syntax error at column 5: invalid datetime: \"1990-13-01\"; hint: datetimes look like 2006-01-02 or 2006-01-02T15:04:05Z; quote the value if it is text"},
		{"a = 01\n", "test.toml:1: a: syntax error at column 5: Invalid integer \"01\": cannot have leading zeroes; hint: numbers look like 42, -3, 1.5, 2e-3 or 1_000"},
	}
	for _, tc := range tests {
		var s testScenario
		_, err := Decode("test.toml", []byte(tc.src), &s)
		require.Error(t, err, tc.src)
		assert.Equal(t, tc.want, err.Error(), tc.src)
	}
}

func TestDecodeItem(t *testing.T) {
	doc := newDoc("d.toml", []byte("[a]\nb = 1\n"))
	tests := []struct {
		err  error
		want Item
	}{
		{errors.New(`toml: line 2 (last key "a.b"): incompatible types: TOML value has type int64; destination has type string`),
			Item{Line: 2, Key: "a.b", Msg: "incompatible types: TOML value has type int64; destination has type string"}},
		{errors.New(`toml: (last key "a.c"): something`), Item{Line: 1, Key: "a.c", Msg: "something"}},
		{errors.New(`toml: cannot decode to a map`), Item{Msg: "cannot decode to a map"}},
		{errors.New(`boom`), Item{Msg: "boom"}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, decodeItem(doc, tc.err))
	}
}
