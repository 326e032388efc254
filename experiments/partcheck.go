package experiments

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/infile"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// Part files come from other machines and may be corrupt, truncated,
// edited or from another experiment. ReadPart checks one in full before
// merge touches it, so that a bad part is refused with a message naming
// the file and the problem instead of crashing the merge or being averaged
// in silently.

// MaxJobs bounds the jobs (scenario replications) of one sharded command,
// so that a part cannot make merge allocate without bound: a sweep's
// maxSweepPoints points × 100 replications. A command with more jobs is
// refused before it runs.
const MaxJobs = 1_000_000

// JobCount is the number of jobs (replications of every scenario) a
// command over scs runs.
func JobCount(scs []*scenario.Scenario) int {
	n := 0
	for _, sc := range scs {
		n += max(sc.Run.Replications, 1)
	}
	return n
}

// CheckShard refuses a shard count larger than the job count (a shard
// would have nothing to do) or a job count over MaxJobs.
func (s Shard) CheckShard(jobs int) error {
	if jobs > MaxJobs {
		return fmt.Errorf("--shard: %d jobs (scenarios × replications), at most %d", jobs, MaxJobs)
	}
	if s.Count > jobs {
		return fmt.Errorf("--shard %d/%d: only %d jobs (scenarios × replications) to split, so at most %d shards", s.Index, s.Count, jobs, jobs)
	}
	return nil
}

// ReadPart reads and checks one part file.
func ReadPart(path string) (*Part, error) {
	b, err := infile.ReadFile(nil, path, infile.Part)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return DecodePart(path, b)
}

// DecodePart decodes and checks the part file data read from path.
func DecodePart(path string, b []byte) (*Part, error) {
	var p Part
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("merge: %s: not a part file: %w", path, err)
	}
	if p.Version != partVersion {
		return nil, fmt.Errorf("merge: %s: part version %d, this fleetsim reads %d (write the parts and merge them with the same fleetsim)", path, p.Version, partVersion)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("merge: %s: corrupt part file: %w", path, err)
	}
	return &p, nil
}

// check validates a part's shape, ranges and contents: the kind, the shard
// within the shard count and the count within the job count, the arm or
// sweep point names (they become directories), the provenance, and every
// job: in range, in this shard, each once, all of this shard's there, its
// seed the one its replication runs on, its summary present and its
// request counts conserved, its sketches consistent with the summary.
func (p *Part) check() error {
	switch p.Kind {
	case "run", "ab", "sweep":
	default:
		return fmt.Errorf("kind %q: expected run, ab or sweep", p.Kind)
	}
	if err := scenario.CheckName(p.Scenario); err != nil {
		return fmt.Errorf("scenario name: %w", err)
	}
	if len(p.Reps) == 0 || len(p.Reps) > scenario.MaxSweepPoints {
		return fmt.Errorf("%d scenarios: expected 1 to %d", len(p.Reps), scenario.MaxSweepPoints)
	}
	total := 0
	for _, n := range p.Reps {
		if n < 1 || n > 10000 {
			return fmt.Errorf("replications %d: expected 1 to 10000", n)
		}
		if n != p.Reps[0] {
			return fmt.Errorf("replications differ between scenarios (%d, %d): arms and sweep points share them", p.Reps[0], n)
		}
		total += n
	}
	if total > MaxJobs {
		return fmt.Errorf("%d jobs, at most %d", total, MaxJobs)
	}
	if p.Of < 1 || p.Of > total || p.Shard < 1 || p.Shard > p.Of {
		return fmt.Errorf("shard %d of %d: expected 1 <= shard <= shards <= jobs (%d)", p.Shard, p.Of, total)
	}
	if err := p.checkNames(); err != nil {
		return err
	}
	pv := p.Prov
	if pv.Command != p.Kind || pv.Shards != p.Of || len(pv.Seeds) != len(p.Reps) || len(pv.ScenarioSHA256) != 64 {
		return fmt.Errorf("provenance (command %q, %d shards, %d seeds, scenario hash %q) does not match the part (%s, %d shards, %d scenarios)",
			pv.Command, pv.Shards, len(pv.Seeds), pv.ScenarioSHA256, p.Kind, p.Of, len(p.Reps))
	}
	want := 0 // jobs of this shard
	if p.Shard-1 < total {
		want = (total - p.Shard + p.Of) / p.Of
	}
	if len(p.Jobs) != want {
		return fmt.Errorf("%d jobs, but shard %d of %d has %d", len(p.Jobs), p.Shard, p.Of, want)
	}
	first := make([]int, len(p.Reps)) // job index of each scenario's replication 0
	for s := 1; s < len(p.Reps); s++ {
		first[s] = first[s-1] + p.Reps[s-1]
	}
	seen := map[[2]int]bool{}
	mode := ""
	for k := range p.Jobs {
		j := &p.Jobs[k]
		if j.Scenario < 0 || j.Scenario >= len(p.Reps) || j.Replication < 0 || j.Replication >= p.Reps[j.Scenario] {
			return fmt.Errorf("job (%d, %d) out of range", j.Scenario, j.Replication)
		}
		key := [2]int{j.Scenario, j.Replication}
		if seen[key] {
			return fmt.Errorf("job (%d, %d) repeated", j.Scenario, j.Replication)
		}
		seen[key] = true
		if idx := first[j.Scenario] + j.Replication; idx%p.Of != p.Shard-1 {
			return fmt.Errorf("job (%d, %d) belongs to shard %d, not %d", j.Scenario, j.Replication, idx%p.Of+1, p.Shard)
		}
		if err := j.check(pv.Seeds[j.Scenario]); err != nil {
			return fmt.Errorf("job (%d, %d): %w", j.Scenario, j.Replication, err)
		}
		if mode == "" {
			mode = j.Summary.Mode
		} else if j.Summary.Mode != mode {
			return fmt.Errorf("job (%d, %d): mode %q, another job's %q", j.Scenario, j.Replication, j.Summary.Mode, mode)
		}
	}
	return nil
}

