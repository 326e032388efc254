package workloads

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleTrace returns the path of a shared sample trace, skipping the test
// when the shared data is not there (the product never needs it).
func sampleTrace(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "data", "traces", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("sample trace %s not available: %v", name, err)
	}
	return p
}

func readAll(t *testing.T, r TraceReader) ([]Request, error) {
	t.Helper()
	var out []Request
	for {
		req, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, req)
	}
}

func TestMooncakeSample(t *testing.T) {
	path := sampleTrace(t, "conversation_trace.jsonl")
	r, err := OpenTrace(path, "", TraceOptions{})
	require.NoError(t, err)
	defer r.Close()
	rs, err := readAll(t, r)
	require.NoError(t, err)
	require.Len(t, rs, 12031)
	checkOrder(t, rs)
	assert.Equal(t, sim.Time(0), rs[0].Arrival)
	assert.Equal(t, 3536999*sim.Millisecond, rs[len(rs)-1].Arrival)
	assert.Zero(t, r.ZeroOutputs())
	assert.Zero(t, r.ZeroInputs())

	// The chained segment hashes give the same unbounded-cache reuse as the
	// hash_ids themselves (TraceStats): 37.4% of input tokens.
	seen := map[uint64]bool{}
	var tokens, reused int64
	for _, q := range rs {
		require.Equal(t, q.InputTokens, q.PrefixTokens(), "hash_ids cover the prompt")
		reusing := true
		for _, s := range q.Prefix {
			tokens += int64(s.Tokens)
			if reusing && seen[s.Hash] {
				reused += int64(s.Tokens)
			} else {
				reusing = false
			}
		}
		for _, s := range q.Prefix {
			seen[s.Hash] = true
		}
	}
	assert.InDelta(t, 0.3736, float64(reused)/float64(tokens), 0.0001)
}

func TestTraceOptions(t *testing.T) {
	path := sampleTrace(t, "conversation_trace.jsonl")
	r, err := OpenTrace(path, FormatMooncake, TraceOptions{RateMultiplier: 2, MaxRequests: 5000})
	require.NoError(t, err)
	defer r.Close()
	fast, err := readAll(t, r)
	require.NoError(t, err)
	require.Len(t, fast, 5000)

	c := DefaultConfigFor(KindTrace)
	c.Trace.Path = path
	c.MaxRequests = 5000
	src, err := New(c, sim.Streams{})
	require.NoError(t, err)
	defer src.(io.Closer).Close()
	normal := drain(t, src, 0)
	require.Len(t, normal, 5000)
	for i := range fast {
		require.Equal(t, normal[i].Arrival/2, fast[i].Arrival, "twice as fast")
	}

	c.MaxRequests, c.DurationS = 0, 60
	src, err = New(c, sim.Streams{})
	require.NoError(t, err)
	defer src.(io.Closer).Close()
	minute := drain(t, src, 0)
	assert.LessOrEqual(t, minute[len(minute)-1].Arrival, sim.Minute)
	assert.InDelta(t, 204, len(minute), 80, "about 3.4 req/s")
}

func TestAzureSample(t *testing.T) {
	path := sampleTrace(t, "AzureLLMInferenceTrace_code.csv")
	c := DefaultConfigFor(KindTrace)
	c.Trace.Path = path
	src, err := New(c, sim.Streams{})
	require.NoError(t, err)
	rs := drain(t, src, 0)
	require.NoError(t, src.(io.Closer).Close())
	require.Len(t, rs, 8819)
	checkOrder(t, rs)
	assert.Equal(t, sim.Time(0), rs[0].Arrival)
	// 18:17:03.9799600 to 19:14:19.9280160.
	assert.Equal(t, 57*sim.Minute+15*sim.Second+948056*sim.Microsecond, rs[len(rs)-1].Arrival)
	assert.Equal(t, Request{ID: 1, InputTokens: 4808, OutputTokens: 10}, rs[0])
	assert.Equal(t, 52*sim.Millisecond, rs[1].Arrival)
}

