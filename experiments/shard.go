package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
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
	Version  int             `json:"version"`
	Kind     string          `json:"kind"` // "run", "ab" or "sweep"
	Shard    int             `json:"shard"`
	Of       int             `json:"of"`
	Scenario string          `json:"scenario"`
	Reps     []int           `json:"replications"` // per scenario
	Names    []string        `json:"names"`        // arm names (ab), point names (sweep)
	Axes     []scenario.Axis `json:"axes,omitempty"`
	Values   [][]string      `json:"values,omitempty"` // sweep point values
	Jobs     []PartJob       `json:"jobs"`
	// Prov says which experiment the jobs belong to; merge refuses parts
	// whose provenance differs.
	Prov Provenance `json:"provenance"`
}

// PartJob is one replication's results.
type PartJob struct {
	Scenario    int                      `json:"scenario"`
	Replication int                      `json:"replication"`
	Seed        uint64                   `json:"seed"`
	Summary     *report.Summary          `json:"summary"`
	TTFT        *quantile.Sketch         `json:"ttft,omitempty"`
	TPOT        *quantile.Sketch         `json:"tpot,omitempty"`
	ITL         *quantile.Sketch         `json:"itl,omitempty"`
	E2E         *quantile.Sketch         `json:"e2e,omitempty"`
	Samples     []fleet.Sample           `json:"samples,omitempty"`
	Timeline    []failures.TimelinePoint `json:"timeline,omitempty"`
	// TrainingTrace: a training job's timeline (replication 0).
	TrainingTrace []training.TracePoint `json:"training_trace,omitempty"`

	// TTFTSplit: a disaggregated fleet's TTFT stages (RepResult.TTFTSplit).
	TTFTSplit map[string]*quantile.Sketch `json:"ttft_split,omitempty"`
}

// partVersion 2 added the provenance.
const partVersion = 2

// NewPart collects a shard's results (results[scenario][replication], nil
// where another shard ran the job).
func NewPart(kind string, sh Shard, scenario string, names []string, results [][]*report.RepResult, prov Provenance) *Part {
	p := &Part{Version: partVersion, Kind: kind, Shard: sh.Index, Of: sh.Count, Scenario: scenario, Names: names, Prov: prov}
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
	return path, report.WriteFileAtomic(path, b)
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
	j.Summary = nil
	if len(raw.Summary) == 0 || string(raw.Summary) == "null" {
		return nil // refused by Part.check
	}
	j.Summary = &report.Summary{}
	return json.Unmarshal(raw.Summary, j.Summary)
}

// ReadParts reads part files and reassembles results[scenario][replication].
// Every part is checked in full (Part.check) before anything is merged;
// every part must have the same provenance (the same experiment: scenario,
// seeds, command and flags, shard count, fleetsim version), and every job
// must be there exactly once.
func ReadParts(paths []string) (*Part, [][]*report.RepResult, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("merge: no part files")
	}
	var first *Part
	var results [][]*report.RepResult
	seen := map[int]string{}
	for _, path := range paths {
		p, err := ReadPart(path)
		if err != nil {
			return nil, nil, err
		}
		if first == nil {
			first = p
			for _, n := range p.Reps {
				results = append(results, make([]*report.RepResult, n))
			}
		} else if err := samePart(paths[0], first, path, p); err != nil {
			return nil, nil, err
		}
		if prev, ok := seen[p.Shard]; ok {
			return nil, nil, fmt.Errorf("merge: shard %d/%d given twice (%s and %s)", p.Shard, p.Of, prev, path)
		}
		seen[p.Shard] = path
		for _, j := range p.Jobs {
			results[j.Scenario][j.Replication] = &report.RepResult{Index: j.Replication, Seed: j.Seed, Summary: j.Summary,
				TTFT: j.TTFT, TPOT: j.TPOT, ITL: j.ITL, E2E: j.E2E, TTFTSplit: j.TTFTSplit, Samples: j.Samples, Timeline: j.Timeline,
				TrainingTrace: j.TrainingTrace}
		}
	}
	var missing []string
	for i := 1; i <= first.Of; i++ {
		if _, ok := seen[i]; !ok {
			if len(missing) == 10 {
				missing = append(missing, fmt.Sprintf("and %d more", first.Of-len(seen)-10))
				break
			}
			missing = append(missing, fmt.Sprintf("%d/%d", i, first.Of))
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("merge: shards %s are missing", strings.Join(missing, ", "))
	}
	mode := results[0][0].Summary.Mode
	for s := range results {
		for _, r := range results[s] {
			if r.Summary.Mode != mode {
				return nil, nil, fmt.Errorf("merge: the parts mix %s and %s summaries", mode, r.Summary.Mode)
			}
		}
	}
	return first, results, nil
}

// samePart refuses part p (at path) when it is not a shard of the same
// experiment as first (at firstPath), naming the field that differs.
func samePart(firstPath string, first *Part, path string, p *Part) error {
	field, a, b := first.Prov.diff(p.Prov)
	if field == "" {
		switch {
		case p.Kind != first.Kind:
			field, a, b = "command", first.Kind, p.Kind
		case p.Scenario != first.Scenario:
			field, a, b = "scenario name", first.Scenario, p.Scenario
		case fmt.Sprint(p.Reps) != fmt.Sprint(first.Reps):
			field, a, b = "replications", short(fmt.Sprint(first.Reps)), short(fmt.Sprint(p.Reps))
		case fmt.Sprint(p.Names, p.Axes, p.Values) != fmt.Sprint(first.Names, first.Axes, first.Values):
			field, a, b = "arms or sweep points", short(fmt.Sprint(first.Names)), short(fmt.Sprint(p.Names))
		}
	}
	if field == "" {
		return nil
	}
	return fmt.Errorf("merge: %s and %s are parts of different experiments: they differ in %s (%s vs %s); merge only the parts of one sharded command",
		firstPath, path, field, a, b)
}
