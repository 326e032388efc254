package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
)

// TestDecodersMatchScan drives a decode clock through random joins,
// decode steps and runs, blocks taken ahead (a mixed step), withdrawals
// and departures, and after each checks its aggregates against the
// sequences brought up to date one by one (checkDecoders: count, context,
// least remaining tokens, last-token groups, and block demand for 1..3·B
// steps against the per-sequence definition). Block sizes 1, 16, 17 and
// one too large for the histogram; paged tails (f < B) and contiguous-like
// regions (f >= B).
func TestDecodersMatchScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, B := range []int64{1, 16, 17, maxFreeHist + 1} {
		for trial := range 60 {
			r := &Replica{blockTokens: B, iter: true, dec: newDecoders(B), state: &ReplicaState{}}
			now := sim.Time(0)
			region := trial%3 == 0
			for op := range 300 {
				switch x := rng.IntN(10); {
				case x < 3 && r.dec.ahead == 0: // a sequence finishes its prefill and starts decoding
					s := &seq{prompt: 10, done: 10, gen: 1, last: now}
					s.req.OutputTokens = int32(rng.IntN(300)) + 2
					s.tailTokens = rng.Int64N(5000)
					s.kvTokens = s.tailTokens + 7
					s.tailBlocks = r.blocksFor(s.tailTokens)
					if region && rng.IntN(2) == 0 {
						s.tailBlocks = r.blocksFor(s.tailTokens + int64(s.req.OutputTokens)) // reserved to the end
					}
					s.inBatch, s.joinNo = true, r.joins
					r.joins++
					s.runIdx = int32(len(r.running))
					r.running = append(r.running, s)
					r.startDecoding(s)
				case x < 5 && r.dec.n > 0: // a decode run
					k := min(r.dec.minRem(), 1+rng.Int64N(3*B))
					if k > 0 {
						now += sim.Time(k) * sim.Millisecond
						r.dec.advance(k, now)
					}
				case x < 6 && r.dec.n > 0 && r.dec.ahead == 0: // a mixed step: blocks taken now
					r.dec.ahead = 1
				case x < 7 && r.dec.ahead == 1:
					now += sim.Millisecond
					r.dec.advance(1, now)
				case x < 8 && r.nRunning() > 0: // withdrawn
					s := r.liveAt(rng.IntN(r.nRunning()))
					if !s.cancelled {
						r.sync(s)
						s.cancelled = true
						r.cancelRun++
						r.dec.cancelled++
					}
				case r.nRunning() > 0: // leaves (finished, dropped or preempted)
					r.unrun(r.liveAt(rng.IntN(r.nRunning())))
				}
				if err := r.checkDecoders(); err != nil {
					t.Fatalf("B=%d trial %d op %d: %v", B, trial, op, err)
				}
			}
		}
	}
}

// TestFirstBoundaryMatchesBisection checks firstBoundary's closed-form
// guess against the definition (the smallest k in [1, runSteps] whose
// boundary is at or after now, else runSteps) on random runs, slow-downs
// and times, including times at boundaries and past the run's end.
func TestFirstBoundaryMatchesBisection(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 20000 {
		st := stepState{runStart: sim.Time(rng.Int64N(1e12)), runSteps: 1 + rng.Int64N(5000), runSlow: 1}
		if rng.IntN(4) == 0 {
			st.runSlow = 1 + 3*rng.Float64()
		}
		a, b := 1e-4+0.05*rng.Float64(), 0.0
		if rng.IntN(3) > 0 {
			b = 1e-8 * rng.Float64() * float64(rng.IntN(1000))
		}
		st.run = hw.LinearRun(a, b)
		end := st.runStart + st.runNs(st.runSteps)
		now := st.runStart + sim.Time(rng.Int64N(int64(end-st.runStart)+2))
		if rng.IntN(3) == 0 { // exactly at a boundary, or a nanosecond either side
			now = st.runStart + st.runNs(1+rng.Int64N(st.runSteps)) + sim.Time(rng.IntN(3)-1)
		}
		want := st.runSteps
		for k := int64(1); k <= st.runSteps; k++ {
			if st.runStart+st.runNs(k) >= now {
				want = k
				break
			}
		}
		if got, end := st.firstBoundary(now); got != want || end != st.runStart+st.runNs(want) {
			t.Fatalf("trial %d: %+v at %v: firstBoundary %d ending at %v, want %d ending at %v", trial, st, now, got, end, want, st.runStart+st.runNs(want))
		}
	}
}

// seqHeap under random pushes, removals and pops keeps the heap order and
// every member's position, and pops the least key, against a plain list.
func TestSeqHeapMatchesList(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	h := seqHeap{slot: 1}
	var in []*seq
	check := func() {
		t.Helper()
		if h.len() != len(in) {
			t.Fatalf("heap holds %d, list %d", h.len(), len(in))
		}
		for i, e := range h.e {
			if int(e.s.hidx[1]) != i {
				t.Fatalf("position %d recorded as %d", i, e.s.hidx[1])
			}
			if i > 0 && e.key < h.e[(i-1)/4].key {
				t.Fatalf("key %d at %d below its parent's %d", e.key, i, h.e[(i-1)/4].key)
			}
		}
	}
	keyOf := map[*seq]int64{}
	for step := 0; step < 200_000; step++ {
		switch op := rng.IntN(10); {
		case op < 5 || len(in) == 0:
			s := &seq{}
			s.hidx = [2]int32{-1, -1}
			k := int64(rng.IntN(64))
			h.push(s, k)
			in, keyOf[s] = append(in, s), k
		case op < 8:
			j := rng.IntN(len(in))
			s := in[j]
			h.remove(s)
			if s.hidx[1] != -1 {
				t.Fatal("a removed sequence keeps a position")
			}
			in = append(in[:j], in[j+1:]...)
		default:
			least := keyOf[in[0]]
			for _, s := range in {
				least = min(least, keyOf[s])
			}
			if h.minKey() != least {
				t.Fatalf("min key %d, want %d", h.minKey(), least)
			}
			s := h.pop()
			if keyOf[s] != least {
				t.Fatalf("popped key %d, want %d", keyOf[s], least)
			}
			for j := range in {
				if in[j] == s {
					in = append(in[:j], in[j+1:]...)
					break
				}
			}
		}
		if step%97 == 0 {
			check()
		}
	}
	check()
}

// liveAt is the i-th running sequence, skipping holes (without compacting,
// so that the holes stay for the checks).
func (r *Replica) liveAt(i int) *seq {
	for _, s := range r.running {
		if s != nil {
			if i == 0 {
				return s
			}
			i--
		}
	}
	panic("liveAt: no such sequence")
}
