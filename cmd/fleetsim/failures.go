package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

const failuresUsage = `usage:
  fleetsim failures list
      the built-in failure profiles
  fleetsim failures show PROFILE|SCENARIO.toml [--gpus N] [--json] [--job] [--topology hgx|nvl72]
      per-category rates (per GPU-hour and per 1,000 node-days of 8 GPUs),
      the implied MTBF of a fleet or job of N GPUs (default 16384), repair
      times, and the figures CALIBRATION.md flags as unconfirmed; for a
      scenario file, its [failures] profile with its [[failures.components]]
      tables applied (not scaled by rate_multiplier); --job: a training
      job's mean time to interruption by job size, 8 to 16,384 GPUs (and N),
      all causes and hardware alone, by cause, beside published job-level
      measurements; --topology: the spare hosts N GPUs need as HGX servers or
      NVL72 trays, rack faults taking every host of the rack at once
  fleetsim failures replay FILE [--servers N] [--json]
      statistics of an InfiniteHBD-format fault log replayed on N servers
      (default 400): faults by class, component and Xid, repair times, the
      share of time with at least one server down`

// nodeGPUs is the node size of the "per 1,000 node-days" figures: an HGX
// server (Meta RSC's A100 nodes are 8 GPUs too, CALIBRATION.md §1).
const nodeGPUs = 8

// cmdFailures is `fleetsim failures ...`.
func cmdFailures(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("%s", failuresUsage)
	}
	switch args[0] {
	case "list":
		if len(args) != 1 {
			return usagef("usage: fleetsim failures list")
		}
		return failuresList(stdout)
	case "show":
		return failuresShow(args[1:], stdout)
	case "replay":
		return failuresReplay(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, failuresUsage)
		return nil
	}
	return usagef("unknown failures command %q; commands: list, show, replay\n%s", args[0], failuresUsage)
}

