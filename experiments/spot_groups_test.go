package experiments

import (
	"fmt"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// spotGroupsSrc is an H100 group (TP=1, 3 replicas) beside a B200 group (TP=2, 3 replicas), with the groups' spot replicas
// given by hSpot and bSpot (the lines of each group's table) and a [spot]
// table of rates.
func spotGroupsSrc(hSpot, bSpot, tail string) string {
	return fmt.Sprintf(`name = "sgs"
seed = 4
[cluster]
model = "llama-3-8b"
[[cluster.groups]]
name = "base"
gpu = "H100"
tp = 1
replicas = 3
%s
[[cluster.groups]]
name = "burst"
gpu = "B200"
tp = 2
replicas = 3
%s
[workload]
duration_s = 1800
[workload.arrival]
rate_per_s = 20
[cost]
power = false
[spot]
interruptions_per_hour = 4
notice_s = 30
replace_s = 120
%s
[policies.retry]
name = "budgeted"
`, hSpot, bSpot, tail)
}

// TestSpotSeveralGroups: spot replicas in two groups (each group's
// spot_replicas): each group's last ones are interrupted, failures.csv
// names their group and counts each one's own GPUs down, each group is
// billed with its spot replicas at the spot fraction of its own price, the
// summary lists both groups, timeseries.csv has a spot column per group,
// and the run is deterministic.
func TestSpotSeveralGroups(t *testing.T) {
	src := spotGroupsSrc("spot_replicas = 1", "spot_replicas = 2", "")
	sc, res, s := runConserved(t, src)
	require.NotNil(t, s.Spot)
	require.Equal(t, 3, s.Spot.Replicas)
	require.Empty(t, s.Spot.Group, "several groups: spot.groups")
	require.Len(t, s.Spot.Groups, 2)

	hit := map[string]int{}
	down := map[int]bool{}
	for _, p := range res.Timeline {
		var i int
		var g string
		_, err := fmt.Sscanf(p.Unit, "replica %d (%s", &i, &g)
		require.NoError(t, err, p.Unit)
		g = strings.TrimSuffix(g, ")")
		require.Equal(t, map[int]string{2: "base", 4: "burst", 5: "burst"}[i], g, "only the groups' last spot_replicas are spot: %s", p.Unit)
		switch p.Event {
		case "spot-notice":
			down[i] = true
			hit[g]++
		case "spot-ready":
			delete(down, i)
		}
		gpus := 0
		for j := range down {
			gpus += map[bool]int{true: 1, false: 2}[j == 2] // H100 TP=1, B200 TP=2
		}
		require.Equal(t, gpus, p.GPUsDown, "GPUs down at %v", p.Time)
	}
	require.Positive(t, hit["base"], "the H100 spot replica was interrupted")
	require.Positive(t, hit["burst"], "a B200 spot replica was interrupted")

	secs := res.EndTime.Seconds()
	cat := sc.Catalog().GPUs
	h100, b200 := cat["H100"].PricePerGPUHour, cat["B200"].PricePerGPUHour
	g := s.Fleet.Groups
	require.InDelta(t, (2+1*0.35)*1*h100*secs/3600, g[0].USD, 1e-3, "two on-demand and one spot replica of 1 GPU")
	require.InDelta(t, (1+2*0.35)*2*b200*secs/3600, g[1].USD, 1e-3, "one on-demand and two spot replicas of 2 GPUs")
	require.Equal(t, report.SpotGroupStats{Name: "base", Replicas: 1, SpotUSD: results.Round6(1 * 1 * h100 * 0.35 * secs / 3600)}, s.Spot.Groups[0])
	require.Equal(t, "burst", s.Spot.Groups[1].Name)
	require.InDelta(t, 2*2*b200*0.35*secs/3600, s.Spot.Groups[1].SpotUSD, 1e-3)
	require.InDelta(t, s.Spot.Groups[0].SpotUSD+s.Spot.Groups[1].SpotUSD, s.Spot.SpotUSD, 1e-3)
	require.InDelta(t, s.Cost.USD, g[0].USD+g[1].USD, 1e-3)
	require.InDelta(t, s.Cost.USD, s.Spot.SpotUSD+s.Spot.OtherUSD, 1e-3)

	var cols []string
	for _, c := range report.GroupColumns(sc) {
		cols = append(cols, fmt.Sprintf("%s[%d,%d)", c.Name, c.First, c.End))
	}
	require.Equal(t, []string{"provisioned_replicas.base[0,3)", "provisioned_replicas.burst[3,6)",
		"provisioned_spot_replicas.base[2,3)", "provisioned_spot_replicas.burst[4,6)"}, cols)
	requireDeterministic(t, sc, src)
}

// One group's spot_replicas is [spot] group and replicas said in the
// group's table: the same run, byte for byte.
func TestSpotGroupKeyIsSpotGroup(t *testing.T) {
	run := func(src string) string {
		sc, err := scenario.Parse("sgs.toml", []byte(src))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		js, err := report.Summarize(res).MarshalJSON()
		require.NoError(t, err)
		return string(js)
	}
	require.Equal(t, run(spotGroupsSrc("", "", "group = \"burst\"\nreplicas = 2")), run(spotGroupsSrc("", "spot_replicas = 2", "")))
}

// Spot in several groups under autoscaling: interruptions happen, the
// spot block lists both groups, the bill splits into spot and other,
// requests are conserved and the run is deterministic. (That only
// provisioned replicas are interrupted is TestElasticHeterogeneousChaos's
// check, at every event.)
func TestSpotSeveralGroupsAutoscale(t *testing.T) {
	src := spotGroupsSrc("spot_replicas = 1", "spot_replicas = 2", "") + `
[autoscale]
enabled = true
policy = "target"
metric = "outstanding"
target = 4
min_replicas = 2
initial_replicas = 2
`
	sc, _, s := runConserved(t, src)
	require.Positive(t, s.Spot.Interruptions)
	require.Len(t, s.Spot.Groups, 2)
	require.InDelta(t, s.Cost.USD, s.Spot.SpotUSD+s.Spot.OtherUSD, 1e-3)
	requireDeterministic(t, sc, src)
}

func TestSpotSeveralGroupsRefusals(t *testing.T) {
	for _, c := range []struct{ h, b, tail, want string }{
		{"spot_replicas = 1", "", "group = \"burst\"\nreplicas = 2",
			"cluster.groups.0.spot_replicas: the groups say their spot replicas with spot_replicas: remove spot.replicas and spot.group"},
		{"spot_replicas = 4", "", "", "cluster.groups.0.spot_replicas: must be an integer in [0, the group's replicas = 3], found 4"},
		{"spot_replicas = -1", "", "", "cluster.groups.0.spot_replicas: must be an integer in [0, the group's replicas = 3], found -1"},
		{"spot_replicas = 1", "down_replicas = 1\nspot_replicas = 3", "", "cluster.groups.1.spot_replicas: must be an integer in [0, the group's replicas − its down_replicas = 2], found 3"},
		{"", "", "replicas = 1", "spot.group: name the group whose replicas are on spot (a fleet of [[cluster.groups]] has several), or set spot_replicas in each [[cluster.groups]] table"},
	} {
		_, err := scenario.Parse("sgs.toml", []byte(spotGroupsSrc(c.h, c.b, c.tail)))
		require.ErrorContains(t, err, c.want, c)
	}
}

// Spot beside replicas in repair: the spot replicas are the last ones but
// those in repair (which are the very last), only they are interrupted,
// and the replicas in repair are priced on demand in down_usd — for a
// fleet of one kind (run.down_replicas) and for a group (down_replicas).
func TestSpotBesideDownReplicas(t *testing.T) {
	one := `name = "sd"
seed = 4
[cluster]
model = "llama-3-8b"
gpu = "H100"
tp = 1
replicas = 6
[run]
down_replicas = 1
[workload]
duration_s = 1800
[workload.arrival]
rate_per_s = 20
[cost]
power = false
[spot]
replicas = 2
interruptions_per_hour = 4
notice_s = 30
replace_s = 120
`
	_, res, s := runConserved(t, one)
	hit := map[string]bool{}
	for _, p := range res.Timeline {
		hit[p.Unit] = true
	}
	require.Equal(t, map[string]bool{"replica 3": true, "replica 4": true}, hit, "replicas 3 and 4 are spot, 5 is in repair")
	secs, h100 := res.EndTime.Seconds(), res.Scenario.Catalog().GPUs["H100"].PricePerGPUHour
	require.InDelta(t, 1*h100*secs/3600, s.Cost.Wasted.DownUSD, 1e-3, "the replica in repair, at the on-demand price")
	require.InDelta(t, 2*h100*0.35*secs/3600, s.Spot.SpotUSD, 1e-3)
	require.InDelta(t, s.Cost.USD, s.Spot.SpotUSD+s.Spot.OtherUSD, 1e-3)

	// A group: the B200 group's last replica in repair, the one before it
	// on spot (replica 4 of the fleet).
	_, res, s = runConserved(t, spotGroupsSrc("", "down_replicas = 1\nspot_replicas = 1", ""))
	for _, p := range res.Timeline {
		require.Equal(t, "replica 4 (burst)", p.Unit)
	}
	require.Positive(t, s.Spot.Interruptions)
	require.Equal(t, "burst", s.Spot.Group)
	b200 := res.Scenario.Catalog().GPUs["B200"].PricePerGPUHour
	require.InDelta(t, 2*b200*res.EndTime.Seconds()/3600, s.Cost.Wasted.DownUSD, 1e-3, "one B200 replica of 2 GPUs in repair")
}

// Spot with a [fallback] pool: when interruptions take every primary
// replica, the fallback pool (a smaller model) serves; the bill splits
// into spot, other and fallback GPUs — for a fleet of one kind and for
// groups.
func TestSpotWithFallback(t *testing.T) {
	fallback := `
[fallback]
enabled = true
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
`
	one := `name = "sf"
seed = 2
[cluster]
model = "llama-3-8b"
gpu = "H100"
tp = 1
replicas = 2
[workload]
duration_s = 1800
[workload.arrival]
rate_per_s = 5
[cost]
power = false
[spot]
replicas = 2
interruptions_per_hour = 30
notice_s = 0
replace_s = 120
`
	for _, src := range []string{one + fallback, spotGroupsSrc("spot_replicas = 3", "spot_replicas = 3", "interruptions_per_hour = 120\nnotice_s = 0\nreplace_s = 300\n") + fallback} {
		src = strings.Replace(src, "interruptions_per_hour = 4\nnotice_s = 30\nreplace_s = 120\n", "", 1)
		_, res, s := runConserved(t, src)
		require.Positive(t, s.Resilience.Fallbacks, "every primary replica was out at times: the fallback pool served\n%s", src)
		secs := res.EndTime.Seconds()
		h100 := res.Scenario.Catalog().GPUs["H100"].PricePerGPUHour
		require.InDelta(t, h100*secs/3600, s.Spot.FallbackUSD, 1e-3, "one H100 fallback replica")
		require.InDelta(t, s.Cost.USD, s.Spot.SpotUSD+s.Spot.OtherUSD+s.Spot.FallbackUSD, 1e-3)
		requireDeterministic(t, res.Scenario, src)
	}
}

// fleetsim size keeps each group's spot replicas at every count, as many
// as fit beside those in repair (a mix of 0 or 1 B200 with 2 on spot was
// refused before), for spot_replicas and for [spot] group; and prices
// them at the spot fraction.
func TestSpotSizeMix(t *testing.T) {
	base, err := scenario.Parse("sgs.toml", []byte(spotGroupsSrc("spot_replicas = 1", "down_replicas = 1\nspot_replicas = 2", "")))
	require.NoError(t, err)
	sc, err := base.Derive(groupsOverlay(base.Cluster.Groups, 0, 2))
	require.NoError(t, err)
	require.Equal(t, 0, sc.Cluster.Groups[0].SpotReplicas)
	require.Equal(t, 1, sc.Cluster.Groups[1].SpotReplicas, "2 B200, 1 in repair: 1 left for spot")
	require.Equal(t, 1, sc.SpotReplicas())

	legacy, err := scenario.Parse("sgs.toml", []byte(spotGroupsSrc("", "", "group = \"burst\"\nreplicas = 3")))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=800ms")
	require.NoError(t, err)
	legacy, err = legacy.Derive(OverrideOverlay("workload.duration_s", "120"), OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	res, err := SizeMix(legacy, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	h100, b200 := legacy.Catalog().GPUs["H100"].PricePerGPUHour, legacy.Catalog().GPUs["B200"].PricePerGPUHour
	capped := 0
	for _, p := range res.Evaluated {
		if p.Counts[1] > 0 && p.Counts[1] < 3 {
			capped++ // fewer B200 than [spot] replicas: all of them on spot
		}
		h, b := p.Counts[0], p.Counts[1]
		spot := min(3, b)
		want := (float64(h)*h100 + float64(b-spot)*2*b200 + float64(spot)*2*b200*0.35) * report.HoursPerMonth
		require.InDelta(t, want, p.USDPerMonth, 1e-6, "h100=%d b200=%d", h, b)
	}
	require.Positive(t, capped, "the search tried B200 counts below 3")
	require.Contains(t, res.Table("sgs"), "$ prices the groups' spot replicas (burst 3; fewer where a count has fewer) at 0.35 of the price")
}

// fleetsim size on a fleet of one kind with [spot]: every size tried keeps
// the spot replicas (as many as it has: sizes below spot.replicas were
// refused before) and is priced with them at the spot fraction.
func TestSpotSize(t *testing.T) {
	base, err := LoadBuiltin("spot-share")
	require.NoError(t, err)
	base, err = base.Derive(OverrideOverlay("spot.replicas", "2"), OverrideOverlay("workload.duration_s", "300"), OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=800ms")
	require.NoError(t, err)
	res, err := Size(base, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	price := base.Price()
	small := 0
	for _, p := range res.Search {
		n := p.Replicas
		if n < 2 {
			small++
		}
		k := min(2, n)
		require.InDelta(t, (float64(n-k)+float64(k)*0.35)*8*price*report.HoursPerMonth, res.usdPerMonth(n), 1e-6, "%d replicas", n)
		require.Equal(t, k, p.Arm.Reps[0].Summary.Spot.Replicas, "%d replicas", n)
	}
	require.Positive(t, small, "a size below spot.replicas was tried")
}
