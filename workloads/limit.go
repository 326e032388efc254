package workloads

import (
	"io"

	"github.com/fleetsim/fleetsim/sim"
)

// Limit returns a Source that passes on src's requests until maxRequests
// have been passed (0: no limit) or until the first request arriving after
// until (0: no limit), whichever comes first, and then returns io.EOF. It
// does not renumber requests. The result implements io.Closer: Close closes
// src if src is an io.Closer.
func Limit(src Source, maxRequests int64, until sim.Time) Source {
	into, _ := src.(IntoSource)
	return &limited{src: src, into: into, maxRequests: maxRequests, until: until}
}

type limited struct {
	src         Source
	into        IntoSource // src, when it is one
	maxRequests int64
	until       sim.Time
	n           int64
	done        bool
}

func (l *limited) Next() (Request, error) {
	var r Request
	if err := l.NextInto(&r); err != nil {
		return Request{}, err
	}
	return r, nil
}

// NextInto implements IntoSource: Next, written into *r (through src's
// NextInto when it has one).
func (l *limited) NextInto(r *Request) error {
	if l.done || (l.maxRequests > 0 && l.n >= l.maxRequests) {
		return io.EOF
	}
	var err error
	if l.into != nil {
		err = l.into.NextInto(r)
	} else {
		*r, err = l.src.Next()
	}
	if err != nil {
		if err == io.EOF {
			l.done = true
		}
		return err
	}
	if l.until > 0 && r.Arrival > l.until {
		l.done = true
		return io.EOF
	}
	l.n++
	return nil
}

func (l *limited) Close() error {
	if c, ok := l.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
