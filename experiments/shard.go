package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/models"
	"github.com/fleetsim/fleetsim/models/faults"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// Sharding (DESIGN.md, "Past one machine"). A command that runs many
// scenario replications — run, ab, sweep — can run one shard of them:
// the jobs are the (scenario, replication) pairs in order, and shard i of
// n takes the jobs whose index is i−1 modulo n. It writes a part file; merge
// reads the parts and writes what one machine running everything would
// have written, byte for byte. The batch system runs the shards (a
// Kubernetes Indexed Job, a Slurm job array: README).

// Shard is shard Index (1-based) of Count; the zero value is no sharding.
type Shard struct{ Index, Count int }

// ParseShard parses "i/n" with 1 <= i <= n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, e1 := strconv.Atoi(strings.TrimSpace(a))
	n, e2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || e1 != nil || e2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: expected i/n with 1 <= i <= n, e.g. 2/8", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// Active reports whether sharding is on.
func (s Shard) Active() bool { return s.Count > 1 }

// takes reports whether job j belongs to this shard.
func (s Shard) takes(j int) bool { return !s.Active() || j%s.Count == s.Index-1 }

// Part is one shard's results.
type Part struct {
	Version  int        `json:"version"`
	Kind     string     `json:"kind"` // "run", "ab" or "sweep"
	Shard    int        `json:"shard"`
	Of       int        `json:"of"`
	Scenario string     `json:"scenario"`
	Reps     []int      `json:"replications"` // per scenario
	Names    []string   `json:"names"`        // arm names (ab), point names (sweep)
	Axes     []Axis     `json:"axes,omitempty"`
	Values   [][]string `json:"values,omitempty"` // sweep point values
	Jobs     []PartJob  `json:"jobs"`
}

// PartJob is one replication's results.
type PartJob struct {
	Scenario    int                    `json:"scenario"`
	Replication int                    `json:"replication"`
	Seed        uint64                 `json:"seed"`
	Summary     *Summary               `json:"summary"`
	TTFT        *quantile.Sketch       `json:"ttft,omitempty"`
	TPOT        *quantile.Sketch       `json:"tpot,omitempty"`
	ITL         *quantile.Sketch       `json:"itl,omitempty"`
	E2E         *quantile.Sketch       `json:"e2e,omitempty"`
	Samples     []models.Sample        `json:"samples,omitempty"`
	Timeline    []faults.TimelinePoint `json:"timeline,omitempty"`
	// TrainingTrace: a training job's timeline (replication 0).
	TrainingTrace []training.TracePoint `json:"training_trace,omitempty"`

	// TTFTSplit: a disaggregated fleet's TTFT stages (RepResult.TTFTSplit).
	TTFTSplit map[string]*quantile.Sketch `json:"ttft_split,omitempty"`
}

const partVersion = 1

// NewPart collects a shard's results (results[scenario][replication], nil
// where another shard ran the job).
func NewPart(kind string, sh Shard, scenario string, names []string, results [][]*RepResult) *Part {
	p := &Part{Version: partVersion, Kind: kind, Shard: sh.Index, Of: sh.Count, Scenario: scenario, Names: names}
	for s, reps := range results {
		p.Reps = append(p.Reps, len(reps))
		for i, r := range reps {
			if r == nil {
				continue
			}
			p.Jobs = append(p.Jobs, PartJob{Scenario: s, Replication: i, Seed: r.Seed, Summary: r.Summary,
				TTFT: r.TTFT, TPOT: r.TPOT, ITL: r.ITL, E2E: r.E2E, TTFTSplit: r.TTFTSplit, Samples: r.Samples, Timeline: r.Timeline,
				TrainingTrace: r.TrainingTrace})
		}
	}
	return p
}

// Write saves the part as DIR/part-I-of-N.json and returns the path.
func (p *Part) Write(dir string) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	path := fmt.Sprintf("%s/part-%d-of-%d.json", dir, p.Shard, p.Of)
	return path, WriteFileAtomic(path, b)
}

// summaryJSON round-trips a training summary's mode: a training part
// summary carries only its training block.
func (j *PartJob) UnmarshalJSON(b []byte) error {
	type plain PartJob
	var raw struct {
		plain
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*j = PartJob(raw.plain)
	j.Summary = &Summary{}
	return json.Unmarshal(raw.Summary, j.Summary)
}

// ReadParts reads part files and reassembles results[scenario][replication].
// Every part must come from the same command and every job must be there
// exactly once.
func ReadParts(paths []string) (*Part, [][]*RepResult, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("merge: no part files")
	}
	var first *Part
	var results [][]*RepResult
	seen := map[int]bool{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("merge: %w", err)
		}
		var p Part
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, nil, fmt.Errorf("merge: %s: not a part file: %w", path, err)
		}
		if p.Version != partVersion {
			return nil, nil, fmt.Errorf("merge: %s: part version %d, this fleetsim reads %d", path, p.Version, partVersion)
		}
		if first == nil {
			first = &p
			for _, n := range p.Reps {
				results = append(results, make([]*RepResult, n))
			}
		} else if p.Kind != first.Kind || p.Of != first.Of || p.Scenario != first.Scenario ||
			fmt.Sprint(p.Reps, p.Names, p.Values) != fmt.Sprint(first.Reps, first.Names, first.Values) {
			return nil, nil, fmt.Errorf("merge: %s is a shard of another run (%s %s, %d shards) than %s", path, p.Kind, p.Scenario, p.Of, paths[0])
		}
		if seen[p.Shard] {
			return nil, nil, fmt.Errorf("merge: shard %d/%d given twice", p.Shard, p.Of)
		}
		seen[p.Shard] = true
		for _, j := range p.Jobs {
			if j.Scenario < 0 || j.Scenario >= len(results) || j.Replication < 0 || j.Replication >= len(results[j.Scenario]) ||
				results[j.Scenario][j.Replication] != nil || j.Summary == nil {
				return nil, nil, fmt.Errorf("merge: %s: job (%d, %d) out of range or repeated", path, j.Scenario, j.Replication)
			}
			results[j.Scenario][j.Replication] = &RepResult{Index: j.Replication, Seed: j.Seed, Summary: j.Summary,
				TTFT: j.TTFT, TPOT: j.TPOT, ITL: j.ITL, E2E: j.E2E, TTFTSplit: j.TTFTSplit, Samples: j.Samples, Timeline: j.Timeline,
				TrainingTrace: j.TrainingTrace}
		}
	}
	var missing []string
	for i := 1; i <= first.Of; i++ {
		if !seen[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, first.Of))
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("merge: shards %s are missing", strings.Join(missing, ", "))
	}
	return first, results, nil
}