func failuresList(stdout io.Writer) error {
	for _, n := range failures.ProfileNames() {
		p, err := failures.LookupProfile(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-12s %s\n", n, p.Description)
	}
	return nil
}

// showJSON is `fleetsim failures show --json`.
type showJSON struct {
	Profile        string    `json:"profile"`
	Description    string    `json:"description"`
	Source         string    `json:"source"`
	TTF            ttfJSON   `json:"ttf"`
	GPUs           int       `json:"gpus"`
	NodeGPUs       int       `json:"node_gpus"`
	Rows           []rowJSON `json:"rows"`
	PerGPUHour     float64   `json:"per_gpu_hour"`
	PerKNodeDays   float64   `json:"per_1000_node_days"`
	RateConfidence string    `json:"rate_confidence"`
	FailuresPerDay float64   `json:"failures_per_day"`
	MTBFHours      float64   `json:"mtbf_hours"`
	// MeanInRepair is the mean number of failed units out for repair at
	// once (M/G/∞); Spares99 and Spares999 the spares that cover them 99%
	// and 99.9% of the time.
	MeanInRepair float64 `json:"mean_in_repair"`
	Spares99     int     `json:"spares_99"`
	Spares999    int     `json:"spares_999"`
	// Topology (with --topology) sizes the spare pool in hosts of that
	// topology, rack faults taking all their hosts at once.
	Topology    *topologySparesJSON `json:"topology,omitempty"`
	Repair      map[string]string   `json:"repair"`
	Escalation  string              `json:"escalation,omitempty"`
	Notes       []string            `json:"notes"`
	Unconfirmed []string            `json:"unconfirmed"`
}

type topologySparesJSON struct {
	Kind      string  `json:"kind"`
	GPUs      int     `json:"gpus"`
	HostGPUs  int     `json:"host_gpus"`
	MeanHosts float64 `json:"mean_hosts_in_repair"`
	Hosts99   int     `json:"spares_99"`
	Hosts999  int     `json:"spares_999"`
}

type ttfJSON struct {
	Dist  string  `json:"dist"`
	Shape float64 `json:"shape"`
}

type rowJSON struct {
	Category     string         `json:"category"`
	Label        string         `json:"label"`
	Component    string         `json:"component"`
	Scope        string         `json:"scope"`
	Mode         string         `json:"mode"`
	Xid          int            `json:"xid"`
	Action       string         `json:"action"`
	Count        int            `json:"count"`
	PerGPUHour   float64        `json:"per_gpu_hour"`
	PerKNodeDays float64        `json:"per_1000_node_days"`
	Confidence   string         `json:"confidence"`
	Precursor    *precursorJSON `json:"precursor,omitempty"`
	// Repair is the row's own repair-time distribution, when it has one.
	Repair string `json:"repair,omitempty"`
}

type precursorJSON struct {
	Signal            string  `json:"signal"`
	LeadS             float64 `json:"lead_s"`
	DetectProbability float64 `json:"detect_probability"`
}

// Bounds of failures show (issue 33 item 5): --gpus at most 200 times
// scenario.MaxFleetGPUs, and failures.SparesFor's count, which stops at
// 2^20 (a spare pool larger than that is not an answer but the cap).
const (
	maxShowGPUs = 100_000_000
	maxSpares   = 1 << 20
)

func failuresShow(args []string, stdout io.Writer) error {
	const u = "usage: fleetsim failures show PROFILE|SCENARIO.toml [--gpus N] [--json] [--job] [--topology hgx|nvl72]"
	fs := flag.NewFlagSet("failures show", flag.ContinueOnError)
	gpus := fs.Int("gpus", 16384, "GPUs in the fleet or job (Llama 3 trained on 16,384)")
	asJSON := fs.Bool("json", false, "print JSON")
	job := fs.Bool("job", false, "job-level interruptions by job size (8 to 16,384 GPUs and --gpus)")
	topo := fs.String("topology", "", "also size the spare pool for the GPUs laid out as hgx (8-GPU servers, 4 to a rack) or nvl72 (racks of 18 trays of 4): rack faults take many hosts at once")
	pos, err := parseFlags(fs, args, stdout, u+`

Per-category failure rates of a built-in profile (per GPU-hour and per
1,000 node-days of 8 GPUs), the MTBF of a fleet or job of N GPUs, the spares
that cover its repairs, repair times, and the figures CALIBRATION.md flags
as unconfirmed.
`)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s", u)
	}
	if *gpus < 1 {
		return usagef("failures show: --gpus must be >= 1, found %d", *gpus)
	}
	if *gpus > maxShowGPUs {
		return usagef("failures show: --gpus must be at most %d (200 times the largest fleet a scenario may have), found %d", maxShowGPUs, *gpus)
	}
	if *topo != "" && *topo != failures.KindHGX && *topo != failures.KindNVL72 {
		return usagef("failures show: --topology must be %s or %s, found %q", failures.KindHGX, failures.KindNVL72, *topo)
	}
	var p *failures.Profile
	if strings.HasSuffix(pos[0], ".toml") {
		sc, err := scenario.Load(pos[0])
		if err != nil {
			return usageError{err}
		}
		if p, err = sc.Failures.BuildProfile(); err != nil {
			return usageError{err}
		}
	} else if p, err = failures.LookupProfile(pos[0]); err != nil {
		return usageError{err}
	}
	if *job {
		return failuresShowJob(p, *gpus, *asJSON, stdout)
	}
	out := showJSON{Profile: p.Name, Description: p.Description, Source: p.Source,
		TTF: ttfJSON{p.TTF.Kind, p.TTF.Shape}, GPUs: *gpus, NodeGPUs: nodeGPUs,
		PerGPUHour: p.RatePerGPUHour(), RateConfidence: p.RateConfidence,
		Repair: map[string]string{}, Notes: p.Notes, Unconfirmed: []string{}}
	out.PerKNodeDays = failures.PerKNodeDays(out.PerGPUHour, nodeGPUs)
	out.FailuresPerDay = out.PerGPUHour * float64(*gpus) * 24
	if out.PerGPUHour > 0 {
		out.MTBFHours = p.MTBFHours(*gpus)
	}
	out.MeanInRepair = p.MeanInRepair(*gpus)
	out.Spares99, out.Spares999 = failures.SparesFor(out.MeanInRepair, 0.99), failures.SparesFor(out.MeanInRepair, 0.999)
	if out.Spares999 >= maxSpares {
		// failures.SparesFor stops counting there: say so, never print the cap as the answer.
		return usagef("failures show: %d GPUs keep %.3g units in repair on average; spares are counted up to %d: lower --gpus (or the scenario's rate_multiplier)",
			*gpus, out.MeanInRepair, maxSpares)
	}
	if *topo != "" {
		t := failures.HGX((*gpus+7)/8, 4)
		if *topo == failures.KindNVL72 {
			t = failures.NVL72((*gpus + 71) / 72)
		}
		hs := p.HostSparesFor(t, t.GPUs())
		out.Topology = &topologySparesJSON{Kind: t.Kind, GPUs: t.GPUs(), HostGPUs: t.HostGPUs, MeanHosts: hs.MeanHosts, Hosts99: hs.Hosts99, Hosts999: hs.Hosts999}
	}
	for _, r := range p.Rows {
		row := rowJSON{Category: r.Category, Label: r.Label, Component: string(r.Component), Scope: r.Scope.String(),
			Mode: r.Mode.String(), Xid: r.Xid, Action: r.Action.String(), Count: r.Count, PerGPUHour: r.PerGPUHour,
			PerKNodeDays: failures.PerKNodeDays(r.PerGPUHour, nodeGPUs), Confidence: r.Confidence}
		if r.Repair != nil {
			row.Repair = r.Repair.String()
		}
		if r.Precursor.DetectProbability > 0 {
			row.Precursor = &precursorJSON{r.Precursor.Signal, r.Precursor.Lead.Seconds(), r.Precursor.DetectProbability}
		}
		out.Rows = append(out.Rows, row)
	}
	for _, a := range failures.ActionNames() {
		act, _ := failures.ParseAction(a)
		out.Repair[a] = p.Repair[act].String()
	}
	if p.Escalation != nil {
		out.Escalation = p.Escalation.String()
	}
	for _, n := range p.Notes {
		if strings.HasPrefix(n, "U:") {
			out.Unconfirmed = append(out.Unconfirmed, n)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	w := stdout
	fmt.Fprintf(w, "profile   %s — %s\n", p.Name, p.Description)
	if p.Source != "" {
		fmt.Fprintf(w, "source    %s\n", p.Source)
	}
	ttf := p.TTF.Kind
	if p.TTF.Kind == failures.TTFWeibull {
		ttf += fmt.Sprintf(" shape %g", p.TTF.Shape)
	}
	fmt.Fprintf(w, "time to failure %s; rates per GPU-hour and per 1,000 node-days (nodes of %d GPUs)\n\n", ttf, nodeGPUs)
	fmt.Fprintf(w, "%-17s %-16s %-7s %-15s %4s %-12s %6s %12s %10s %s\n",
		"category", "component", "scope", "mode", "xid", "action", "count", "per GPU-h", "per 1k n-d", "mark")
	sc := func(s string) string { // the table's column for the degraded scope
		if s == "nvlink-domain-degraded" {
			return "domain*"
		}
		return s
	}
	for _, r := range out.Rows {
		xid := "-"
		if r.Xid != 0 {
			xid = fmt.Sprint(r.Xid)
		}
		count := "-"
		if r.Count > 0 {
			count = fmt.Sprint(r.Count)
		}
		fmt.Fprintf(w, "%-17s %-16s %-7s %-15s %4s %-12s %6s %12.4e %10.4f %s\n",
			r.Category, r.Component, sc(r.Scope), r.Mode, xid, r.Action, count, r.PerGPUHour, r.PerKNodeDays, r.Confidence)
	}
	total := 0
	for _, r := range p.Rows {
		total += r.Count
	}
	tc := "-"
	if total > 0 {
		tc = fmt.Sprint(total)
	}
	fmt.Fprintf(w, "%-17s %-16s %-7s %-15s %4s %-12s %6s %12.4e %10.4f %s\n\n",
		"total", "", "", "", "", "", tc, out.PerGPUHour, out.PerKNodeDays, p.RateConfidence)
	if out.PerGPUHour > 0 {
		fmt.Fprintf(w, "%d GPUs: %.2f failures/day, MTBF %s\n", *gpus, out.FailuresPerDay, hoursText(out.MTBFHours))
		fmt.Fprintf(w, "spares    %.3g failed units (servers) in repair at once on average (M/G/∞: Poisson); spares to cover them 99%% of the time: %d, 99.9%%: %d\n",
			out.MeanInRepair, out.Spares99, out.Spares999)
		if t := out.Topology; t != nil {
			fmt.Fprintf(w, "spares    as %s (%d GPUs, hosts of %d): %.3g hosts in repair on average; spares to cover them 99%% of the time: %d hosts (%d GPUs), 99.9%%: %d hosts (%d GPUs) (rack faults take every host of the rack at once)\n",
				t.Kind, t.GPUs, t.HostGPUs, t.MeanHosts, t.Hosts99, t.Hosts99*t.HostGPUs, t.Hosts999, t.Hosts999*t.HostGPUs)
		}
	} else {
		fmt.Fprintf(w, "%d GPUs: no failures\n", *gpus)
	}
	for _, r := range out.Rows {
		if r.Scope == "nvlink-domain-degraded" {
			fmt.Fprintf(w, "degraded  %-10s domain* = nvlink-domain-degraded: the NVLink domain runs on less bandwidth, nothing is down\n", r.Category)
		}
		if r.Repair != "" {
			fmt.Fprintf(w, "repair    %-10s %s (its own repair path)\n", r.Category, r.Repair)
		}
	}
	for _, r := range out.Rows {
		if r.Precursor != nil {
			fmt.Fprintf(w, "precursor %-10s %s, %s ahead, seen with probability %.2f\n",
				r.Category, r.Precursor.Signal, hoursText(r.Precursor.LeadS/3600), r.Precursor.DetectProbability)
		}
	}
	fmt.Fprintf(w, "repair    ")
	for i, a := range failures.ActionNames() {
		if i > 0 {
			fmt.Fprintf(w, "; ")
		}
		fmt.Fprintf(w, "%s %s", a, out.Repair[a])
	}
	fmt.Fprintln(w)
	if p.Escalation != nil {
		fmt.Fprintf(w, "escalation %s\n", p.Escalation)
	}
	if len(p.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes (P primary, S secondary, C computed, U unconfirmed — CALIBRATION.md):")
		for _, n := range p.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if len(out.Unconfirmed) > 0 {
		fmt.Fprintf(w, "UNCONFIRMED: %d figure(s) above are marked U; do not calibrate on them without a second source\n", len(out.Unconfirmed))
	}
	return nil
}

func hoursText(h float64) string {
	switch {
	case h >= 48:
		return fmt.Sprintf("%.2f h (%.1f days)", h, h/24)
	case h >= 1:
		return fmt.Sprintf("%.2f h", h)
	}
	return fmt.Sprintf("%.1f min", h*60)
}

// replayJSON is `fleetsim failures replay --json`.
type replayJSON struct {
	File        string                  `json:"file"`
	Faults      int                     `json:"faults"`
	Nodes       int                     `json:"nodes"`
	Servers     int                     `json:"servers"`
	GPUs        int                     `json:"gpus"`
	SpanDays    float64                 `json:"span_days"`
	RepairDays  failures.Quantiles      `json:"repair_days"`
	AnyDown     float64                 `json:"any_server_down"`
	MeanDown    float64                 `json:"mean_servers_down"`
	Down        []failures.DownFraction `json:"gpus_down"`
	ByClass     []failures.Count        `json:"by_class"`
	ByComponent []failures.Count        `json:"by_component"`
	ByMode      []failures.Count        `json:"by_mode"`
	ByXid       []failures.Count        `json:"by_xid"`
}

func failuresReplay(args []string, stdout io.Writer) error {
	const u = "usage: fleetsim failures replay FILE [--servers N] [--json]"
	fs := flag.NewFlagSet("failures replay", flag.ContinueOnError)
	servers := fs.Int("servers", 400, "servers to replay the log on (InfiniteHBD: 400)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args, stdout, u+`

Statistics of an InfiniteHBD-format fault log replayed on N servers: faults
by class, component, mode and Xid, repair times, and the share of time with
at least one server (or a share of the GPUs) down.
`)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s", u)
	}
	if *servers < 1 || *servers > 1<<24 {
		return usagef("failures replay: --servers must be between 1 and %d, found %d", 1<<24, *servers)
	}
	fr, err := workloads.OpenFaultLog(pos[0])
	if err != nil {
		return usageError{err}
	}
	defer fr.Close()
	topo := failures.HGX(*servers, 4)
	rp, err := failures.NewReplay(fr, topo)
	if err != nil {
		return usageError{err}
	}
	tally := failures.NewTally(topo.GPUs())
	var end sim.Time
	for {
		ev, ok := rp.Next()
		if !ok {
			break
		}
		tally.Add(ev)
		end = max(end, ev.End())
	}
	if err := rp.Err(); err != nil {
		return usageError{err}
	}
	r := tally.Report(max(end, 1), nil)
	days := func(h float64) float64 { return h / 24 }
	q := r.RepairHours
	out := replayJSON{File: pos[0], Faults: r.Incidents, Nodes: rp.Nodes(), Servers: *servers, GPUs: topo.GPUs(),
		SpanDays:   end.Seconds() / 86400,
		RepairDays: failures.Quantiles{Mean: days(q.Mean), P50: days(q.P50), P90: days(q.P90), P99: days(q.P99), Max: days(q.Max)},
		AnyDown:    r.AnyDown, MeanDown: r.MeanGPUsDown / float64(topo.HostGPUs), Down: r.Down,
		ByClass: r.ByCategory, ByComponent: r.ByComponent, ByMode: r.ByMode, ByXid: r.ByXid}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	w := stdout
	fmt.Fprintf(w, "fault log  %s (InfiniteHBD JSON)\n", pos[0])
	fmt.Fprintf(w, "faults     %d on %d nodes, replayed on %d servers (%d GPUs) over %.1f days\n",
		out.Faults, out.Nodes, out.Servers, out.GPUs, out.SpanDays)
	rd := out.RepairDays
	fmt.Fprintf(w, "repair     mean %.2f d, p50 %.2f d, p90 %.2f d, p99 %.2f d, max %.2f d\n", rd.Mean, rd.P50, rd.P90, rd.P99, rd.Max)
	fmt.Fprintf(w, "down       ≥1 server %.1f%% of the time; %.2f servers down on average\n", 100*out.AnyDown, out.MeanDown)
	for _, d := range out.Down {
		fmt.Fprintf(w, "           ≥%g%% of GPUs (%d) %.1f%% of the time\n", 100*d.Threshold, d.GPUs, 100*d.TimeFraction)
	}
	table := func(title string, cs []failures.Count) {
		fmt.Fprintf(w, "\n%-44s %6s\n", title, "faults")
		for _, c := range cs {
			fmt.Fprintf(w, "%-44s %6d\n", c.Name, c.Incidents)
		}
	}
	table("class (Level/Class)", out.ByClass)
	table("component (taxonomy)", out.ByComponent)
	table("mode", out.ByMode)
	table("xid", out.ByXid)
	return nil
}

// jobSizes are the job sizes `failures show --job` evaluates.
var jobSizes = []int{8, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}

// jobJSON is `fleetsim failures show --job --json`.
type jobJSON struct {
	Profile    string               `json:"profile"`
	JobProfile string               `json:"job_profile"`
	Sizes      []jobSizeJSON        `json:"sizes"`
	Published  []failures.JobFigure `json:"published"`
	// Supported is the range of job sizes the view is supported for (nil
	// when the profile has no job-level figure).
	Supported *failures.JobRange `json:"supported,omitempty"`
	Notes     []string           `json:"notes"`
}

type jobSizeJSON struct {
	GPUs              int                `json:"gpus"`
	MTTFHours         float64            `json:"mttf_hours"`
	HardwareMTTFHours float64            `json:"hardware_mttf_hours"`
	Shares            map[string]float64 `json:"shares"`
	// Outside: the size is outside the supported range (or the profile
	// has none).
	Outside bool `json:"outside_supported_range,omitempty"`
}

// failuresShowJob prints a training job's mean time to interruption by
// job size: the job-level profile (failures.JobProfile) with every cause,
// and its hardware rows alone (the node-only projection), beside the
// published measurements.
func failuresShowJob(p *failures.Profile, gpus int, asJSON bool, stdout io.Writer) error {
	jp := failures.JobProfile(p)
	sizes := slices.Clone(jobSizes)
	if !slices.Contains(sizes, gpus) {
		sizes = append(sizes, gpus)
		slices.Sort(sizes)
	}
	pub := failures.PublishedJobFigures(jp.Name)
	for _, f := range pub { // every published size has its row
		if !slices.Contains(sizes, f.GPUs) {
			sizes = append(sizes, f.GPUs)
		}
	}
	slices.Sort(sizes)
	rows := failures.JobMTTFs(jp, sizes)
	rng, ranged := failures.SupportedJobRange(jp.Name)
	out := jobJSON{Profile: p.Name, JobProfile: jp.Name, Published: pub, Notes: jp.Notes}
	if ranged {
		out.Supported = &rng
	}
	var causes []failures.Cause
	seen := map[failures.Cause]bool{}
	for i := range jp.Rows {
		if c := failures.RowCause(&jp.Rows[i]); !seen[c] {
			seen[c] = true
			causes = append(causes, c)
		}
	}
	slices.SortFunc(causes, func(a, b failures.Cause) int { return strings.Compare(string(a), string(b)) })
	for _, r := range rows {
		sh := map[string]float64{}
		for c, x := range r.Shares {
			sh[string(c)] = x
		}
		out.Sizes = append(out.Sizes, jobSizeJSON{r.GPUs, r.MTTFHours, r.HardwareMTTFHours, sh, !ranged || !rng.Contains(r.GPUs)})
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	w := stdout
	fmt.Fprintf(w, "profile   %s; job-level profile %s — %s\n", p.Name, jp.Name, jp.Description)
	fmt.Fprintf(w, "a job of N GPUs is interrupted N times as often as one GPU (rates per GPU-hour), up to a row's job cap\n")
	if ranged {
		fmt.Fprintf(w, "supported %d to %d GPUs: %s\n", rng.MinGPUs, rng.MaxGPUs, rng.Basis)
		if !rng.Contains(gpus) {
			fmt.Fprintf(w, "warning   %d GPUs is outside the supported range: the figures for it extrapolate\n", gpus)
		}
	} else {
		fmt.Fprintf(w, "warning   no job-level figure is behind this profile: its job MTTFs are its rates per GPU, unchecked at any size\n")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%7s  %22s %22s  %s\n", "GPUs", "job MTTF (all)", "hardware only", "published")
	for _, r := range rows {
		published := ""
		for _, f := range pub {
			if f.GPUs == r.GPUs {
				published = fmt.Sprintf("%s [%s] %s", hoursText(f.MTTFHours), f.Confidence, f.Source)
			}
		}
		mark := " "
		if ranged && !rng.Contains(r.GPUs) {
			mark = "!"
		}
		fmt.Fprintf(w, "%7d%s %22s %22s  %s\n", r.GPUs, mark, hoursText(r.MTTFHours), hoursText(r.HardwareMTTFHours), strings.TrimSpace(published))
	}
	if ranged && (!rng.Contains(sizes[0]) || !rng.Contains(sizes[len(sizes)-1])) {
		fmt.Fprintf(w, "(! outside the supported range: extrapolated)\n")
	}
	fmt.Fprintf(w, "\ncauses at %d GPUs: ", rows[0].GPUs)
	for i, c := range causes {
		if i > 0 {
			fmt.Fprintf(w, "; ")
		}
		fmt.Fprintf(w, "%s %.1f%%", c, 100*rows[0].Shares[c])
	}
	fmt.Fprintln(w)
	if len(jp.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes (P primary, S secondary, C computed, U unconfirmed — CALIBRATION.md):")
		for _, n := range jp.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	return nil
}
