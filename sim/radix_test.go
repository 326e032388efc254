package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRadixQueueMatchesSort drives the radix queue directly against a sorted
// reference with times at every scale (ties, nanoseconds, microseconds,
// milliseconds, hours), bursts of ties pushed in key order (more than
// radixCurMax and radixShiftMax, so that large level-0 buckets are sorted
// whole and insertions overflow into side), pushes into cur's range, and
// pushes before last after a peek (as Run does when it stops at until).
func TestRadixQueueMatchesSort(t *testing.T) {
	trials := 200
	if testing.Short() {
		trials = 60
	}
	for seed := range uint64(trials) {
		r := rand.New(rand.NewPCG(seed, 11))
		var q radixQueue
		var ref []slot
		var key uint64
		var now Time // the last popped time: no push goes before it
		ahead := func() Time {
			switch r.IntN(6) {
			case 0:
				return 0
			case 1:
				return Time(r.IntN(64))
			case 2:
				return Time(r.IntN(5000))
			case 3:
				return Time(r.Int64N(int64(2 * Millisecond)))
			case 4:
				return Time(r.Int64N(int64(Second)))
			default:
				return Time(r.Int64N(int64(10 * Hour)))
			}
		}
		push := func(at Time) {
			key++
			s := slot{at: at, key: uint64(r.IntN(4))<<seqBits | key, ev: uint32(key)}
			q.push(s)
			ref = append(ref, s)
		}
		for range 1 + r.IntN(3000) {
			switch op := r.IntN(10); {
			case op < 4 || len(ref) == 0:
				push(now + ahead())
			case op == 4:
				at := now + ahead()
				for range 1 + r.IntN(80) { // ties in key order
					push(at)
				}
			case op == 5:
				// A peek, then a push between the popped time and the
				// minimum (possibly before last).
				top := *q.top()
				push(now + Time(r.Int64N(int64(top.at-now)+1)))
			default:
				i := 0
				for k := range ref {
					if ref[k].less(&ref[i]) {
						i = k
					}
				}
				want := ref[i]
				ref = slices.Delete(ref, i, i+1)
				require.Equal(t, *q.top(), want, "seed %d: top", seed)
				got := q.pop()
				require.Equal(t, want, got, "seed %d: pop", seed)
				now = got.at
			}
			require.Equal(t, len(ref), q.len(), "seed %d", seed)
		}
		slices.SortFunc(ref, func(a, b slot) int {
			if a.less(&b) {
				return -1
			}
			return 1
		})
		for _, want := range ref {
			require.Equal(t, want, q.pop(), "seed %d: drain", seed)
		}
		require.Zero(t, q.len())
	}
}

// TestRadixBucketsStayBounded runs the hold model (10^5 pending,
// exponential increments of mean 1 ms) and checks that the buckets'
// arrays stop growing once warm: each bucket of level 3 (4 ms of digits)
// used to keep an array holding most of the pending slots, so their total
// grew with every new digit for a simulated second (passOn).
func TestRadixBucketsStayBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("7M events")
	}
	r := rand.New(rand.NewPCG(2024, 1))
	var q radixQueue
	var key uint64
	push := func(at Time) {
		key++
		q.push(slot{at: at, key: key})
	}
	const pending = 100_000
	inc := func() Time { return Time(r.ExpFloat64() * float64(Millisecond)) }
	for range pending {
		push(inc())
	}
	capacity := func() (n int) {
		for _, b := range q.buckets {
			n += cap(b)
		}
		return n
	}
	hold := func(events int) {
		for range events {
			push(q.pop().at + inc())
		}
	}
	hold(2_000_000)
	warm := capacity()
	hold(5_000_000)
	require.Less(t, capacity(), warm*5/4, "bucket capacity grew from %d slots", warm)
	require.Less(t, warm, 8*pending, "bucket capacity %d slots for %d pending", warm, pending)
}

// TestAppendSortedEveryWay checks the three ways appendSorted sorts (rank,
// insertion, slices.SortFunc) against a plain sort, with many equal times
// so that keys break the ties.
func TestAppendSortedEveryWay(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for n := 0; n <= radixCurMax+4; n++ {
		for trial := 0; trial < 50; trial++ {
			src := make([]slot, n)
			for i := range src {
				src[i] = slot{at: Time(rng.IntN(4)), key: uint64(i)<<8 | rng.Uint64N(1<<8), ev: uint32(i)}
			}
			rng.Shuffle(n, func(i, j int) { src[i], src[j] = src[j], src[i] })
			want := slices.Clone(src)
			slices.SortFunc(want, func(a, b slot) int {
				if b.less(&a) {
					return -1
				}
				return 1
			})
			got := appendSorted(nil, src)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d trial %d: got %v, want %v", n, trial, got, want)
			}
		}
	}
}
