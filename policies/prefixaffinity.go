package policies

import (
	"fmt"
	"math"
	"slices"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ fleet.Router = (*PrefixAffinity)(nil)

// maxRingPoints bounds replicas × virtual nodes (a ring point takes 16 bytes,
// so the largest ring is 64 MiB).
const maxRingPoints = 1 << 22

// PrefixAffinity routes requests that share a prompt prefix to the same
// replica, so that the replica's prefix cache can serve them, while bounding
// how far any replica's load may exceed the average: consistent hashing with
// bounded loads (Mirrokni, Thorup and Zadimoghaddam, "Consistent Hashing with
// Bounded Loads", SODA 2018).
//
// The key of a request is the Hash of its Prefix segment number K-1, where K
// is the configured number of prefix segments, or of its last segment if it
// has fewer than K (segment hashes are chained, so this identifies the whole
// prefix up to that segment). A request without a Prefix falls back to
// least-outstanding routing.
//
// The ring holds VirtualNodes points per replica, built once for a fixed
// replica count from a fixed 64-bit mix (splitmix64's finaliser), so it is
// the same in every run and on every machine. Route walks clockwise from the
// key and takes the first replica that is Available and not full. With m the
// sum of Outstanding over the available replicas and a their count, the
// capacity is
//
//	capacity = ceil(LoadBound × (m + 1) / a)
//
// and, as in the paper, a replica is full when taking the request would
// exceed it (Outstanding + 1 > capacity). Since LoadBound >= 1 the least
// loaded available replica is never full, so the walk always ends with a
// choice; with equal loads nobody is full and every key stays on its home
// replica. Making one replica unavailable remaps only the keys whose walk
// reached it first.
//
// Route costs one O(n) pass for m and a, an O(log(n·V)) search, and a walk
// that is short unless many replicas are unavailable or full; it does not
// allocate.
type PrefixAffinity struct {
	ring           []ringPoint // sorted by hash; hashes are distinct
	replicas       int
	loadBound      float64
	prefixSegments int
}

// ringPoint is one virtual node: a position on the 64-bit ring and its owner.
type ringPoint struct {
	hash    uint64
	replica int32
}

// NewPrefixAffinity builds a prefix-affinity router for a fleet of replicas
// replicas (>= 1) with virtualNodes ring points per replica (>= 1),
// loadBound the capacity factor (finite, >= 1) and prefixSegments the
// segment whose hash is the key (>= 1). It returns an error for arguments
// out of range or a ring larger than 4,194,304 points.
func NewPrefixAffinity(replicas int, loadBound float64, prefixSegments, virtualNodes int) (*PrefixAffinity, error) {
	switch {
	case replicas < 1:
		return nil, fmt.Errorf("policies: prefix-affinity: replicas must be >= 1, found %d", replicas)
	case !(loadBound >= 1) || math.IsInf(loadBound, 0):
		return nil, fmt.Errorf("policies: prefix-affinity: load_bound must be a finite number >= 1, found %v", loadBound)
	case prefixSegments < 1:
		return nil, fmt.Errorf("policies: prefix-affinity: prefix_segments must be >= 1, found %d", prefixSegments)
	case virtualNodes < 1:
		return nil, fmt.Errorf("policies: prefix-affinity: virtual_nodes must be >= 1, found %d", virtualNodes)
	case replicas > maxRingPoints/virtualNodes:
		return nil, fmt.Errorf("policies: prefix-affinity: %d replicas × %d virtual nodes exceeds the ring limit of %d points",
			replicas, virtualNodes, maxRingPoints)
	}
	ring := make([]ringPoint, 0, replicas*virtualNodes)
	for r := 0; r < replicas; r++ {
		for v := 0; v < virtualNodes; v++ {
			// r and v are both < 2^32 and mix64 is a bijection, so
			// every point has its own hash.
			ring = append(ring, ringPoint{hash: mix64(uint64(r)<<32 | uint64(v)), replica: int32(r)})
		}
	}
	slices.SortFunc(ring, func(a, b ringPoint) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return 0
	})
	return &PrefixAffinity{
		ring:           ring,
		replicas:       replicas,
		loadBound:      loadBound,
		prefixSegments: prefixSegments,
	}, nil
}

// Route implements fleet.Router. It panics if replicas does not have the
// length the ring was built for (the fleet size is fixed for a run).
func (p *PrefixAffinity) Route(req *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	if len(replicas) != p.replicas {
		panic(fmt.Sprintf("policies: prefix-affinity built for %d replicas, routed over %d", p.replicas, len(replicas)))
	}
	key, hasKey := p.key(req)
	if !hasKey {
		return leastOutstanding(replicas)
	}
	var total int64
	avail := 0
	for i := range replicas {
		if replicas[i].Available {
			total += int64(replicas[i].Outstanding)
			avail++
		}
	}
	if avail == 0 {
		return 0, false
	}
	capacity := p.capacity(total, avail)
	start := p.home(key)
	for s := range p.ring {
		j := start + s
		if j >= len(p.ring) {
			j -= len(p.ring)
		}
		r := int(p.ring[j].replica)
		if replicas[r].Available && int64(replicas[r].Outstanding) < capacity {
			return r, true
		}
	}
	// Unreachable while LoadBound >= 1 (the least loaded available replica
	// is never full); kept so that a broken invariant still routes.
	return leastOutstanding(replicas)
}

// key returns the ring position of req's prefix, and false if it has none.
func (p *PrefixAffinity) key(req *workloads.Request) (uint64, bool) {
	if req == nil || len(req.Prefix) == 0 {
		return 0, false
	}
	k := min(p.prefixSegments, len(req.Prefix))
	// Segment hashes may be poorly spread (a synthetic workload may number
	// its prefixes 1, 2, 3, ...); the salted mix spreads them over the ring.
	return mix64(req.Prefix[k-1].Hash ^ keySalt), true
}

// home returns the index of the first ring point at or clockwise after key.
func (p *PrefixAffinity) home(key uint64) int {
	lo, hi := 0, len(p.ring)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if p.ring[mid].hash < key {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(p.ring) {
		return 0
	}
	return lo
}

// capacity returns ceil(loadBound × (total+1) / avail), the most requests a
// replica may hold once it has taken the new one.
func (p *PrefixAffinity) capacity(total int64, avail int) int64 {
	c := math.Ceil(p.loadBound * float64(total+1) / float64(avail))
	if c >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(c)
}

// keySalt decorrelates request keys from the ring's own point inputs.
const keySalt = 0x5851f42d4c957f2d

// mix64 is splitmix64's finaliser (Steele, Lea and Flood, "Fast Splittable
// Pseudorandom Number Generators", 2014): a fixed bijection on 64-bit words
// with good avalanche.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
