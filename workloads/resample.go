package workloads

import (
	"io"
	"math"
	"math/rand/v2"
)

// Trace resampling modes (TraceConfig.Resample).
const (
	ResampleNone    = "none"
	ResamplePoisson = "poisson"
)

// PoissonBootstrap returns a Source that replays each request of src k
// times, k drawn from a Poisson distribution of mean 1 with rng,
// independently for each request (0 drops it; duplicates arrive at the
// request's own time, one after the other). It is the streaming form of a
// bootstrap resample (Oza and Russell, "Online Bagging and Boosting", 2001;
// Hanley and MacGibbon, "Creating non-parametric bootstrap samples using
// Poisson frequencies", 2006): the count of each request approaches the
// Binomial(n, 1/n) of a classical resample, without holding the trace in
// memory. Requests keep their arrival times, so the trace's load pattern
// over time stays; what varies between resamples is which requests arrive
// in each moment. Requests are renumbered 1, 2, … in replay order. Its
// cost is one uniform draw per request plus one per copy. The result
// implements io.Closer: Close closes src if src is an io.Closer.
func PoissonBootstrap(src Source, rng *rand.Rand) Source {
	return &poissonBootstrap{src: src, rng: rng}
}

type poissonBootstrap struct {
	src  Source
	rng  *rand.Rand
	cur  Request
	left int    // copies of cur still to pass on
	n    uint64 // requests passed on
}

// expMinus1 is e^−1, the probability that a Poisson(1) draw is 0.
var expMinus1 = math.Exp(-1)

// poisson1 draws from Poisson(1) by Knuth's product of uniforms.
func poisson1(rng *rand.Rand) int {
	k, p := 0, rng.Float64()
	for p > expMinus1 {
		k++
		p *= rng.Float64()
	}
	return k
}

func (b *poissonBootstrap) Next() (Request, error) {
	for b.left == 0 {
		r, err := b.src.Next()
		if err != nil {
			return Request{}, err
		}
		b.cur, b.left = r, poisson1(b.rng)
	}
	b.left--
	b.n++
	r := b.cur
	r.ID = b.n
	return r, nil
}

func (b *poissonBootstrap) Close() error {
	if c, ok := b.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
