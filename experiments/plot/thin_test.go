package plot

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
)

// TestThin: a long line is drawn with at most about maxLinePoints points,
// keeping its first and last points and every bucket's extremes (a single
// spike survives); a short one is kept whole.
func TestThin(t *testing.T) {
	short := plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 2}}
	require.Equal(t, short, thin(short, 10))
	long := make(plotter.XYs, 1_000_000)
	for i := range long {
		long[i] = plotter.XY{X: float64(i), Y: 1}
	}
	long[777_777].Y = 99
	got := thin(long, maxLinePoints)
	require.LessOrEqual(t, len(got), maxLinePoints+2)
	require.Equal(t, long[0], got[0])
	require.Equal(t, long[len(long)-1], got[len(got)-1])
	require.Contains(t, got, plotter.XY{X: 777_777, Y: 99})
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].X, got[i].X)
	}
}

// TestLongTimeseriesMemory: building the figures of a 100,000-sample time
// series allocates a small multiple of the file, not a copy of every row
// per figure (it was 1 GB; an 80 MB timeseries.csv took 3.8 GB and 200 s to
// plot, 0.8 GB and 22 s now).
func TestLongTimeseriesMemory(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("arm,replication,time_s,arrivals_per_s,completions_per_s,in_flight,waiting,kv_used_frac,kv_cached_frac,available_replicas,provisioned_replicas,usd_per_hour\n")
	for i := range 100_000 {
		fmt.Fprintf(&b, ",0,%d,5.123,4.987,12,3,0.4123,0.1234,1,1,98.5\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "timeseries.csv"), []byte(b.String()), 0o644))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	names, err := Check(dir)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Contains(t, names, "load_timeseries")
	alloc := after.TotalAlloc - before.TotalAlloc
	require.Less(t, alloc, uint64(40*b.Len()), "allocated %d MB for a %d MB file", alloc>>20, b.Len()>>20)
}