func TestTraceStats(t *testing.T) {
	t.Run("mooncake", func(t *testing.T) {
		st, err := TraceStats(sampleTrace(t, "conversation_trace.jsonl"), "")
		require.NoError(t, err)
		assert.Equal(t, FormatMooncake, st.Format)
		assert.Equal(t, int64(12031), st.Rows)
		assert.InDelta(t, 3536.999, st.SpanS, 1e-9)
		assert.InDelta(t, 3.40, st.RatePerS, 0.005)
		assert.InDelta(t, 12035, st.Input.Mean, 0.5)
		assert.Equal(t, int64(6909), st.Input.P50)
		assert.Equal(t, int64(85401), st.Input.P99)
		assert.InDelta(t, 343, st.Output.Mean, 0.5)
		assert.InDelta(t, 35.13, st.InputOutputRatio, 0.01)
		assert.True(t, st.HasPrefix)
		assert.InDelta(t, 0.3736, st.PrefixReuseTokens, 0.0001, "token-weighted reuse 37.4%")
		assert.InDelta(t, 0.3664, st.PrefixReuseBlocks, 0.0001, "block-weighted reuse 36.6%")
	})
	t.Run("azure", func(t *testing.T) {
		st, err := TraceStats(sampleTrace(t, "AzureLLMInferenceTrace_code.csv"), "")
		require.NoError(t, err)
		assert.Equal(t, FormatAzure, st.Format)
		assert.Equal(t, int64(8819), st.Rows)
		assert.InDelta(t, 2.57, st.RatePerS, 0.005)
		assert.InDelta(t, 2048, st.Input.Mean, 0.5)
		assert.Equal(t, int64(1469), st.Input.P50)
		assert.Equal(t, int64(7436), st.Input.P99)
		assert.InDelta(t, 28, st.Output.Mean, 0.5)
		assert.Equal(t, int64(13), st.Output.P50)
		assert.Equal(t, int64(252), st.Output.P99)
		assert.False(t, st.HasPrefix)
		assert.Zero(t, st.PrefixReuseTokens)
	})
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestTraceStatsSmall(t *testing.T) {
	// Request 2 reuses block 1 but not block 3 (new after 2's first miss
	// breaks the prefix), request 3 reuses 1 and 2 but not 9.
	p := writeTemp(t, "t.jsonl", `{"timestamp": 1000, "input_length": 1000, "output_length": 0, "hash_ids": [1, 2]}
{"timestamp": 2000, "input_length": 1100, "output_length": 100, "hash_ids": [1, 3, 2]}
{"timestamp": 5000, "input_length": 1100, "output_length": 300, "hash_ids": [1, 2, 9]}
`)
	st, err := TraceStats(p, "")
	require.NoError(t, err)
	assert.Equal(t, int64(3), st.Rows)
	assert.InDelta(t, 4.0, st.SpanS, 1e-12)
	assert.InDelta(t, 0.75, st.RatePerS, 1e-12)
	assert.Equal(t, LengthStats{Mean: 400.0 / 3, P50: 100, P99: 300, Min: 0, Max: 300, Sum: 400}, st.Output)
	assert.Equal(t, int64(1), st.ZeroOutputs)
	assert.InDelta(t, (512.0+512+512)/3200, st.PrefixReuseTokens, 1e-12)
	assert.InDelta(t, 3.0/8, st.PrefixReuseBlocks, 1e-12)
	assert.InDelta(t, 3200.0/400, st.InputOutputRatio, 1e-12)
}

func TestMooncakeReader(t *testing.T) {
	in := `{"timestamp": 100, "input_length": 1100, "output_length": 0, "hash_ids": [7, 8, 9], "extra": "ignored"}

{"timestamp": 100.5, "input_length": 600, "output_length": 5, "hash_ids": [7, 4]}
{"timestamp": 101, "input_length": 0, "output_length": 5, "hash_ids": []}
{"timestamp": 102, "input_length": 2000, "output_length": 5}
`
	r := NewMooncakeReader(strings.NewReader(in), "t.jsonl", TraceOptions{})
	rs, err := readAll(t, r)
	require.NoError(t, err)
	require.Len(t, rs, 4)
	assert.Equal(t, []int32{512, 512, 76}, tokensOf(rs[0].Prefix))
	assert.Equal(t, int32(1), rs[0].OutputTokens, "0 is read as 1")
	assert.Equal(t, int64(1), r.ZeroOutputs())
	assert.Equal(t, []int32{512, 88}, tokensOf(rs[1].Prefix))
	assert.Equal(t, rs[0].Prefix[0].Hash, rs[1].Prefix[0].Hash, "same first id, same hash")
	assert.NotEqual(t, rs[0].Prefix[1].Hash, rs[1].Prefix[1].Hash)
	assert.Equal(t, 500*sim.Microsecond, rs[1].Arrival, "fractional ms")
	assert.Equal(t, Request{ID: 3, Arrival: sim.Millisecond, InputTokens: 1, OutputTokens: 5}, rs[2])
	assert.Equal(t, int64(1), r.ZeroInputs())
	assert.Nil(t, rs[3].Prefix, "no hash_ids, no prefix")
	assert.NoError(t, r.Close())
}

func tokensOf(segs []Segment) []int32 {
	var out []int32
	for _, s := range segs {
		out = append(out, s.Tokens)
	}
	return out
}

func TestMooncakeErrors(t *testing.T) {
	const good = `{"timestamp": 5, "input_length": 10, "output_length": 3, "hash_ids": [1]}` + "\n"
	tests := []struct {
		name, line, want string
	}{
		{"negative output", `{"timestamp": 5, "input_length": 10, "output_length": -3, "hash_ids": [1]}`,
			"t.jsonl:3: output_length: expected integer in [0, 2147483647], found -3"},
		{"fractional output", `{"timestamp": 5, "input_length": 10, "output_length": 3.5}`,
			"t.jsonl:3: output_length: expected integer, found number 3.5"},
		{"string length", `{"timestamp": 5, "input_length": "10", "output_length": 3}`,
			"t.jsonl:3: input_length: expected integer, found string"},
		{"missing", `{"timestamp": 5, "output_length": 3}`, "t.jsonl:3: input_length: missing"},
		{"null", `{"timestamp": 5, "input_length": null, "output_length": 3}`, "t.jsonl:3: input_length: missing"},
		{"missing timestamp", `{"input_length": 10, "output_length": 3}`, "t.jsonl:3: timestamp: missing"},
		{"negative timestamp", `{"timestamp": -1, "input_length": 10, "output_length": 3}`,
			"t.jsonl:3: timestamp: expected milliseconds >= 0, found -1"},
		{"going back", `{"timestamp": 4, "input_length": 10, "output_length": 3}`,
			"t.jsonl:3: timestamp: expected >= 5 (the previous row's), found 4"},
		{"too many ids", `{"timestamp": 5, "input_length": 513, "output_length": 3, "hash_ids": [1, 2, 3]}`,
			"t.jsonl:3: hash_ids: expected at most 2 ids for input_length 513 (512-token blocks), found 3"},
		{"bad ids", `{"timestamp": 5, "input_length": 10, "output_length": 3, "hash_ids": "x"}`,
			"t.jsonl:3: hash_ids: expected array of integers, found string"},
		{"not JSON", `{"timestamp": 5,`, "t.jsonl:3: invalid JSON: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewMooncakeReader(strings.NewReader(good+"\n"+tt.line+"\n"+good), "t.jsonl", TraceOptions{})
			_, err := r.Next()
			require.NoError(t, err)
			_, err = r.Next()
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			var te *TraceError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, 3, te.Line)
		})
	}
	r := NewMooncakeReader(strings.NewReader(good), "t.jsonl", TraceOptions{RateMultiplier: -1})
	_, err := r.Next()
	assert.Error(t, err, "bad multiplier")
}

