package experiments

import (
	"sort"

	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models"
	"github.com/fleetsim/fleetsim/models/faults"
	"github.com/fleetsim/fleetsim/sim"
)

// SpotConfig is a scenario's [spot] table: the last Replicas replicas of the
// fleet run on spot instances, cheaper and taken back at random.
type SpotConfig struct {
	// Replicas is how many of the fleet's replicas (the last ones) are on
	// spot; 0 (default) means none.
	Replicas int `toml:"replicas"`
	// InterruptionsPerHour is each spot replica's interruption rate while
	// it serves. Default 0.01 (assumption: GPU instances sit in AWS's Spot
	// Instance Advisor's highest band, "> 20%" of instances interrupted per
	// month; 0.01/h interrupts ~99.9% within a month; set your region's).
	InterruptionsPerHour float64 `toml:"interruptions_per_hour"`
	// NoticeS is the warning before the instance goes, seconds. Default 120
	// (AWS's two-minute Spot interruption notice; GCP gives 30 s).
	NoticeS float64 `toml:"notice_s"`
	// Drain uses the notice: the replica leaves rotation and finishes what
	// it can; false kills it at the notice. Default true.
	Drain bool `toml:"drain"`
	// ReplaceS is how long until a replacement serves: acquiring capacity,
	// boot, engine start and weight load, seconds. Default 600 (assumption).
	ReplaceS float64 `toml:"replace_s"`
	// PriceFraction is the spot price over the on-demand price. Default 0.35
	// (assumption: AWS advertises up to 90% off; GPU spot prices seen
	// 60–70% below on-demand).
	PriceFraction float64 `toml:"price_fraction"`
	// Group, with [[cluster.groups]], names the group whose last Replicas
	// replicas are on spot (at PriceFraction of that group's price).
	// Required with groups; unused without.
	Group string `toml:"group"`
}

// DefaultSpot returns the defaults documented on SpotConfig (no spot).
func DefaultSpot() SpotConfig {
	return SpotConfig{InterruptionsPerHour: 0.01, NoticeS: 120, Drain: true, ReplaceS: 600, PriceFraction: 0.35}
}

func (s *Scenario) validateSpot(ps *config.Problems) {
	c := s.Spot
	if len(s.Cluster.Groups) > 0 && (c.Replicas != 0 || c.Group != "") {
		g := s.spotGroup()
		switch {
		case c.Group == "":
			ps.Add("spot.group", "name the group whose replicas are on spot (a fleet of [[cluster.groups]] has several)")
		case g == nil:
			ps.Add("spot.group", "%q is not a group of [[cluster.groups]]", c.Group)
		case c.Replicas < 0 || c.Replicas > g.Replicas:
			ps.Add("spot.replicas", "must be an integer in [0, the group's replicas = %d], found %d", g.Replicas, c.Replicas)
		}
	} else if c.Replicas < 0 || c.Replicas > s.Cluster.Replicas {
		ps.Add("spot.replicas", "must be an integer in [0, cluster.replicas = %d], found %d", s.Cluster.Replicas, c.Replicas)
	}
	if len(s.Cluster.Groups) == 0 && c.Group != "" {
		ps.Add("spot.group", "names a group of [[cluster.groups]]; this fleet has none")
	}
	if c.Replicas == 0 {
		return
	}
	ps.Positive("spot.interruptions_per_hour", c.InterruptionsPerHour)
	ps.NonNegative("spot.notice_s", c.NoticeS)
	ps.NonNegative("spot.replace_s", c.ReplaceS)
	if !(c.PriceFraction > 0 && c.PriceFraction <= 1) {
		ps.Add("spot.price_fraction", "must be in (0, 1], found %v", c.PriceFraction)
	}
	for _, k := range []struct {
		key string
		on  bool
	}{
		// With [failures], warm spares and precursor drains would move the
		// same replicas in and out of rotation as the interruptions.
		{"failures.spares", s.Failures.Enabled && s.Failures.Spares > 0}, {s.groupSparesKey(), s.groupSpares() > 0},
		{"failures.drain_on_precursor", s.Failures.Enabled && s.Failures.DrainOnPrecursor},
		{"rollout.enabled", s.Rollout.Enabled},
		{"fallback.enabled", s.Fallback.Enabled}, {"faults", len(s.Faults) > 0}, {"run.down_replicas", s.Run.DownReplicas > 0},
		{s.groupDownKey(), s.groupDownKey() != ""},
	} {
		if k.on {
			ps.Add(k.key, "cannot be combined with [spot] yet (both take replicas in and out of service)")
		}
	}
}

