package scenario

import (
	"fmt"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/fleet"
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
	// DecodeReplicas, with [disagg], is how many of the decode pool's
	// replicas (its last serving ones) are on spot, at PriceFraction of
	// the decode pool's price, interrupted as the others. Default 0.
	DecodeReplicas int `toml:"decode_replicas"`
}

// DefaultSpot returns the defaults documented on SpotConfig (no spot).
func DefaultSpot() SpotConfig {
	return SpotConfig{InterruptionsPerHour: 0.01, NoticeS: 120, Drain: true, ReplaceS: 600, PriceFraction: 0.35}
}

func (s *Scenario) validateSpot(ps *config.Problems) {
	c := s.Spot
	groupKey := s.groupSpotKey()
	if len(s.Cluster.Groups) > 0 && (c.Replicas != 0 || c.Group != "") {
		g := s.spotGroup()
		switch {
		case groupKey != "":
			ps.Add(groupKey, "the groups say their spot replicas with spot_replicas: remove spot.replicas and spot.group")
		case c.Group == "":
			ps.Add("spot.group", "name the group whose replicas are on spot (a fleet of [[cluster.groups]] has several), or set spot_replicas in each [[cluster.groups]] table")
		case g == nil:
			ps.Add("spot.group", "%q is not a group of [[cluster.groups]]", c.Group)
		case c.Replicas < 0 || c.Replicas > g.Replicas-g.Down():
			ps.Add("spot.replicas", "must be an integer in [0, the group's replicas%s = %d], found %d", downText(g.Down(), "its down_replicas"), g.Replicas-g.Down(), c.Replicas)
		}
	} else if n := s.Cluster.Replicas - s.RunDown(); c.Replicas < 0 || c.Replicas > n {
		ps.Add("spot.replicas", "must be an integer in [0, cluster.replicas%s = %d], found %d", downText(s.RunDown(), "run.down_replicas"), n, c.Replicas)
	}
	if len(s.Cluster.Groups) == 0 && c.Group != "" {
		ps.Add("spot.group", "names a group of [[cluster.groups]]; this fleet has none")
	}
	for i, g := range s.Cluster.Groups {
		if n := max(g.Replicas, 0) - g.Down(); g.SpotReplicas < 0 || g.SpotReplicas > n {
			ps.Add(fmt.Sprintf("cluster.groups.%d.spot_replicas", i), "must be an integer in [0, the group's replicas%s = %d], found %d", downText(g.Down(), "its down_replicas"), n, g.SpotReplicas)
		}
	}
	switch n := s.Disagg.Decode.Replicas; {
	case c.DecodeReplicas != 0 && !s.Disagg.Enabled:
		ps.Add("spot.decode_replicas", "puts a disaggregated fleet's decode replicas on spot: it needs [disagg] enabled = true, found %d", c.DecodeReplicas)
	case c.DecodeReplicas < 0 || c.DecodeReplicas > n:
		ps.Add("spot.decode_replicas", "must be an integer in [0, disagg.decode.replicas = %d], found %d", n, c.DecodeReplicas)
	}
	if s.SpotReplicas() == 0 && s.DecodeSpotReplicas() == 0 {
		return
	}
	ps.Positive("spot.interruptions_per_hour", c.InterruptionsPerHour)
	ps.NonNegative("spot.notice_s", c.NoticeS)
	ps.NonNegative("spot.replace_s", c.ReplaceS)
	if !(c.PriceFraction > 0 && c.PriceFraction <= 1) {
		ps.Add("spot.price_fraction", "must be in (0, 1], found %v", c.PriceFraction)
	}
}

// spotGroup is the group [spot] names, nil when none (or no groups).
func (s *Scenario) spotGroup() *fleet.GroupConfig {
	for i := range s.Cluster.Groups {
		if g := &s.Cluster.Groups[i]; g.Name == s.Spot.Group {
			return g
		}
	}
	return nil
}

// groupSpotKey is the key of the first group with spot replicas
// (cluster.groups.I.spot_replicas), or "" when none has.
func (s *Scenario) groupSpotKey() string {
	for i, g := range s.Cluster.Groups {
		if g.SpotReplicas != 0 {
			return fmt.Sprintf("cluster.groups.%d.spot_replicas", i)
		}
	}
	return ""
}

// SpotFit is how many of n replicas, down of them in repair, are on spot
// when spot are asked for: spot, at most the n − down not in repair (the
// replicas in repair are the very last, the spot ones the last before
// them). Sizing searches keep a fleet's spot replicas so at every count.
func SpotFit(spot, n, down int) int { return min(max(spot, 0), max(n-down, 0)) }

