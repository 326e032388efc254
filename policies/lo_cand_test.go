package policies

import (
	"math"
	"testing"

	"github.com/fleetsim/fleetsim/models"
)

func loOld(replicas []models.ReplicaState) (int, bool) {
	least := math.MaxInt
	for i := range replicas {
		if r := &replicas[i]; r.Available {
			least = min(least, r.Outstanding)
		}
	}
	for i := range replicas {
		if r := &replicas[i]; r.Available && r.Outstanding == least {
			return i, true
		}
	}
	return 0, false
}

func loKey1(rs []models.ReplicaState) (int, bool) {
	const none = math.MaxUint64
	best := uint64(none)
	var bits uint64
	for i := range rs {
		r := &rs[i]
		o := uint64(r.Outstanding)
		bits |= o
		k := o<<32 | uint64(i)
		if !r.Available {
			k = none
		}
		best = min(best, k)
	}
	if bits>>31 != 0 || len(rs) > 1<<32-1 {
		return loOld(rs)
	}
	if best == none {
		return 0, false
	}
	return int(uint32(best)), true
}

func loKey2(rs []models.ReplicaState) (int, bool) {
	const none = math.MaxUint64
	b0, b1 := uint64(none), uint64(none)
	var bits uint64
	i := 0
	for ; i+1 < len(rs); i += 2 {
		r0, r1 := &rs[i], &rs[i+1]
		o0, o1 := uint64(r0.Outstanding), uint64(r1.Outstanding)
		bits |= o0 | o1
		k0 := o0<<32 | uint64(i)
		k1 := o1<<32 | uint64(i+1)
		if !r0.Available {
			k0 = none
		}
		if !r1.Available {
			k1 = none
		}
		b0 = min(b0, k0)
		b1 = min(b1, k1)
	}
	if i < len(rs) {
		r := &rs[i]
		o := uint64(r.Outstanding)
		bits |= o
		if r.Available {
			b0 = min(b0, o<<32|uint64(i))
		}
	}
	best := min(b0, b1)
	if bits>>31 != 0 || len(rs) > 1<<32-1 {
		return loOld(rs)
	}
	if best == none {
		return 0, false
	}
	return int(uint32(best)), true
}

func loOldV(replicas []models.ReplicaState) (int, bool) {
	least := math.MaxInt
	for _, r := range replicas {
		if r.Available {
			least = min(least, r.Outstanding)
		}
	}
	for i, r := range replicas {
		if r.Available && r.Outstanding == least {
			return i, true
		}
	}
	return 0, false
}

func loBranch(replicas []models.ReplicaState) (int, bool) {
	least, best := math.MaxInt, -1
	for i, r := range replicas {
		if r.Available && r.Outstanding < least {
			least, best = r.Outstanding, i
		}
	}
	if best < 0 {
		return loOld(replicas)
	}
	return best, true
}

func loKeyV(rs []models.ReplicaState) (int, bool) {
	const none = math.MaxUint64
	best := uint64(none)
	var bits uint64
	for i, r := range rs {
		o := uint64(r.Outstanding)
		bits |= o
		k := o<<32 | uint64(i)
		if !r.Available {
			k = none
		}
		best = min(best, k)
	}
	if bits>>31 != 0 || len(rs) > 1<<32-1 {
		return loOld(rs)
	}
	if best == none {
		return 0, false
	}
	return int(uint32(best)), true
}

func loBranchP(replicas []models.ReplicaState) (int, bool) {
	least, best := math.MaxInt, -1
	rs := replicas
	for i := 0; len(rs) > 0; i++ {
		r := &rs[0]
		if r.Available && r.Outstanding < least {
			least, best = r.Outstanding, i
		}
		rs = rs[1:]
	}
	if best < 0 {
		return 0, false
	}
	return best, true
}

func loOldP(replicas []models.ReplicaState) (int, bool) {
	least := math.MaxInt
	for rs := replicas; len(rs) > 0; rs = rs[1:] {
		if r := &rs[0]; r.Available {
			least = min(least, r.Outstanding)
		}
	}
	for i := range replicas {
		if r := &replicas[i]; r.Available && r.Outstanding == least {
			return i, true
		}
	}
	return 0, false
}

func loU4(replicas []models.ReplicaState) (int, bool) {
	const none = math.MaxInt
	l0, l1 := none, none
	i := 0
	for ; i+3 < len(replicas); i += 4 {
		r := replicas[i : i+4 : i+4]
		a0, a1, a2, a3 := none, none, none, none
		if r[0].Available {
			a0 = r[0].Outstanding
		}
		if r[1].Available {
			a1 = r[1].Outstanding
		}
		if r[2].Available {
			a2 = r[2].Outstanding
		}
		if r[3].Available {
			a3 = r[3].Outstanding
		}
		l0 = min(l0, a0, a2)
		l1 = min(l1, a1, a3)
	}
	least := min(l0, l1)
	for ; i < len(replicas); i++ {
		if r := &replicas[i]; r.Available {
			least = min(least, r.Outstanding)
		}
	}
	for i := range replicas {
		if r := &replicas[i]; r.Available && r.Outstanding == least {
			return i, true
		}
	}
	return 0, false
}

func loyFleet(n int) []models.ReplicaState {
	rng := seeded(7)
	f := fleet(n).states()
	for i := range f {
		f[i].Outstanding = 60 + rng.IntN(40)
	}
	return f
}

func BenchmarkLOCand(b *testing.B) {
	for _, fl := range []struct {
		name string
		f    []models.ReplicaState
	}{{"bench", benchFleet(128)}, {"busy", loyFleet(128)}} {
		for _, c := range []struct {
			name string
			fn   func([]models.ReplicaState) (int, bool)
		}{{"old", loOld}, {"u4", loU4}} {
			b.Run(fl.name+"/"+c.name, func(b *testing.B) {
				s := 0
				for b.Loop() {
					i, _ := c.fn(fl.f)
					s += i
				}
				_ = s
			})
		}
	}
}

func TestLOCand(t *testing.T) {
	rng := seeded(11)
	for trial := range 20_000 {
		f := fleet(rng.IntN(200)).states()
		for i := range f {
			f[i].Available = rng.IntN(4) != 0
			f[i].Outstanding = rng.IntN(4)
		}
		for _, fn := range []func([]models.ReplicaState) (int, bool){loKey1, loKey2, loOldV, loBranch, loKeyV, loOldP, loBranchP, loU4} {
			gi, gok := fn(f)
			wi, wok := loOld(f)
			if gi != wi || gok != wok {
				t.Fatalf("trial %d mismatch", trial)
			}
		}
	}
}
