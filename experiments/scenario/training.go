package scenario

import (
	"fmt"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/policies"
)

// TrainingScenario is a scenario's [training] table (mode = "training"):
// one synchronous job on a cluster, failing as [failures] says.
type TrainingScenario struct {
	training.Config
	// Checkpoint picks the interval: "daly" (default), "young" or "fixed".
	Checkpoint policies.CheckpointConfig `toml:"checkpoint"`
	// Topology is the cluster the job runs on. Default: 2,048 HGX servers
	// (Llama 3, CALIBRATION.md §1).
	Topology failures.TopologyConfig `toml:"topology"`
	// Stragglers are fail-slow GPUs present from the start for the whole
	// run ([[training.stragglers]]): what one bad GPU costs a job.
	Stragglers []training.Straggler `toml:"stragglers"`
	// SpareCoverage, in (0, 1), sizes the spare pool from the failure
	// profile and the topology instead of spare_servers: the fewest spare
	// hosts that cover the job's hosts in repair with this probability
	// (failures.Profile.HostSparesAt; what `fleetsim failures show PROFILE
	// --gpus N --topology KIND` prints for 0.99 and 0.999), ByteRobust's
	// rule of sizing the standby pool to the P99 of machines out
	// (CALIBRATION.md §1, S). Over-evicted hosts are not counted. Default
	// 0: spare_servers as given.
	SpareCoverage float64 `toml:"spare_coverage"`
}

// resolveSpares sets spare_servers from spare_coverage, if given (its
// problems are left to Validate).
func (t *TrainingScenario) resolveSpares(f *failures.Config, has func(string) bool, ps *config.Problems) {
	if t.SpareCoverage == 0 {
		return
	}
	if has("training.spare_servers") {
		ps.Add("training.spare_coverage", "sizes the spare pool: remove training.spare_servers (%d) or this key", t.SpareServers)
		return
	}
	if !(t.SpareCoverage > 0 && t.SpareCoverage < 1) || t.GPUs <= 0 {
		return
	}
	var tps config.Problems
	t.Topology.Validate("training.topology", &tps)
	if tps.Err() != nil {
		return
	}
	if !f.Enabled {
		t.SpareServers = 0 // nothing fails
		return
	}
	prof, err := f.BuildProfile()
	if err != nil || !(f.RateMultiplier > 0) {
		return
	}
	t.SpareServers = prof.Scaled(f.RateMultiplier).HostSparesAt(t.Topology.Topology(), t.GPUs, t.SpareCoverage)
}

// DefaultTrainingScenario is Llama 3's job (training.Llama3PretrainConfig).
func DefaultTrainingScenario() TrainingScenario {
	return TrainingScenario{Config: training.Llama3PretrainConfig(), Checkpoint: policies.DefaultCheckpointConfig(),
		Topology: failures.DefaultTopologyConfig()}
}

// Validate records problems under prefix.
func (t *TrainingScenario) Validate(prefix string, ps *config.Problems) {
	t.Config.Validate(prefix, ps)
	t.Checkpoint.Validate(prefix+".checkpoint", ps)
	t.Topology.Validate(prefix+".topology", ps)
	if t.SpareCoverage != 0 && !(t.SpareCoverage > 0 && t.SpareCoverage < 1) {
		ps.Add(config.Key(prefix, "spare_coverage"), "must be 0 (off) or between 0 and 1 (exclusive), found %v", t.SpareCoverage)
	}
	for i := range t.Stragglers {
		t.Stragglers[i].Validate(fmt.Sprintf("%s.stragglers.%d", prefix, i), t.GPUs, ps)
	}
}

// Scenario modes.
const (
	ModeServing  = "serving"
	ModeTraining = "training"
)
