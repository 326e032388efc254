package experiments

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// groupSparesSrc is a fleet of an HGX H100 group and a GB200 NVL72 group
// under failures, with hgxSpares and nvlSpares warm spares.
func groupSparesSrc(hgxSpares, nvlSpares int) string {
	return fmt.Sprintf(`name = "gs"
seed = 5
[cluster]
model = "llama-3-70b"
[cluster.replica]
cold_start_s = 20
[[cluster.groups]]
name = "hgx"
gpu = "H100"
tp = 8
replicas = 3
spares = %d
[[cluster.groups]]
name = "nvl"
gpu = "GB200"
tp = 4
replicas = 4
spares = %d
[workload]
duration_s = 600
[workload.arrival]
rate_per_s = 10
[failures]
enabled = true
rate_multiplier = 3000000
cold_start_s = 20
spare_after_s = 0
`, hgxSpares, nvlSpares)
}

// runConserved parses and runs src, requires that it conserves
// requests, and returns the scenario, the result and its summary.
func runConserved(t *testing.T, src string) (*scenario.Scenario, *report.Result, *report.Summary) {
	t.Helper()
	sc, err := scenario.Parse("test.toml", []byte(src))
	require.NoError(t, err, src)
	res, err := Run(sc, Options{})
	require.NoError(t, err, src)
	s := report.Summarize(res)
	r := s.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight, src)
	return sc, res, s
}

// spareSwap is a swap in failures.csv: replica j stands in for replica i.
type spareSwap struct{ j, i int }

// spareSwaps are the run's swaps ("spare" rows, "replica J for I").
func spareSwaps(t *testing.T, res *report.Result) []spareSwap {
	var out []spareSwap
	for _, p := range res.Timeline {
		if p.Event != "spare" {
			continue
		}
		var sw spareSwap
		_, err := fmt.Sscanf(p.Unit, "replica %d for %d", &sw.j, &sw.i)
		require.NoError(t, err, p.Unit)
		out = append(out, sw)
	}
	return out
}

// TestGroupSpares: each group's warm spares stand in for that group's
// replicas only. They are built as groups of their own after the
// scenario's groups (hgx-spares, nvl-spares), so the serving replicas keep
// their indexes; every swap in failures.csv puts a spare of the failed
// replica's own group in its place; the spares are paid at their group's
// price for the whole run; and the run is deterministic.
func TestGroupSpares(t *testing.T) {
	src := groupSparesSrc(1, 2)
	sc, res, s := runConserved(t, src)

	// Replicas 0-2 hgx, 3-6 nvl, 7 hgx's spare, 8-9 nvl's.
	gs := s.Fleet.Groups
	require.Len(t, gs, 4)
	for k, want := range []struct {
		name, forName string
		replicas, tp  int
	}{{"hgx", "", 3, 8}, {"nvl", "", 4, 4}, {"hgx-spares", "hgx", 1, 8}, {"nvl-spares", "nvl", 2, 4}} {
		require.Equal(t, want.name, gs[k].Name)
		require.Equal(t, want.forName, gs[k].SparesFor, want.name)
		require.Equal(t, want.replicas, gs[k].Replicas, want.name)
		require.Equal(t, want.tp, gs[k].TP, want.name)
		// Every group's GPUs, spares too, paid for the whole run.
		require.InDelta(t, float64(want.replicas*want.tp)*res.EndTime.Seconds()/3600*gs[k].PricePerGPUHour, gs[k].USD, 1e-6, want.name)
	}
	// timeseries.csv's per-group columns count the spares' groups too
	// (the spend-rate plot prices them).
	var cols []string
	for _, c := range report.GroupColumns(sc) {
		cols = append(cols, fmt.Sprintf("%s[%d,%d)", c.Name, c.First, c.End))
	}
	require.Equal(t, []string{"provisioned_replicas.hgx[0,3)", "provisioned_replicas.nvl[3,7)",
		"provisioned_replicas.hgx-spares[7,8)", "provisioned_replicas.nvl-spares[8,10)"}, cols)
	require.Equal(t, 7, s.Fleet.Replicas, "serving replicas")
	require.Equal(t, 3*8+4*4+1*8+2*4, s.Fleet.GPUs, "every GPU, spares too")
	require.Equal(t, 3, s.Failures.Spares)

	group := func(i int) string {
		switch {
		case i < 3 || i == 7:
			return "hgx"
		case i < 7 || i == 8 || i == 9:
			return "nvl"
		}
		t.Fatalf("no replica %d", i)
		return ""
	}
	swaps := map[string]int{}
	for _, sw := range spareSwaps(t, res) {
		require.Equal(t, group(sw.i), group(sw.j), "a spare of the failed replica's own group: %+v", sw)
		swaps[group(sw.i)]++
	}
	require.Greater(t, swaps["hgx"], 0, "the H100 spare stood in")
	require.Greater(t, swaps["nvl"], 0, "a GB200 spare stood in")
	require.Equal(t, swaps["hgx"]+swaps["nvl"], s.Failures.SparesUsed)
	require.Greater(t, s.Cost.Wasted.IdleSparesUSD, 0.0, "spares waited")
	requireDeterministic(t, sc, src)
}

