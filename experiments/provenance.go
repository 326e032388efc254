package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"slices"
	"strconv"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/infile"
)

// Provenance says which experiment a part file's jobs belong to, so that
// merge can refuse parts of different experiments instead of averaging
// them: two parts merge only when every field is equal.
type Provenance struct {
	// Command is the command that wrote the part: "run", "ab" or "sweep".
	Command string `json:"command"`
	// Flags are the command-line flags that change results, in a fixed
	// order and form ("--seed=7", "--replications=3", "--param=KEY=SPEC");
	// --out, --workers and --quiet do not change results and are left out.
	Flags []string `json:"flags"`
	// ScenarioSHA256 is the SHA-256 of the canonical scenarios of the job
	// set (CanonicalScenarios): every scenario after defaults, overlays,
	// arms or sweep points and command-line flags, with the contents of
	// the trace and profile files it reads.
	ScenarioSHA256 string `json:"scenario_sha256"`
	// Seeds are the master seeds of the job set's scenarios, in order;
	// replication i of scenario s runs on ReplicationSeed(Seeds[s], i).
	Seeds []uint64 `json:"seeds"`
	// Shards is the shard count n of --shard i/n.
	Shards int `json:"shards"`
	// Fleetsim is the version of the fleetsim that ran the jobs
	// (BuildVersion): results may differ between versions.
	Fleetsim string `json:"fleetsim"`
}

// NewProvenance describes the job set scs run by command with the given
// result-changing flags, split into shards shards.
func NewProvenance(command string, flags []string, scs []*scenario.Scenario, shards int) (Provenance, error) {
	h, err := CanonicalScenarios(scs)
	if err != nil {
		return Provenance{}, err
	}
	p := Provenance{Command: command, Flags: slices.Clone(flags), ScenarioSHA256: h, Shards: shards, Fleetsim: BuildVersion()}
	if p.Flags == nil {
		p.Flags = []string{}
	}
	for _, sc := range scs {
		p.Seeds = append(p.Seeds, sc.Seed)
	}
	return p, nil
}

// diff names the first field in which p and q differ and both values, or
// returns "" when they are equal.
func (p Provenance) diff(q Provenance) (field, a, b string) {
	switch {
	case p.Command != q.Command:
		return "command", p.Command, q.Command
	case !slices.Equal(p.Flags, q.Flags):
		return "flags", fmt.Sprint(p.Flags), fmt.Sprint(q.Flags)
	case p.ScenarioSHA256 != q.ScenarioSHA256:
		return "scenario (sha256 of the canonical scenario after defaults and overlays)", p.ScenarioSHA256, q.ScenarioSHA256
	case !slices.Equal(p.Seeds, q.Seeds):
		return "seeds", short(fmt.Sprint(p.Seeds)), short(fmt.Sprint(q.Seeds))
	case p.Shards != q.Shards:
		return "shard count", strconv.Itoa(p.Shards), strconv.Itoa(q.Shards)
	case p.Fleetsim != q.Fleetsim:
		return "fleetsim version", p.Fleetsim, q.Fleetsim
	}
	return "", "", ""
}

func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// CanonicalScenarios returns the hex SHA-256 of the scenarios' canonical
// form: each scenario as resolved (defaults, overlays and flags applied) in
// JSON, its description left out (it does not change results), the files
// it reads by the SHA-256 of their contents rather than their paths (which
// depend on the directory the command ran in): its trace and its arrival
// rate profile; and the engine profiles it read. A scenario is data, so it
// always marshals; an error is a file that cannot be read.
func CanonicalScenarios(scs []*scenario.Scenario) (string, error) {
	h := sha256.New()
	for _, sc := range scs {
		c := *sc
		c.Description = ""
		if c.Workload.Kind == "trace" && c.Workload.Trace.Path != "" {
			sum, err := fileSHA256(c.Workload.Trace.Path, c.Workload.Trace.FS, infile.Trace)
			if err != nil {
				return "", err
			}
			c.Workload.Trace.Path = "sha256:" + sum
		}
		if c.Workload.Arrival.ProfileFile != "" {
			sum, err := fileSHA256(c.Workload.Arrival.ProfileFile, nil, infile.RateProfile)
			if err != nil {
				return "", err
			}
			c.Workload.Arrival.ProfileFile = "sha256:" + sum
		}
		b, err := json.Marshal(struct {
			Scenario *scenario.Scenario         `json:"scenario"`
			Profiles map[string]json.RawMessage `json:"profiles,omitempty"`
		}{&c, profileJSON(sc)})
		if err != nil {
			return "", fmt.Errorf("provenance: scenario %s: %w", sc.Name, err)
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func profileJSON(sc *scenario.Scenario) map[string]json.RawMessage {
	if len(sc.Profiles()) == 0 {
		return nil
	}
	out := map[string]json.RawMessage{}
	for k, p := range sc.Profiles() {
		b, err := json.Marshal(p)
		if err != nil {
			b = []byte(strconv.Quote(fmt.Sprintf("%+v", p)))
		}
		out[k] = b
	}
	return out
}

// fileSHA256 hashes a file a scenario reads: in fsys when it is not nil
// (a trace shipped in the binary), else on disk.
func fileSHA256(path string, fsys fs.FS, k infile.Kind) (string, error) {
	r, err := infile.Open(fsys, path, k)
	if err != nil {
		return "", fmt.Errorf("provenance: %w", err)
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("provenance: %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// BuildVersion is the module version and VCS revision of this binary
// ("(devel) unknown" under go run and go test), as fleetsim version
// prints them.
func BuildVersion() string {
	version, revision := VersionOf(debug.ReadBuildInfo())
	return version + " " + revision
}

// VersionOf is the module version ("(devel)" when built from a checkout)
// and the VCS revision ("-dirty" when the tree had changes; "unknown" when
// the build was not stamped: go run, go test, -buildvcs=false, or no build
// information at all) in bi.
func VersionOf(bi *debug.BuildInfo, ok bool) (version, revision string) {
	version, revision = "(devel)", "unknown"
	if !ok || bi == nil {
		return version, revision
	}
	if bi.Main.Version != "" {
		version = bi.Main.Version
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if s.Value != "" {
				revision = s.Value
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && revision != "unknown" {
		revision += "-dirty"
	}
	return version, revision
}
