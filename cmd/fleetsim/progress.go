package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress goes to stderr, never to stdout: stdout carries results and is
// byte-identical across runs. On a terminal progress is a bar redrawn in
// place; anywhere else (a pipe, a file, a Slurm .err file) it is a plain
// line at most every logEvery and a final line, so that logs hold no
// carriage-return frames.
const (
	barDelay = time.Second     // a bar appears once the command has run this long
	logEvery = 5 * time.Second // the most often a plain progress line is written
)

// progress reports a command's progress on w. Its methods may be called
// from several goroutines, and on a nil *progress (--quiet) do nothing.
type progress struct {
	mu          sync.Mutex
	w           io.Writer
	label       string // "run default", "size n-plus-2"
	tty         bool
	now         func() time.Time
	start       time.Time
	lastLine    time.Time // of the last plain line, or start
	wrote       bool      // a plain line has been written
	bar         *progressbar.ProgressBar
	frac        float64
	done, total int
	of          string // what a batch is, in plain lines ("" for a whole run)
}

// newProgress reports on w: a bar if w is a terminal, plain lines otherwise.
func newProgress(w io.Writer, label string) *progress {
	return newProgressAt(w, label, isTerminal(w), time.Now)
}

// newProgressAt is newProgress with the kind of writer and the clock given.
func newProgressAt(w io.Writer, label string, tty bool, now func() time.Time) *progress {
	t := now()
	return &progress{w: w, label: label, tty: tty, now: now, start: t, lastLine: t}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// hook makes opt report to p.
func (p *progress) hook(opt *experiments.RunOptions) {
	opt.Progress = p.set
	opt.Step = p.step
}

// set records the fraction of the current batch done, 0..1.
func (p *progress) set(frac float64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frac = frac
	p.show()
}

// step records that done of the batch's total replications have finished.
func (p *progress) step(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	p.frac = float64(done) / float64(total)
	p.show()
}

func (p *progress) show() {
	if p.tty {
		if p.bar == nil {
			if p.now().Sub(p.start) < barDelay || p.frac >= 1 {
				return
			}
			p.bar = progressbar.NewOptions(1000, progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(p.label), progressbar.OptionShowElapsedTimeOnFinish(),
				progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
		}
		_ = p.bar.Set(int(p.frac * 1000))
		return
	}
	if p.now().Sub(p.lastLine) < logEvery || p.frac >= 1 {
		return
	}
	s := fmt.Sprintf("%.0f%%", 100*p.frac)
	if p.total > 1 {
		s += fmt.Sprintf(" (%d of %d replications)", p.done, p.total)
	}
	p.line(s + p.of)
}

// line writes one plain line: "fleetsim: LABEL: MSG, N s elapsed".
func (p *progress) line(msg string) {
	p.lastLine = p.now()
	p.wrote = true
	fmt.Fprintf(p.w, "fleetsim: %s: %s, %s elapsed\n", p.label, msg, seconds(p.lastLine.Sub(p.start)))
}

// clearBar removes the bar, if one is shown.
func (p *progress) clearBar() {
	if p.bar != nil {
		_ = p.bar.Finish() // OptionClearOnFinish: the line is blanked
		p.bar = nil
	}
}

// note ends the current batch and writes msg on a line of its own,
// terminal or not: a sizing search's verdict on each size. The next batch
// starts from 0.
func (p *progress) note(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBar()
	p.frac, p.done, p.total = 0, 0, 0
	p.line(msg)
}

// finish ends the report: the bar is cleared, and a plain report that
// wrote any line ends with a final one. Call it once the work succeeded.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBar()
	if !p.tty && p.wrote {
		msg := "done"
		if p.total > 1 && p.of == "" {
			msg = fmt.Sprintf("done, %d replications", p.total)
		}
		fmt.Fprintf(p.w, "fleetsim: %s: %s in %s\n", p.label, msg, seconds(p.now().Sub(p.start)))
	}
}

// stop clears the bar without a final line: the work failed and an error
// follows.
func (p *progress) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBar()
}

// seconds formats a wall-clock duration for progress lines.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.0f s", d.Seconds())
}