// A group without spares gets none of another group's: its failed
// replicas stay down until repaired.
func TestGroupSparesNotShared(t *testing.T) {
	sc, err := scenario.Parse("gs.toml", []byte(groupSparesSrc(2, 0)))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	for _, sw := range spareSwaps(t, res) {
		require.True(t, sw.i < 3 || sw.i >= 7, "only an hgx replica (or a spare serving in one's place) gets a spare: %+v", sw)
		require.True(t, sw.j < 3 || sw.j >= 7, "an hgx replica stands in (a repaired one whose place a spare took is a spare): %+v", sw)
	}
	nvlFailed := 0
	for _, p := range res.Timeline {
		if p.Event == "fail" && strings.HasSuffix(p.Unit, "(nvl)") {
			nvlFailed++
		}
	}
	require.Greater(t, nvlFailed, 0, "GB200 replicas failed and stayed down")
	require.Greater(t, report.Summarize(res).Failures.SparesUsed, 0)
}

// The idle spares are priced at their own group's TP and price, not the
// fleet's average price per GPU-hour: an H100 spare at $1 beside GB200s at
// $5.
func TestGroupSparesIdlePrice(t *testing.T) {
	src := strings.Replace(groupSparesSrc(1, 0), "replicas = 3\n", "replicas = 3\nprice_per_gpu_hour = 1\n", 1)
	src = strings.Replace(src, "replicas = 4\n", "replicas = 4\nprice_per_gpu_hour = 5\n", 1)
	sc, err := scenario.Parse("gs.toml", []byte(src))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	require.Len(t, res.IdleSpareSOf, 8)
	idle := 0.0 // (a repaired replica whose place the spare took waits as a spare in turn)
	for i, s := range res.IdleSpareSOf {
		if s > 0 {
			require.True(t, i < 3 || i == 7, "only H100 replicas wait as spares, found %d", i)
		}
		idle += s
	}
	require.Greater(t, idle, 0.0)
	require.Less(t, idle, 600.0, "the spare stood in for a while")
	require.InDelta(t, idle*8/3600*1, report.Summarize(res).Cost.Wasted.IdleSparesUSD, 1e-6)
}

func TestGroupSparesRefusals(t *testing.T) {
	src := groupSparesSrc(1, 0)
	cases := []struct {
		edit func(string) string
		want string
	}{
		{func(s string) string { return strings.Replace(s, "spare_after_s = 0", "spares = 1", 1) },
			"failures.spares: a fleet of groups keeps warm spares per group: set spares in the [[cluster.groups]] tables"},
		{func(s string) string { return strings.Replace(s, "enabled = true", "enabled = false", 1) },
			"gs.toml:12: cluster.groups.0.spares: warm spares stand in for failed replicas: they need [failures] enabled = true"},
		{func(s string) string { return strings.Replace(s, "spares = 1", "spares = -1", 1) },
			"cluster.groups.0.spares: must be an integer >= 0, found -1"},
		{func(s string) string { return strings.Replace(s, `name = "nvl"`, `name = "hgx-spares"`, 1) },
			`cluster.groups.0.spares: the group's spares are named "hgx-spares", the name of another group`},
		{func(s string) string { return strings.Replace(s, "spare_after_s = 0", "spare_coverage = 0.9", 1) },
			"failures.spare_coverage: sizes each group's spares: remove cluster.groups.0.spares (1) or this key"},
	}
	for _, c := range cases {
		_, err := scenario.Parse("gs.toml", []byte(c.edit(src)))
		require.ErrorContains(t, err, c.want)
	}
}