// checkNames checks the arm or sweep point names, which become directories
// of the merged run directory and fields of its CSV files.
func (p *Part) checkNames() error {
	if len(p.Names) != len(p.Reps) {
		return fmt.Errorf("%d names for %d scenarios", len(p.Names), len(p.Reps))
	}
	switch p.Kind {
	case "run":
		if len(p.Reps) != 1 || p.Names[0] != "" {
			return fmt.Errorf("a run part has one scenario and no arm names")
		}
	case "ab":
		if len(p.Reps) < 2 {
			return fmt.Errorf("an A/B part has at least two arms, found %d", len(p.Reps))
		}
		seen := map[string]bool{}
		for _, n := range p.Names {
			if err := scenario.CheckName(n); err != nil {
				return fmt.Errorf("arm name: %w", err)
			}
			if seen[n] {
				return fmt.Errorf("arm name %q repeated", n)
			}
			seen[n] = true
		}
	case "sweep":
		if len(p.Axes) == 0 || len(p.Values) != len(p.Reps) {
			return fmt.Errorf("a sweep part needs axes and one list of values per point (%d axes, %d lists, %d points)", len(p.Axes), len(p.Values), len(p.Reps))
		}
		for i, v := range p.Values {
			if len(v) != len(p.Axes) {
				return fmt.Errorf("sweep point %d has %d values for %d axes", i, len(v), len(p.Axes))
			}
			if n := pointName(p.Axes, v); n != p.Names[i] {
				return fmt.Errorf("sweep point %d is named %q, its values say %q", i, p.Names[i], n)
			}
			if err := scenario.CheckPointName(p.Names[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// check validates one job of scenario master seed master.
func (j *PartJob) check(master uint64) error {
	if j.Summary == nil {
		return fmt.Errorf("no summary")
	}
	if want := ReplicationSeed(master, j.Replication); j.Seed != want || j.Summary.Sim.Seed != want {
		return fmt.Errorf("seed %d (summary %d), but the replication runs on %d", j.Seed, j.Summary.Sim.Seed, want)
	}
	s := j.Summary
	switch s.Mode {
	case scenario.ModeTraining:
		if s.Training == nil {
			return fmt.Errorf("a training summary without its training block")
		}
	case scenario.ModeServing:
		if s.Training != nil {
			return fmt.Errorf("a serving summary with a training block")
		}
	default:
		return fmt.Errorf("mode %q: expected %s or %s", s.Mode, scenario.ModeServing, scenario.ModeTraining)
	}
	r := s.Requests
	if r.Arrived < 0 || r.Completed < 0 || r.Failed < 0 || r.Shed < 0 || r.InFlight < 0 || r.Preempted < 0 {
		return fmt.Errorf("negative request count (arrived %d, completed %d, failed %d, shed %d, in flight %d, preempted %d)",
			r.Arrived, r.Completed, r.Failed, r.Shed, r.InFlight, r.Preempted)
	}
	if r.Completed+r.Failed+r.Shed+r.InFlight != r.Arrived || r.Preempted > r.Completed {
		return fmt.Errorf("requests not conserved: arrived %d ≠ completed %d + failed %d + shed %d + in flight %d (or preempted %d > completed)",
			r.Arrived, r.Completed, r.Failed, r.Shed, r.InFlight, r.Preempted)
	}
	for k, n := range s.Failed {
		if n < 0 {
			return fmt.Errorf("failed_by_reason.%s = %d is negative", k, n)
		}
	}
	if err := checkFigures(reflect.ValueOf(s).Elem(), ""); err != nil {
		return err
	}
	l := s.LatencyMs
	for _, d := range []struct {
		name  string
		d     report.Dist
		most  int64
		whose string
	}{{"ttft", l.TTFT, r.Completed, "completed"}, {"tpot", l.TPOT, r.Completed, "completed"}, {"e2e", l.E2E, r.Completed, "completed"},
		{"queue", l.Queue, r.Arrived, "arrived"}, {"ttft_client", l.ClientTTFT, r.Arrived, "arrived"}} {
		if d.d.N > uint64(d.most) {
			return fmt.Errorf("latency_ms.%s.n = %d, more than the %d requests %s", d.name, d.d.N, d.most, d.whose)
		}
		q := []float64{d.d.P50, d.d.P90, d.d.P95, d.d.P99, d.d.P999, d.d.Max}
		for i := 1; i < len(q); i++ {
			if q[i] < q[i-1] {
				return fmt.Errorf("latency_ms.%s: quantiles out of order (p50 %v, p90 %v, p95 %v, p99 %v, p999 %v, max %v)", d.name, q[0], q[1], q[2], q[3], q[4], q[5])
			}
		}
		if d.d.Mean > d.d.Max {
			return fmt.Errorf("latency_ms.%s: mean %v above max %v", d.name, d.d.Mean, d.d.Max)
		}
	}
	for _, m := range []struct {
		name string
		sk   *quantile.Sketch
		n    uint64
	}{{"ttft", j.TTFT, s.LatencyMs.TTFT.N}, {"tpot", j.TPOT, s.LatencyMs.TPOT.N}, {"itl", j.ITL, s.LatencyMs.ITL.N}, {"e2e", j.E2E, s.LatencyMs.E2E.N}} {
		if m.sk == nil {
			continue
		}
		if m.sk.Alpha() != quantile.DefaultAlpha || m.sk.ExactLimit() != quantile.DefaultExactLimit {
			return fmt.Errorf("%s sketch has alpha %v and exact limit %d; fleetsim writes %v and %d",
				m.name, m.sk.Alpha(), m.sk.ExactLimit(), quantile.DefaultAlpha, quantile.DefaultExactLimit)
		}
		if m.sk.Count() != m.n {
			return fmt.Errorf("%s sketch holds %d values, the summary says %d", m.name, m.sk.Count(), m.n)
		}
	}
	if j.Replication != 0 && (len(j.Samples) > 0 || len(j.Timeline) > 0) {
		return fmt.Errorf("a time series or failure timeline outside replication 0")
	}
	if len(j.Samples) > scenario.MaxSamples+1 {
		return fmt.Errorf("%d time-series samples, at most %d", len(j.Samples), scenario.MaxSamples+1)
	}
	return nil
}

// fractionKey names the summary figures that are fractions, in [0, 1].
var fractionKey = regexp.MustCompile(`frac|(^|_)(mfu|attainment|hit_rate|success_rate|availability|utilization)`)

// checkFigures range-checks every number of a part's summary (v, a struct,
// reached by the JSON path path): fleetsim writes none that is negative
// (counts, times, latencies, dollars, rates; the golden summaries hold
// none), nor NaN or infinite, and the fractions (fractionKey) are at most
// 1. An edited part (a negative cost, MFU −2) is refused, not merged.
func checkFigures(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkFigures(v.Elem(), path)
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if err := checkFigures(v.Field(i), joinPath(path, name)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := checkFigures(v.Index(i), fmt.Sprintf("%s.%d", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := checkFigures(it.Value(), joinPath(path, fmt.Sprint(it.Key().Interface()))); err != nil {
				return err
			}
		}
	case reflect.Float32, reflect.Float64:
		x := v.Float()
		last := path[strings.LastIndexByte(path, '.')+1:]
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0) || x < 0:
			return fmt.Errorf("%s = %v: expected a finite number >= 0", path, x)
		case x > 1 && fractionKey.MatchString(last):
			return fmt.Errorf("%s = %v: a fraction, expected 0 to 1", path, x)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() < 0 {
			return fmt.Errorf("%s = %d: expected a count >= 0", path, v.Int())
		}
	}
	return nil
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
