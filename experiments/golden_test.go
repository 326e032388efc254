package experiments

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files: go test ./experiments -run Golden -update
var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from this run")

// goldenRuns is what the golden test runs for a built-in: its arms, its
// [sweep] points, or itself, each with one replication of its full
// workload (all of them take about a second), so failures, spares,
// rollouts and hedges all act.
func goldenRuns(t *testing.T, name string) map[string]*scenario.Scenario {
	t.Helper()
	sc, err := LoadBuiltin(name)
	require.NoError(t, err)
	base, err := sc.Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	out := map[string]*scenario.Scenario{}
	switch {
	case len(base.Arms) >= 2:
		arms, err := ArmsFromScenario(base)
		require.NoError(t, err)
		for _, a := range arms {
			out[name+"--"+a.Name] = a.Scenario
		}
	case len(base.Sweep.Params) > 0:
		var axes []scenario.Axis
		for _, p := range base.Sweep.Params {
			ax, err := scenario.ParseAxis(p)
			require.NoError(t, err)
			axes = append(axes, ax)
		}
		scs, vals, err := SweepScenarios(base, axes)
		require.NoError(t, err)
		for i, s := range scs {
			out[name+"--"+strings.Join(vals[i], "_")] = s
		}
	default:
		out[name] = base
	}
	return out
}

// TestGolden runs every built-in (its arms or sweep points) briefly and
// compares summary.json byte for byte with testdata/golden: a change that
// moves any result shows here, and is accepted by regenerating the goldens
// (-update) in a commit that says why.
func TestGolden(t *testing.T) {
	// Every routing decision the fleets take from their least-outstanding
	// index is also checked against the router's scan.
	defer func(was bool) { fleet.CheckOutstandingIndex = was }(fleet.CheckOutstandingIndex)
	fleet.CheckOutstandingIndex = true
	dir := filepath.Join("testdata", "golden")
	if *update {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	seen := map[string]bool{}
	for _, name := range BuiltinNames() {
		for key, sc := range goldenRuns(t, name) {
			t.Run(key, func(t *testing.T) {
				reps, err := RunReplications(sc, RunOptions{Workers: 1})
				require.NoError(t, err)
				got, err := report.NewArmResult("", reps).SummaryJSON()
				require.NoError(t, err)
				path := filepath.Join(dir, key+".json")
				seen[key+".json"] = true
				if *update {
					require.NoError(t, os.WriteFile(path, got, 0o644))
					return
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "no golden for %s: run go test ./experiments -run Golden -update", key)
				if !bytes.Equal(want, got) {
					t.Errorf("%s differs from its golden summary:\n%s\n(if the change is intended: go test ./experiments -run Golden -update)", key, firstDiff(want, got))
				}
			})
		}
	}
	if !*update {
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			require.True(t, seen[e.Name()], "golden %s has no built-in run any more: remove it", e.Name())
		}
	}
}

// firstDiff shows the first differing line of two texts with context.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  golden: %s\n  now:    %s", i+1, x, y)
		}
	}
	return "(equal lines, different bytes)"
}

// TestGoldenParallel runs the golden runs again on two workers under
// GOMAXPROCS 2, two replications at once, and compares their summary.json
// with the same goldens: results must not depend on the worker count or on
// how the Go scheduler interleaves runs (the outputs of a speed change are
// compared this way too; see bench/compare-outputs.sh).
func TestGoldenParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("reruns every golden scenario; TestGolden covers -short")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, name := range BuiltinNames() {
		for key, sc := range goldenRuns(t, name) {
			t.Run(key, func(t *testing.T) {
				two, err := sc.Derive(OverrideOverlay("run.replications", "2"))
				require.NoError(t, err)
				reps, err := RunReplications(two, RunOptions{Workers: 2})
				require.NoError(t, err)
				require.Len(t, reps, 2)
				got, err := report.NewArmResult("", reps[:1]).SummaryJSON()
				require.NoError(t, err)
				want, err := os.ReadFile(filepath.Join("testdata", "golden", key+".json"))
				require.NoError(t, err)
				if !bytes.Equal(want, got) {
					t.Errorf("%s on 2 workers, GOMAXPROCS 2, differs from its golden summary:\n%s", key, firstDiff(want, got))
				}
			})
		}
	}
}
