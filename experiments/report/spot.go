package report

import (
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// TimeseriesColumn is one per-group column of timeseries.csv: its name and the
// replicas it counts, [first, end).
type TimeseriesColumn struct {
	Name       string
	First, End int
}

// GroupColumns are timeseries.csv's per-group columns of a fleet of groups:
// provisioned_replicas.GROUP for each group in order (the groups' warm
// spares last, as NAME-spares), then
// provisioned_spot_replicas.GROUP for each group's spot replicas;
// nil for a fleet of one kind (whose timeseries.csv has no such columns).
func GroupColumns(sc *scenario.Scenario) []TimeseriesColumn {
	if len(sc.Cluster.Groups) == 0 {
		return nil
	}
	var cols []TimeseriesColumn
	first := 0
	groups := sc.Cluster.Groups
	if sc.GroupSpares() > 0 {
		groups = sc.Cluster.WithSpareGroups().Groups // the spares' groups too (paid while provisioned)
	}
	for _, g := range groups {
		cols = append(cols, TimeseriesColumn{results.ProvisionedReplicas + "." + g.Name, first, first + g.Replicas})
		first += g.Replicas
	}
	for _, p := range sc.SpotParts() {
		cols = append(cols, TimeseriesColumn{results.ProvisionedSpotReplicas + "." + p.Group.Name, p.First, p.End})
	}
	return cols
}
