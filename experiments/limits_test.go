package experiments

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/stretchr/testify/require"
)

// burstTOML sends n requests at once (10^6 per s) to one replica: every
// one is in flight when the last arrives, so the run's peak in flight is
// exactly n.
func burstTOML(n, maxInFlight int) string {
	return fmt.Sprintf(`name = "burst"
[cluster]
model = "llama-3-8b"
tp = 1
replicas = 1
[workload]
max_requests = %d
duration_s = 0
[workload.arrival]
rate_per_s = 1e6
[run]
max_in_flight = %d
`, n, maxInFlight)
}

// TestMaxInFlight: a run whose peak in flight is exactly the cap finishes;
// one whose peak is one past it stops with the overload reason in its
// summary and conserves its requests (the rest are in flight).
func TestMaxInFlight(t *testing.T) {
	for _, tc := range []struct {
		cap     int
		stopped bool
	}{{50, false}, {49, true}} {
		sc, err := scenario.Parse("burst.toml", []byte(burstTOML(50, tc.cap)))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		r := s.Requests
		require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
		if !tc.stopped {
			require.Empty(t, s.Sim.Stopped)
			require.EqualValues(t, 50, r.Completed)
			continue
		}
		require.Contains(t, s.Sim.Stopped, "overload: more than 49 requests in flight")
		require.EqualValues(t, 50, r.Arrived)
		require.EqualValues(t, 50, r.InFlight)
		var b strings.Builder
		require.NoError(t, s.WriteTable(&b))
		require.Contains(t, b.String(), "STOPPED EARLY: overload")
	}
	_, err := scenario.Parse("burst.toml", []byte(burstTOML(5, 0)))
	require.ErrorContains(t, err, "run.max_in_flight: must be between 1 and 4000000, found 0")
	_, err = scenario.Parse("burst.toml", []byte(burstTOML(5, scenario.MaxInFlightLimit)))
	require.NoError(t, err)
	_, err = scenario.Parse("burst.toml", []byte(burstTOML(5, scenario.MaxInFlightLimit+1)))
	require.ErrorContains(t, err, "run.max_in_flight")
}

// TestBuiltinsUnderInFlightCap: the built-in scenarios never come near the
// cap (so it changes no golden).
func TestBuiltinsUnderInFlightCap(t *testing.T) {
	for _, n := range BuiltinNames() {
		sc, err := LoadBuiltin(n)
		require.NoError(t, err)
		require.Equal(t, scenario.DefaultMaxInFlight, sc.Run.MaxInFlight, n)
	}
}

// TestResourceLimits: each limit at the limit and one past it.
func TestResourceLimits(t *testing.T) {
	parse := func(body string) error {
		_, err := scenario.Parse("lim.toml", []byte("name = \"lim\"\n"+body))
		return err
	}
	pool := func(replicas, tp int) string {
		return fmt.Sprintf("[cluster]\nmodel = \"llama-3-8b\"\ntp = %d\nreplicas = %d\n", tp, replicas)
	}
	require.NoError(t, parse(pool(scenario.MaxReplicas, 1)))
	require.ErrorContains(t, parse(pool(scenario.MaxReplicas+1, 1)), "lim.toml:5: cluster.replicas: at most 100000 replicas")
	require.NoError(t, parse(pool(scenario.MaxFleetGPUs/8, 8)))
	require.ErrorContains(t, parse(pool(scenario.MaxFleetGPUs/8+1, 8)), "at most 500000 GPUs in one pool")
	fb := func(replicas int) string {
		return fmt.Sprintf("[fallback]\nenabled = true\nreplicas = %d\n", replicas)
	}
	require.NoError(t, parse(fb(scenario.MaxReplicas)))
	require.ErrorContains(t, parse(fb(scenario.MaxReplicas+1)), "fallback.replicas: at most 100000")

	load := func(rate, dur string) string {
		return "[workload]\nduration_s = " + dur + "\n[workload.arrival]\nrate_per_s = " + rate + "\n"
	}
	require.NoError(t, parse(load("100000", "1000")))
	require.ErrorContains(t, parse(load("100000", "1000.00001")), "at most 100000000 per replication")
	require.ErrorContains(t, parse(load("1e308", "600")), "workload.arrival.rate_per_s")
	// A shorter horizon or max_requests bound the expected requests.
	require.NoError(t, parse(load("1e6", "600")+"[run]\nhorizon_s = 100\n"))
	require.NoError(t, parse("[workload]\nduration_s = 600\nmax_requests = 100000000\n[workload.arrival]\nrate_per_s = 1e6\n"))
	require.ErrorContains(t, parse("[workload]\nduration_s = 600\nmax_requests = 100000001\n[workload.arrival]\nrate_per_s = 1e6\n"),
		"workload.max_requests")
	// Every arrival process counts (issue 33 item 4): a piecewise profile's
	// integral times its scale, and a session's turns.
	pw := func(points, scale string) string {
		return "[workload]\nduration_s = 1000\n[workload.arrival]\nprocess = \"piecewise\"\ninterpolation = \"step\"\npoints = " +
			points + "\nscale = " + scale + "\n"
	}
	require.NoError(t, parse(pw("[[0, 100000]]", "1")))
	require.ErrorContains(t, parse(pw("[[0, 100000], [500, 100001]]", "1")), "workload.arrival.points: 1e+08 expected requests")
	require.ErrorContains(t, parse(pw("[[0, 1]]", "1e6")), "at most 100000000 per replication")
	ses := func(rate, turns string) string {
		return "[workload]\nkind = \"sessions\"\nduration_s = 1000\n[workload.arrival]\nrate_per_s = " + rate +
			"\n[workload.sessions.turns]\ndist = \"fixed\"\nmean = " + turns + "\n"
	}
	require.NoError(t, parse(ses("1000", "100")))
	require.ErrorContains(t, parse(ses("1000", "101")), "rate_per_s × the mean turns per session over 1000 s")
	stages := "[workload]\n[[workload.stages]]\nduration_s = 1000\nrate_per_s = 100000\n[[workload.stages]]\nduration_s = 1\nrate_per_s = 1\n"
	require.ErrorContains(t, parse(stages), "workload.stages")
}