func TestAzureReader(t *testing.T) {
	in := "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
		"2023-11-16 18:17:03.9799600,4808,10\n" +
		"2023-11-16 18:17:04.0319600, 3180 ,0\n" +
		"\"2023-11-16 18:17:05\",1,2\n"
	r := NewAzureReader(strings.NewReader(in), "a.csv", TraceOptions{RateMultiplier: 4})
	rs, err := readAll(t, r)
	require.NoError(t, err)
	assert.Equal(t, []Request{
		{ID: 1, Arrival: 0, InputTokens: 4808, OutputTokens: 10},
		{ID: 2, Arrival: 13 * sim.Millisecond, InputTokens: 3180, OutputTokens: 1},
		{ID: 3, Arrival: 255010 * sim.Microsecond, InputTokens: 1, OutputTokens: 2},
	}, rs)
	assert.Equal(t, int64(1), r.ZeroOutputs())

	// The 2024 traces: other column order, zone offsets.
	in = "ContextTokens,TIMESTAMP,GeneratedTokens,Extra\n" +
		"100,2024-05-10 00:00:00.009930+00:00,7,x\n" +
		"200,2024-05-10 00:00:01.5+00:00,8,y\n"
	rs, err = readAll(t, NewAzureReader(strings.NewReader(in), "b.csv", TraceOptions{MaxRequests: 1}))
	require.NoError(t, err)
	assert.Equal(t, []Request{{ID: 1, InputTokens: 100, OutputTokens: 7}}, rs)
	rs, err = readAll(t, NewAzureReader(strings.NewReader(in), "b.csv", TraceOptions{}))
	require.NoError(t, err)
	assert.Equal(t, 1490070*sim.Microsecond, rs[1].Arrival)
}

