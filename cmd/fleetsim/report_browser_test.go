package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/htmlreport"
	"github.com/fleetsim/fleetsim/experiments/plot"
)

// browsers are the names headless Chromium is looked for under.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findBrowser is the path of a Chromium on PATH. Without one the test is
// skipped, except under CI=true, where it fails: CI installs Debian's
// chromium package (.ci/run) so that the report is always checked there.
func findBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range browsers {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no headless browser found (looked for %s on PATH); install Debian's chromium package (apt-get install chromium) to run the browser test of fleetsim report", strings.Join(browsers, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " — required under CI=true")
	}
	t.Skip(msg)
	return ""
}

// TestReportInBrowser: `fleetsim report` on the run, A/B, sweep and size
// directories of five built-ins (and a training run and sweep, a mix
// sizing, and a run of one replication), each loaded from file:// in headless Chromium: no console
// errors or exceptions, no request but the file itself, no script, every
// figure fleetsim plot draws is there and renders with a non-zero size,
// every value cell equals summary.json (as htmlreport.Cell formats it)
// and every value of summary.json is shown, every CSV table equals its
// file cell for cell, and the scenario (--scenario BUILTIN) is its TOML.
//
// Under -short (CI's race run) it is skipped: the full run checks it.
func TestReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test of fleetsim report runs without -short")
	}
	browser := findBrowser(t)
	root := t.TempDir()
	short := []string{"--replications", "2", "--set", "workload.duration_s=60", "--quiet"}
	dirs := []struct {
		name string
		args []string
	}{
		{"run-default", slices.Concat([]string{"run", "default"}, short)},
		{"run-default-1", []string{"run", "default", "--replications", "1", "--set", "workload.duration_s=60", "--quiet"}},
		{"run-cache-affinity", slices.Concat([]string{"run", "cache-affinity"}, short)},
		{"ab-cache-affinity", slices.Concat([]string{"ab", "cache-affinity"}, short)},
		{"ab-tail-at-scale", slices.Concat([]string{"ab", "tail-at-scale"}, short)},
		{"run-warm-spares", slices.Concat([]string{"run", "warm-spares"}, short)},
		{"sweep-warm-spares", slices.Concat([]string{"sweep", "warm-spares"}, short)},
		{"run-n-plus-2", slices.Concat([]string{"run", "n-plus-2"}, short)},
		{"size-n-plus-2", slices.Concat([]string{"size", "n-plus-2"}, short)},
		{"run-llama3-pretrain", []string{"run", "llama3-pretrain", "--replications", "2", "--quiet"}},
		// Beyond the five: a mix sizing (size_mix.csv) and a training sweep (ettr.csv).
		{"size-melange-mix", slices.Concat([]string{"size", "melange-mix"}, short)},
		{"sweep-llama3-pretrain", []string{"sweep", "llama3-pretrain", "--param", "training.spare_servers=4,7", "--replications", "2", "--quiet"}},
	}
	for _, d := range dirs {
		dir := filepath.Join(root, d.name)
		_, stderr, code := fleetsim(t, nil, slices.Concat(d.args, []string{"--out", dir})...)
		require.Zero(t, code, "%s: %s", d.name, stderr)
		stdout, stderr, code := fleetsim(t, nil, "report", dir, "--scenario", d.args[1])
		require.Zero(t, code, "%s: %s", d.name, stderr)
		require.Equal(t, "wrote "+filepath.Join(dir, htmlreport.FileName)+"\n", stdout)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 1024))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	bctx, cancel = context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()
	require.NoError(t, chromedp.Do(bctx), "starting %s", browser)

	// The checks see what they look for: a page with a console error, an
	// exception and a request for a remote image.
	t.Run("checks-see-errors", func(t *testing.T) {
		bad := filepath.Join(root, "bad.html")
		require.NoError(t, os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png">`+
			`<script>console.error("boom"); throw new Error("bang");</script></body></html>`), 0o644))
		got, problems, requests := loadInBrowser(t, bctx, bad)
		require.Equal(t, 1, got.Scripts)
		all := strings.Join(problems, "\n")
		require.Contains(t, all, "console.error")
		require.Contains(t, all, "boom")
		require.Contains(t, all, "exception")
		require.Contains(t, requests, "http://127.0.0.1:9/x.png")
	})
	for _, d := range dirs {
		t.Run(d.name, func(t *testing.T) {
			got := checkReportInBrowser(t, bctx, filepath.Join(root, d.name))
			toml, err := experiments.BuiltinTOML(d.args[1])
			require.NoError(t, err)
			require.Equal(t, string(toml), got.Scenario, "the scenario shown")
		})
	}
}

