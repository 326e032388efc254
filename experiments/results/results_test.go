package results

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFilesAreWellFormed: file names are unique, each file's columns
// (fixed and optional) are unique and named, and Lookup finds every file.
func TestFilesAreWellFormed(t *testing.T) {
	names := map[string]bool{}
	for _, f := range Files {
		require.False(t, names[f.Name], f.Name)
		names[f.Name] = true
		g, ok := Lookup(f.Name)
		require.True(t, ok)
		require.Same(t, f, g)
		cols := map[string]bool{}
		for _, c := range append(append([]Column(nil), f.Columns...), f.Optional...) {
			require.NotEmpty(t, c.Name, f.Name)
			require.NotEmpty(t, c.Meaning, f.Name+" "+c.Name)
			require.False(t, cols[c.Name], f.Name+" "+c.Name)
			cols[c.Name] = true
		}
		require.NotEmpty(t, f.Columns, f.Name)
	}
	require.Len(t, names, 14) // with plan.csv and columns.csv
	_, ok := Lookup("nope.csv")
	require.False(t, ok)
}

// TestWriterQuotesAndRoundTrips: fields with commas, quotes and newlines
// are quoted and read back whole; plain fields are written as they are.
func TestWriterQuotesAndRoundTrips(t *testing.T) {
	tb := NewTable(CDFFile, nil, nil)
	tb.Row("plain", "ttft", "0.5", "12")
	tb.Row("a,b \"c\"\nd", "ttft", "0.5", "12")
	out := tb.Bytes()
	require.True(t, bytes.HasPrefix(out, []byte("arm,metric,quantile,value_ms\nplain,ttft,0.5,12\n")))
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, [][]string{CDFFile.Names(), {"plain", "ttft", "0.5", "12"}, {"a,b \"c\"\nd", "ttft", "0.5", "12"}}, recs)
}

// TestWriterChecksWidth: a row narrower or wider than the header is
// refused (Writer) or panics (Table), naming the file.
func TestWriterChecksWidth(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, SweepFile, []string{"cluster.replicas"}, nil)
	require.Equal(t, 1+len(SweepFile.Columns), len(w.Header()))
	err := w.Write("1", "2")
	require.ErrorContains(t, err, "sweep.csv: a row of 2 fields, the header has 21")
	require.Equal(t, err, w.Flush())
	require.PanicsWithError(t, "results: ab.csv: a row of 1 fields, the header has 9", func() { NewTable(ABFile, nil, nil).Row("x") })
}

// TestHeaderAndLeading: dynamic columns go around the fixed ones, and
// Leading finds those before them.
func TestHeaderAndLeading(t *testing.T) {
	h := ETTRFile.Header([]string{"training.spare_servers", "cluster.replicas"}, nil)
	require.Equal(t, []string{"training.spare_servers", "cluster.replicas", CheckpointIntervalS, ETTR, ETTRCI95, LostGPUHours}, h)
	require.Equal(t, []string{"training.spare_servers", "cluster.replicas"}, ETTRFile.Leading(h))
	require.Empty(t, ETTRFile.Leading(ETTRFile.Names()))
	require.Nil(t, ETTRFile.Leading([]string{"x"}))
	require.Equal(t, []string{Arm, Replication, Seed, "a.b"}, ReplicationsFile.Header(nil, []string{"a.b"}))
}
