package heapx

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestHeapSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	less := func(a, b *int) bool { return *a < *b }
	for n := 0; n < 200; n++ {
		var h []int
		var want []int
		for i := 0; i < n; i++ {
			x := rng.IntN(50)
			Push(&h, x, less)
			want = append(want, x)
		}
		sort.Ints(want)
		for i := 0; i < n; i++ {
			if got := Pop(&h, less); got != want[i] {
				t.Fatalf("n=%d pop %d: got %d want %d", n, i, got, want[i])
			}
		}
		if len(h) != 0 {
			t.Fatalf("n=%d: %d left", n, len(h))
		}
	}
}