// downText is " − what" when k replicas are in repair, else "".
func downText(k int, what string) string {
	if k > 0 {
		return " − " + what
	}
	return ""
}

// RunDown is run.down_replicas within [0, cluster.replicas] (a fleet of
// one kind's replicas in repair).
func (s *Scenario) RunDown() int {
	if len(s.Cluster.Groups) > 0 {
		return 0
	}
	return min(max(s.Run.DownReplicas, 0), max(s.Cluster.Replicas, 0))
}

// SpotPart is one group's spot replicas (the whole fleet's in a fleet of
// one kind): replicas [first, end), tp GPUs each, of group g (nil in a
// fleet of one kind).
type SpotPart struct {
	Group      *fleet.GroupConfig
	First, End int
	TP         int
}

// N is the part's spot replicas.
func (p SpotPart) N() int { return p.End - p.First }

// SpotParts are the spot replicas, group by group in order: the fleet's
// last spot.replicas, or in a fleet of groups each group's last
// spot_replicas (or the last spot.replicas of the group spot.group names)
// — the last but those in repair (run.down_replicas, a group's
// down_replicas), which are the very last. Empty without spot. (Counts out
// of range are refused by validateSpot.)
func (s *Scenario) SpotParts() []SpotPart {
	if len(s.Cluster.Groups) == 0 {
		end := s.Cluster.Replicas - s.RunDown()
		if k := SpotFit(s.Spot.Replicas, s.Cluster.Replicas, s.RunDown()); k > 0 {
			return []SpotPart{{nil, end - k, end, s.Cluster.GPUsPerReplica()}}
		}
		return nil
	}
	var parts []SpotPart
	end := 0
	for i := range s.Cluster.Groups {
		g := &s.Cluster.Groups[i]
		end += max(g.Replicas, 0)
		k := g.SpotReplicas
		if s.Spot.Group != "" && g.Name == s.Spot.Group {
			k = s.Spot.Replicas
		}
		last := end - g.Down()
		if k = SpotFit(k, max(g.Replicas, 0), g.Down()); k > 0 {
			parts = append(parts, SpotPart{g, last - k, last, g.TP})
		}
	}
	return parts
}

// SpotReplicas is the number of spot replicas, over every group.
func (s *Scenario) SpotReplicas() int {
	n := 0
	for _, p := range s.SpotParts() {
		n += p.N()
	}
	return n
}

// spotPartOf is the part replica i is in, or nil.
func (s *Scenario) spotPartOf(i int) *SpotPart {
	parts := s.SpotParts()
	for k := range parts {
		if i >= parts[k].First && i < parts[k].End {
			return &parts[k]
		}
	}
	return nil
}

// SpotUnit is failures.csv's unit of spot replica i: "replica 3", or
// "replica 3 (b200)" in a fleet of groups.
func (s *Scenario) SpotUnit(e fleet.SpotEvent) string {
	if p := s.spotPartOf(e.Replica); p != nil && p.Group != nil {
		return e.Unit() + " (" + p.Group.Name + ")"
	}
	return e.Unit()
}

func (s *Scenario) SpotParams() fleet.SpotParams {
	var ranges [][2]int
	for _, p := range s.SpotParts() {
		ranges = append(ranges, [2]int{p.First, p.End})
	}
	return s.spotParams(ranges)
}

// DecodeSpotReplicas is the decode pool's spot replicas (0 without
// [disagg]).
func (s *Scenario) DecodeSpotReplicas() int {
	if !s.Disagg.Enabled {
		return 0
	}
	return min(max(s.Spot.DecodeReplicas, 0), max(s.Disagg.Decode.Replicas, 0))
}

// DecodeSpotRange is the decode pool's spot replicas, [first, end) of its
// indices: its last serving ones (its warm spares come after).
func (s *Scenario) DecodeSpotRange() [2]int {
	m := max(s.Disagg.Decode.Replicas, 0)
	return [2]int{m - s.DecodeSpotReplicas(), m}
}

// DecodeSpotParams are the interruptions of the decode pool's spot
// replicas: [spot]'s rates over DecodeSpotRange.
func (s *Scenario) DecodeSpotParams() fleet.SpotParams {
	return s.spotParams([][2]int{s.DecodeSpotRange()})
}

func (s *Scenario) spotParams(ranges [][2]int) fleet.SpotParams {
	c := s.Spot
	return fleet.SpotParams{Ranges: ranges, RatePerHour: c.InterruptionsPerHour,
		Notice: sim.FromSeconds(c.NoticeS), Replace: sim.FromSeconds(c.ReplaceS), Drain: c.Drain}
}
