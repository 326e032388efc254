package scenario

import ()

// DownIndexes are the replicas in repair for the whole run: the last
// run.down_replicas of a fleet of one kind, or each group's last
// down_replicas.
func (s *Scenario) DownIndexes() []int {
	if len(s.Cluster.Groups) > 0 {
		return s.Cluster.DownIndexes()
	}
	out := make([]int, max(0, min(s.Run.DownReplicas, s.Cluster.Replicas))) // (bad counts are refused elsewhere)
	for k := range out {
		out[k] = s.Cluster.Replicas - 1 - k
	}
	return out
}