func TestAzureErrors(t *testing.T) {
	const header = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	const good = "2023-11-16 18:17:03.9799600,4808,10\n"
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "a.csv:1: empty file: expected a header TIMESTAMP,ContextTokens,GeneratedTokens"},
		{"missing column", "TIMESTAMP,ContextTokens\n" + good,
			`a.csv:1: header: missing column GeneratedTokens (none of the header's 2 fields is named so)`},
		{"negative", header + good + "2023-11-16 18:17:04,-5,3\n",
			`a.csv:3: ContextTokens: expected integer in [0, 2147483647], found "-5"`},
		{"not a number", header + good + "2023-11-16 18:17:04,5,x\n",
			`a.csv:3: GeneratedTokens: expected integer in [0, 2147483647], found "x"`},
		{"short row", header + good + "2023-11-16 18:17:04,5\n", "a.csv:3: expected at least 3 fields, found 2"},
		{"bad time", header + good + "16/11/2023 18:17,5,5\n",
			`a.csv:3: TIMESTAMP: expected a time like 2023-11-16 18:17:03.9799600, found "16/11/2023 18:17"`},
		{"going back", header + good + "2023-11-16 18:17:03,5,5\n",
			"a.csv:3: TIMESTAMP: expected >= 2023-11-16 18:17:03.97996 (the previous row's), found 2023-11-16 18:17:03"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(t, NewAzureReader(strings.NewReader(tt.in), "a.csv", TraceOptions{}))
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		path, format, want string
		ok                 bool
	}{
		{"a/b.jsonl", "", FormatMooncake, true},
		{"b.JSONL", "", FormatMooncake, true},
		{"b.csv", "", FormatAzure, true},
		{"b.txt", "", "", false},
		{"b.txt", FormatAzure, FormatAzure, true},
		{"b.csv", FormatMooncake, FormatMooncake, true},
		{"b.csv", "parquet", "", false},
	}
	for _, tt := range tests {
		got, err := DetectFormat(tt.path, tt.format)
		assert.Equal(t, tt.want, got, "%s %q", tt.path, tt.format)
		assert.Equal(t, tt.ok, err == nil, "%s %q: %v", tt.path, tt.format, err)
	}
	_, err := OpenTrace(filepath.Join(t.TempDir(), "none.csv"), "", TraceOptions{})
	assert.Error(t, err)
	_, err = TraceStats("x.parquet", "")
	assert.Error(t, err)
}

// FuzzMooncakeReader checks that no line crashes the reader and that what
// it accepts satisfies the Request contract. `go test` runs the seeds only.
func FuzzMooncakeReader(f *testing.F) {
	f.Add(`{"timestamp": 0, "input_length": 1100, "output_length": 3, "hash_ids": [1, 2, 3]}`)
	f.Add(`{"timestamp": 1e300, "input_length": 0, "output_length": 0, "hash_ids": []}`)
	f.Add(`{"timestamp": 1, "input_length": 2147483647, "output_length": 1, "hash_ids": [-1]}`)
	f.Add(`[1, 2]`)
	f.Fuzz(func(t *testing.T, line string) {
		r := NewMooncakeReader(strings.NewReader(line+"\n"+line), "f.jsonl", TraceOptions{RateMultiplier: 0.5})
		for {
			q, err := r.Next()
			if err != nil {
				return
			}
			if q.InputTokens < 1 || q.OutputTokens < 1 || q.PrefixTokens() > q.InputTokens || q.Arrival < 0 {
				t.Fatalf("bad request %+v from %q", q, line)
			}
		}
	})
}