// TestNameLimits: names of MaxNameLen bytes pass, one more is refused;
// path and CSV characters are refused with file:line.
func TestNameLimits(t *testing.T) {
	ok := strings.Repeat("a", scenario.MaxNameLen)
	_, err := scenario.Parse("n.toml", []byte("name = \""+ok+"\"\n"))
	require.NoError(t, err)
	_, err = scenario.Parse("n.toml", []byte("name = \""+ok+"a\"\n"))
	require.ErrorContains(t, err, "n.toml:1: name: at most 100 bytes, found 101")
	for _, bad := range []string{"../x", "a/b", `a\\b`, ".x", "a,b", `a\nb`, "a b", "é"} {
		_, err := scenario.Parse("n.toml", []byte("name = \""+bad+"\"\n"))
		require.Error(t, err, bad)
	}
	// A name taken from the file name is made safe instead.
	sc, err := scenario.Parse(filepath.Join("d", "my run, v2.toml"), []byte(""))
	require.NoError(t, err)
	require.Equal(t, "my_run__v2", sc.Name)
}

// TestWorkerPanicIsInternalError: a panic inside a simulation run comes
// back as an *InternalError with its stack, not a crash.
func TestWorkerPanicIsInternalError(t *testing.T) {
	testFleetHook = func(*fleet.Fleet) { panic("boom") }
	defer func() { testFleetHook = nil }()
	sc, err := scenario.Parse("burst.toml", []byte(burstTOML(5, 10)))
	require.NoError(t, err)
	_, err = RunScenarios([]*scenario.Scenario{sc}, RunOptions{Workers: 2})
	var ie *InternalError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, "boom", ie.Value)
	require.Contains(t, string(ie.Stack), "goroutine")
}

// TestWriteFilesStaysInside: the writer refuses a path that leaves the
// run directory, whatever the name checks let through.
func TestWriteFilesStaysInside(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"../x", "arms/../../x", "/etc/x"} {
		require.ErrorContains(t, report.WriteFiles(filepath.Join(dir, "run"), map[string][]byte{bad: nil}), "not inside the run directory", bad)
	}
	require.NoError(t, report.WriteFiles(filepath.Join(dir, "run"), map[string][]byte{"arms/a/summary.json": []byte("{}")}))
}

// FuzzRunName: whatever a scenario's name or an arm's name, the scenario
// is refused or the name is safe as a path component and a CSV field.
//
//	go test ./experiments -run '^$' -fuzz FuzzRunName -fuzztime 30s
func FuzzRunName(f *testing.F) {
	for _, s := range []string{"default", "../../x", "a,b", "a\nb", ".hidden", "x/y", "", strings.Repeat("z", 101), "ok-name_1.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		safe := func(n string) {
			if n == "" || strings.HasPrefix(n, ".") || strings.ContainsAny(n, "/\\,\"\r\n\x00 ") || !filepath.IsLocal(n) || len(n) > scenario.MaxNameLen {
				t.Fatalf("unsafe name accepted: %q", n)
			}
		}
		for _, body := range []string{
			"name = " + strconv.Quote(name) + "\n",
			"name = \"x\"\n[[arms]]\nname = " + strconv.Quote(name) + "\n[[arms]]\nname = \"b\"\n",
		} {
			sc, err := scenario.Parse("f.toml", []byte(body))
			if err != nil {
				continue
			}
			safe(sc.Name)
			for _, a := range sc.Arms {
				if n, ok := a["name"].(string); ok && n != "" { // no name: refused by ArmsFromScenario
					safe(n)
				}
			}
		}
		safe(scenario.NameFromFile(name + ".toml"))
	})
}