// mergeSpotTimeline merges failures' timeline (fail and repair rows) with
// the spot events up to end, in time order (failures first at a tie), and
// recomputes each row's GPUs down and capacity over the replicas down for
// either cause (a spot replica is down from its notice to its
// replacement's readiness, as in the spot timeline alone).
func mergeSpotTimeline(tl []faults.TimelinePoint, evs []models.SpotEvent, sc *Scenario, fleet *models.Fleet, end sim.Time) []faults.TimelinePoint {
	type row struct {
		p       faults.TimelinePoint
		replica int
		down    bool
		spot    bool
	}
	var rows []row
	for _, p := range tl {
		rows = append(rows, row{p: p, replica: p.Replica, down: p.Event == "fail"})
	}
	for _, e := range evs {
		if e.Time > end {
			continue
		}
		unit := e.Unit()
		if len(sc.Cluster.Groups) > 0 {
			unit += " (" + sc.Spot.Group + ")"
		}
		rows = append(rows, row{p: faults.TimelinePoint{Time: e.Time, Event: e.Event, Unit: unit}, replica: e.Replica,
			down: e.Event != "spot-ready", spot: true})
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].p.Time < rows[b].p.Time })
	n := sc.Cluster.Replicas
	downF, downS := make([]bool, len(fleet.Replicas)), make([]bool, len(fleet.Replicas))
	out := make([]faults.TimelinePoint, 0, len(rows))
	for _, r := range rows {
		if r.spot {
			downS[r.replica] = r.down
		} else {
			downF[r.replica] = r.down
		}
		gpus, count := 0, 0
		for i := range downF {
			if downF[i] || downS[i] {
				count++
				gpus += fleet.ReplicaTP(i)
			}
		}
		p := r.p
		p.GPUsDown, p.Capacity = gpus, 1-float64(count)/float64(n)
		out = append(out, p)
	}
	return out
}

// spotGroup is the group [spot] names, nil when none (or no groups).
func (s *Scenario) spotGroup() *models.GroupConfig {
	for i := range s.Cluster.Groups {
		if g := &s.Cluster.Groups[i]; g.Name == s.Spot.Group {
			return g
		}
	}
	return nil
}

// spotRange is the spot replicas, [first, end): the fleet's last
// spot.replicas, or its group's last with [[cluster.groups]].
func (s *Scenario) spotRange() (first, end int) {
	if len(s.Cluster.Groups) == 0 {
		return s.Cluster.Replicas - s.Spot.Replicas, s.Cluster.Replicas
	}
	for _, g := range s.Cluster.Groups {
		end += g.Replicas
		if g.Name == s.Spot.Group {
			return end - s.Spot.Replicas, end
		}
	}
	return end, end
}

// spotGPUsPerReplica is a spot replica's GPUs.
func (s *Scenario) spotGPUsPerReplica() int {
	if g := s.spotGroup(); g != nil && len(s.Cluster.Groups) > 0 {
		return g.TP
	}
	return s.Cluster.GPUsPerReplica()
}

func (s *Scenario) spotParams() models.SpotParams {
	c := s.Spot
	first, end := s.spotRange()
	return models.SpotParams{First: first, End: end, RatePerHour: c.InterruptionsPerHour,
		Notice: sim.FromSeconds(c.NoticeS), Replace: sim.FromSeconds(c.ReplaceS), Drain: c.Drain, GPUsPerReplica: s.spotGPUsPerReplica()}
}

// tsColumn is one per-group column of timeseries.csv: its name and the
// replicas it counts, [first, end).
type tsColumn struct {
	name       string
	first, end int
}

// groupColumns are timeseries.csv's per-group columns of a fleet of groups:
// provisioned_replicas.GROUP for each group in order (the groups' warm
// spares last, as NAME-spares), then
// provisioned_spot_replicas.GROUP for the [spot] group's spot replicas;
// nil for a fleet of one kind (whose timeseries.csv has no such columns).
func groupColumns(sc *Scenario) []tsColumn {
	if len(sc.Cluster.Groups) == 0 {
		return nil
	}
	var cols []tsColumn
	first := 0
	groups := sc.Cluster.Groups
	if sc.groupSpares() > 0 {
		groups = sc.Cluster.WithSpareGroups().Groups // the spares' groups too (paid while provisioned)
	}
	for _, g := range groups {
		cols = append(cols, tsColumn{results.ProvisionedReplicas + "." + g.Name, first, first + g.Replicas})
		first += g.Replicas
	}
	if sc.Spot.Replicas > 0 && sc.spotGroup() != nil {
		f, e := sc.spotRange()
		cols = append(cols, tsColumn{results.ProvisionedSpotReplicas + "." + sc.Spot.Group, f, e})
	}
	return cols
}