// TestGroupSparesChaos: random fleets of two or three GPU groups, some
// with warm spares, under failures at random rates, repair thresholds and
// swap delays, and in half the trials spot replicas in some groups: requests are conserved, availability and every
// timeline row's capacity stay in [0, 1], every swap in failures.csv puts
// a replica of the failed one's own group in its place, and the runner is
// deterministic.
func TestGroupSparesChaos(t *testing.T) {
	trials := 8
	if n, err := strconv.Atoi(os.Getenv("FLEETSIM_CHAOS_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	if testing.Short() {
		trials = 3
	}
	swaps := 0
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 4242))
		var b strings.Builder
		fmt.Fprintf(&b, "name = \"group-spares-chaos-%d\"\nseed = %d\n[cluster]\nmodel = \"llama-3-8b\"\n[cluster.replica]\ncold_start_s = 5\n", trial, trial+1)
		var kinds []int // each replica's group: the serving ones, then the spares group by group
		var spares [][2]int
		n := 2 + rng.IntN(2)
		// Spot replicas in some groups in half the trials (a stream of
		// their own: the fleets above are as they were).
		srng := rand.New(rand.NewPCG(uint64(trial), 4243))
		spot := srng.IntN(2) == 0
		for g := 0; g < n; g++ {
			replicas, sp := 1+rng.IntN(4), rng.IntN(3)
			fmt.Fprintf(&b, "[[cluster.groups]]\ngpu = %q\ntp = %d\nreplicas = %d\nspares = %d\n",
				[]string{"H100", "H200", "B200", "GB200"}[rng.IntN(4)], 1<<rng.IntN(3), replicas, sp)
			if spot {
				fmt.Fprintf(&b, "spot_replicas = %d\n", srng.IntN(replicas+1))
			}
			for range replicas {
				kinds = append(kinds, g)
			}
			spares = append(spares, [2]int{g, sp})
		}
		for _, s := range spares {
			for range s[1] {
				kinds = append(kinds, s[0])
			}
		}
		fmt.Fprintf(&b, "[workload]\nduration_s = 300\n[workload.arrival]\nrate_per_s = %d\n", 5+rng.IntN(40))
		fmt.Fprintf(&b, "[failures]\nenabled = true\nrate_multiplier = %d\ncold_start_s = 10\nspare_after_s = %d\nspare_swap_s = %d\n",
			1000000+rng.IntN(4000000), rng.IntN(300), rng.IntN(60))
		if spot {
			fmt.Fprintf(&b, "[spot]\ninterruptions_per_hour = %d\nnotice_s = %d\nreplace_s = %d\n", 20+srng.IntN(100), srng.IntN(30), srng.IntN(60))
		}
		src := b.String()
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			sc, res, sum := runConserved(t, src)
			f := sum.Failures
			require.True(t, f.Availability >= 0 && f.Availability <= 1 && f.MinAvailableR >= 0, "%+v\n%s", f, src)
			for _, p := range res.Timeline {
				require.True(t, p.Capacity >= 0 && p.Capacity <= 1, "capacity %v at %v\n%s", p.Capacity, p.Time, src)
			}
			for _, sw := range spareSwaps(t, res) {
				require.Equal(t, kinds[sw.i], kinds[sw.j], "%+v\n%s", sw, src)
				swaps++
			}
			requireDeterministic(t, sc, src)
		})
	}
	require.Greater(t, swaps, 0, "spares stood in")
	t.Logf("%d swaps in %d trials", swaps, trials)
}

// A replica hit again while in repair, when a spare has become free, gets
// the spare then: its slot serves again through the spare, so its outage
// ends there. (The slot used to stay down while the spare served it, and
// the spare's own failure then counted the slot twice: availability went
// below 0 and the fewest replicas up to −2, for a fleet of one kind as
// for groups.)
func TestSparesAvailabilityBounded(t *testing.T) {
	homogeneous := `name = "hs"
seed = 5
[cluster]
model = "llama-3-70b"
gpu = "H100"
tp = 8
replicas = 5
[workload]
duration_s = 600
[workload.arrival]
rate_per_s = 10
[failures]
enabled = true
rate_multiplier = 2000000
spare_after_s = 0
spares = 2
`
	for _, src := range []string{homogeneous, groupSparesSrc(1, 1), groupSparesSrc(2, 2)} {
		sc, err := scenario.Parse("s.toml", []byte(src))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		f := report.Summarize(res).Failures
		require.Greater(t, f.SparesUsed, 0, src)
		require.GreaterOrEqual(t, f.MinAvailableR, 0, src)
		require.GreaterOrEqual(t, f.Availability, 0.0, src)
		require.LessOrEqual(t, f.Availability, 1.0, src)
		for _, p := range res.Timeline {
			require.True(t, p.Capacity >= 0 && p.Capacity <= 1, "capacity %v at %v (%s %s)\n%s", p.Capacity, p.Time, p.Event, p.Unit, src)
		}
	}
}