// cellInfo is a value cell of the report as the browser shows it.
type cellInfo struct {
	Table string `json:"table"`
	Arm   string `json:"arm"`
	Key   string `json:"key"`
	Text  string `json:"text"`
}

type figureInfo struct {
	ID    string  `json:"id"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	BoxW  float64 `json:"boxw"`
	BoxH  float64 `json:"boxh"`
	Shape int     `json:"shapes"`
}

type pageInfo struct {
	Scripts  int          `json:"scripts"`
	Figures  []figureInfo `json:"figures"`
	Cells    []cellInfo   `json:"cells"`
	CSV      []csvInfo    `json:"csv"`
	Scenario string       `json:"scenario"`
}

type csvInfo struct {
	File  string     `json:"file"`
	Index string     `json:"index"`
	Rows  [][]string `json:"rows"`
}

const collectJS = `(() => ({
  scripts: document.querySelectorAll('script').length,
  figures: Array.from(document.querySelectorAll('figure')).map(f => {
    const e = f.querySelector('svg, img'); const r = e ? e.getBoundingClientRect() : {width: 0, height: 0};
    let b = {width: 0, height: 0}; if (e && e.getBBox) { b = e.getBBox(); }
    return {id: f.id, w: r.width, h: r.height, boxw: b.width, boxh: b.height,
            shapes: e ? e.querySelectorAll('path, text, line, polyline, rect, circle').length : 0};
  }),
  cells: Array.from(document.querySelectorAll('td[data-key]')).map(td => ({
    table: td.closest('table').id || td.closest('table').className, arm: td.dataset.arm, key: td.dataset.key, text: td.textContent})),
  csv: Array.from(document.querySelectorAll('table.csv')).map(tb => ({file: tb.dataset.file, index: tb.dataset.rows || '',
    rows: Array.from(tb.querySelectorAll('tbody tr')).map(tr => Array.from(tr.cells).map(c => c.textContent))})),
  scenario: (document.querySelector('#scenario ~ pre') || {textContent: ''}).textContent,
}))()`

// loadInBrowser opens page (a file) in a new tab of the browser and
// returns what collectJS finds there, the console errors and warnings,
// exceptions and failed loads, and the URL of every request made.
func loadInBrowser(t *testing.T, bctx context.Context, page string) (got pageInfo, problems, requests []string) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	abs, err := filepath.Abs(page)
	require.NoError(t, err)
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	var mu sync.Mutex
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, "console."+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, "log "+string(ev.Entry.Level)+": "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *network.EventLoadingFailed:
			problems = append(problems, "loading failed: "+ev.ErrorText)
		}
	}))
	_, err = chromedp.Call(ctx, runtime.Enable, cdp.Empty{})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady("body")))
	got, err = chromedp.Run(ctx, chromedp.Evaluate[pageInfo](collectJS))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	return got, slices.Clone(problems), slices.Clone(requests)
}

// checkReportInBrowser loads DIR/report.html and checks it.
func checkReportInBrowser(t *testing.T, bctx context.Context, dir string) pageInfo {
	page := filepath.Join(dir, htmlreport.FileName)
	got, problems, requests := loadInBrowser(t, bctx, page)
	abs, err := filepath.Abs(page)
	require.NoError(t, err)
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	require.Empty(t, problems, "console errors, exceptions or failed loads")
	require.Equal(t, []string{u}, requests, "requests other than the report itself")
	require.Zero(t, got.Scripts, "the report holds no script")

	// Every figure fleetsim plot draws, rendered.
	names, err := plot.Check(dir)
	require.NoError(t, err)
	var ids []string
	for _, f := range got.Figures {
		ids = append(ids, f.ID)
		require.Positive(t, f.W, "%s: rendered width", f.ID)
		require.Positive(t, f.H, "%s: rendered height", f.ID)
		require.Positive(t, f.BoxW, "%s: drawn width", f.ID)
		require.Positive(t, f.BoxH, "%s: drawn height", f.ID)
		require.Greater(t, f.Shape, 10, "%s: shapes drawn", f.ID)
	}
	var want []string
	for _, n := range names {
		want = append(want, "figure-"+n)
	}
	require.NotEmpty(t, want)
	require.Equal(t, want, ids)

	// Every value cell equals summary.json; every value of summary.json is shown.
	sums := map[string]map[string]any{}
	leaves := map[string]int{}
	for _, arm := range summaryArms(t, dir) {
		path := filepath.Join(dir, "summary.json")
		if arm != "" {
			path = filepath.Join(dir, "arms", arm, "summary.json")
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		var m map[string]any
		require.NoError(t, dec.Decode(&m))
		sums[arm] = m
		leaves[arm] = countLeaves(m) - countLeaves(m["ci95"])
	}
	shown := map[string]int{}
	results := 0
	for _, c := range got.Cells {
		m, ok := sums[c.Arm]
		require.True(t, ok, "cell of arm %q, which has no summary.json", c.Arm)
		switch c.Table {
		case "summary":
			shown[c.Arm]++
			require.Equal(t, lookup(t, m, c.Key), c.Text, "summary.json %q %s", c.Arm, c.Key)
		case "results-table":
			results++
			v := lookup(t, m, c.Key)
			ci := ""
			if cim, ok := m["ci95"].(map[string]any); ok {
				ci = lookupOpt(cim, c.Key)
			}
			require.Equal(t, htmlreport.Cell(v, ci), c.Text, "results %q %s", c.Arm, c.Key)
		case "provenance-table":
			if c.Key == "replications.seeds" {
				var seeds []string
				for _, s := range lookupAny(m, "replications.seeds").([]any) {
					seeds = append(seeds, s.(json.Number).String())
				}
				require.Equal(t, strings.Join(seeds, ", "), c.Text)
				continue
			}
			require.Equal(t, lookup(t, m, c.Key), c.Text, "provenance %q %s", c.Arm, c.Key)
		default:
			t.Fatalf("a value cell in table %q", c.Table)
		}
	}
	require.Equal(t, leaves, shown, "values of summary.json shown per arm")
	require.Positive(t, results, "results table cells")

	// Every CSV table equals its file.
	for _, c := range got.CSV {
		f, err := os.Open(filepath.Join(dir, c.File))
		require.NoError(t, err)
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		require.NoError(t, err)
		want := recs[1:]
		if c.Index != "" { // some of the file's rows: ab.csv's headline metrics
			want = nil
			for _, i := range strings.Split(c.Index, ",") {
				n, err := strconv.Atoi(i)
				require.NoError(t, err)
				want = append(want, recs[1+n])
			}
		}
		require.Equal(t, want, c.Rows, c.File)
	}
	for _, name := range []string{"ab.csv", "sweep.csv", "size.csv", "size_search.csv", "size_mix.csv", "ettr.csv"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			require.True(t, slices.ContainsFunc(got.CSV, func(c csvInfo) bool { return c.File == name }), "%s shown", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ab.csv")); err == nil {
		require.True(t, slices.ContainsFunc(got.CSV, func(c csvInfo) bool { return c.File == "ab.csv" && c.Index != "" && len(c.Rows) > 0 }),
			"ab.csv's headline rows shown")
	}
	return got
}

// summaryArms are the arms with a summary.json: "" for DIR/summary.json,
// else arms/NAME.
func summaryArms(t *testing.T, dir string) []string {
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		return []string{""}
	}
	ents, err := os.ReadDir(filepath.Join(dir, "arms"))
	require.NoError(t, err)
	var arms []string
	for _, e := range ents {
		arms = append(arms, e.Name())
	}
	return arms
}

func countLeaves(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for _, c := range x {
			n += countLeaves(c)
		}
		return n
	case []any:
		n := 0
		for _, c := range x {
			n += countLeaves(c)
		}
		return n
	case nil:
		return 0
	}
	return 1
}

var indexed = regexp.MustCompile(`^(.*)\[(\d+)\]$`)

// lookupAny walks a dotted key (with [i] for array elements) into m.
func lookupAny(m map[string]any, key string) any {
	var v any = m
	for _, part := range strings.Split(key, ".") {
		var idx []int
		for {
			g := indexed.FindStringSubmatch(part)
			if g == nil {
				break
			}
			i, _ := strconv.Atoi(g[2])
			idx = append([]int{i}, idx...)
			part = g[1]
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[part]
		for _, i := range idx {
			arr, ok := v.([]any)
			if !ok || i >= len(arr) {
				return nil
			}
			v = arr[i]
		}
	}
	return v
}

// lookupOpt is the leaf at key as summary.json writes it, "" if absent.
func lookupOpt(m map[string]any, key string) string {
	switch x := lookupAny(m, key).(type) {
	case json.Number:
		return x.String()
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

func lookup(t *testing.T, m map[string]any, key string) string {
	t.Helper()
	v := lookupOpt(m, key)
	require.NotEmpty(t, v, "summary.json has no %s", key)
	return v
}
