package workloads

import (
	"fmt"
	"io"
	"runtime/debug"
)

// Prefetch draws src's requests on a goroutine of its own, batches of
// batchLen at a time and up to depth batches ahead of the caller, and
// returns them in the same order with the same errors: the same requests
// from the same draws, so a run is the same with or without it. It lets a
// single run use a second core for its workload (random draws, trace
// parsing) while the engine, still one goroutine, simulates.
//
// src must be used only through the result from now on, and must not read
// anything the simulation changes (every workload of this package is
// open-loop: its requests depend on its own streams and files only).
// Close the result to stop the goroutine (it closes src too, when src is
// an io.Closer). A panic on the drawing goroutine is raised again by the
// call that reaches it.
func Prefetch(src Source, batchLen, depth int) Source {
	batchLen, depth = max(batchLen, 1), max(depth, 1)
	p := &prefetched{src: src, full: make(chan *batch, depth), free: make(chan *batch, depth+1),
		quit: make(chan struct{}), exited: make(chan struct{})}
	for i := 0; i < depth+1; i++ {
		p.free <- &batch{reqs: make([]Request, batchLen)}
	}
	go p.draw()
	return p
}

// batch is one hand-over: n requests, then err (io.EOF at the end of the
// workload) or a recovered panic when the source stopped there.
type batch struct {
	reqs  []Request
	n     int
	err   error
	panic *drawPanic
}

type drawPanic struct {
	value any
	stack []byte
}

type prefetched struct {
	src        Source
	full, free chan *batch
	quit       chan struct{}
	exited     chan struct{}
	cur        *batch // the batch being read, nil before the first
	i          int    // next request in cur
	closed     bool
}

// draw is the drawing goroutine: it fills free batches until the source
// ends or Close asks it to stop.
func (p *prefetched) draw() {
	defer close(p.exited)
	into, _ := p.src.(IntoSource)
	for {
		var b *batch
		select {
		case b = <-p.free:
		case <-p.quit:
			return
		}
		b.n, b.err, b.panic = 0, nil, nil
		p.fill(b, into)
		select {
		case p.full <- b:
		case <-p.quit:
			return
		}
		if b.err != nil || b.panic != nil {
			return
		}
	}
}

func (p *prefetched) fill(b *batch, into IntoSource) {
	defer func() {
		if v := recover(); v != nil {
			b.panic = &drawPanic{value: v, stack: debug.Stack()}
		}
	}()
	for b.n < len(b.reqs) {
		r := &b.reqs[b.n]
		var err error
		if into != nil {
			err = into.NextInto(r)
		} else {
			*r, err = p.src.Next()
		}
		if err != nil {
			b.err = err
			return
		}
		b.n++
	}
}

func (p *prefetched) Next() (Request, error) {
	var r Request
	err := p.NextInto(&r)
	return r, err
}

// NextInto implements IntoSource.
func (p *prefetched) NextInto(r *Request) error {
	b := p.cur
	if b == nil || p.i == b.n {
		if b != nil {
			if b.err != nil {
				return b.err // the source's end (or error) is sticky
			}
			if b.panic != nil {
				panic(fmt.Sprintf("%v (on the workload's drawing goroutine)\n%s", b.panic.value, b.panic.stack))
			}
			p.free <- b
		}
		b = <-p.full
		p.cur, p.i = b, 0
		if b.n == 0 {
			return p.NextInto(r)
		}
	}
	*r = b.reqs[p.i]
	p.i++
	return nil
}

// Close stops the drawing goroutine, waits for it, and closes src if it
// is an io.Closer.
func (p *prefetched) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	close(p.quit)
	<-p.exited
	if c, ok := p.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