// fleetsim size keeps a group's spares at every count of the group but 0
// (a group with no replicas needs no spares), and pays for them.
func TestGroupSparesSizeOverlay(t *testing.T) {
	base, err := scenario.Parse("gs.toml", []byte(groupSparesSrc(1, 2)))
	require.NoError(t, err)
	sc, err := base.Derive(groupsOverlay(base.Cluster.Groups, 0, 3))
	require.NoError(t, err)
	require.Equal(t, 0, sc.Cluster.Groups[0].Replicas)
	require.Equal(t, 0, sc.Cluster.Groups[0].Spares, "no spares for a group of none")
	require.Equal(t, 3, sc.Cluster.Groups[1].Replicas)
	require.Equal(t, 2, sc.Cluster.Groups[1].Spares)
	require.Equal(t, 2, sc.GroupSpares())
}

// TestGroupSpareCoverage: failures.spare_coverage sizes each group's spares
// on its own GPUs, as it sizes a fleet of one kind of that group's GPU,
// TP and replicas; the spares are built, stand in for their own group's
// replicas, and fleetsim size's overlay leaves them to be sized again at
// each count.
func TestGroupSpareCoverage(t *testing.T) {
	src := strings.NewReplacer("spares = 1\n", "", "spares = 0\n", "", "spare_after_s = 0", "spare_after_s = 0\nspare_coverage = 0.99",
		"rate_multiplier = 3000000", "rate_multiplier = 30").Replace(groupSparesSrc(1, 0))
	sc, err := scenario.Parse("gs.toml", []byte(src))
	require.NoError(t, err, src)
	// The same sizing for a fleet of one kind of each group's GPU, TP and
	// replicas.
	oneKind := func(gpu string, tp, replicas int) int {
		s := fmt.Sprintf("name = \"k\"\n[cluster]\nmodel = \"llama-3-70b\"\ngpu = %q\ntp = %d\nreplicas = %d\n[workload]\nduration_s = 60\n[failures]\nenabled = true\nrate_multiplier = 30\nspare_coverage = 0.99\n", gpu, tp, replicas)
		k, err := scenario.Parse("k.toml", []byte(s))
		require.NoError(t, err, s)
		return k.Failures.Spares
	}
	gs := sc.Cluster.Groups
	require.Equal(t, oneKind("H100", 8, 3), gs[0].Spares, "hgx")
	require.Equal(t, oneKind("GB200", 4, 4), gs[1].Spares, "nvl")
	require.Positive(t, gs[0].Spares+gs[1].Spares, "the rates call for spares")
	require.Equal(t, gs[0].Spares+gs[1].Spares, sc.GroupSpares())
	_, res, s := runConserved(t, src)
	require.Equal(t, sc.GroupSpares(), s.Failures.Spares)
	require.Positive(t, s.Requests.Completed)
	kind := map[int]int{}
	for i := range 7 + sc.GroupSpares() {
		kind[i] = map[bool]int{true: 0, false: 1}[i < 3 || i >= 7 && i < 7+gs[0].Spares]
	}
	for _, sw := range spareSwaps(t, res) {
		require.Equal(t, kind[sw.i], kind[sw.j], "%+v", sw)
	}
	// fleetsim size: at other counts the overlay leaves the spares to the
	// coverage, which sizes them for those counts.
	mix, err := sc.Derive(mixOverlay(gs, 1, 8, true))
	require.NoError(t, err)
	require.Equal(t, oneKind("H100", 8, 1), mix.Cluster.Groups[0].Spares)
	require.Equal(t, oneKind("GB200", 4, 8), mix.Cluster.Groups[1].Spares)
	require.NotEqual(t, gs[0].Spares, mix.Cluster.Groups[0].Spares, "sized again at the new count")
}
