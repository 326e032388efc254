package sim

import "math/rand/v2"

// NewStream returns the random stream named name under master seed master.
// Streams with different names are independent; the same (master, name) pair
// always yields the same sequence. Components take their own named stream so
// that adding a policy never shifts another component's draws (DESIGN.md,
// fixed decision 3: common random numbers across A/B arms).
func NewStream(master uint64, name string) *rand.Rand {
	s1, s2 := StreamSeeds(master, name)
	return rand.New(rand.NewPCG(s1, s2))
}

// StreamSeeds returns the two 64-bit PCG seeds of stream (master, name).
func StreamSeeds(master uint64, name string) (uint64, uint64) {
	// FNV-1a over the name, then splitmix64 to spread master and name bits.
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	a := splitmix64(master ^ splitmix64(h))
	b := splitmix64(a ^ h ^ 0x9e3779b97f4a7c15)
	return a, b
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Streams derives named streams under one master seed and a name prefix:
// Stream(name) is NewStream(master, prefix+name), and Sub(name) the streams
// under prefix+name+"/". Deriving by name, never by draw order, keeps every
// component's numbers independent of the others'.
type Streams struct {
	master uint64
	prefix string
}

// NewStreams returns the streams under master.
func NewStreams(master uint64) Streams { return Streams{master: master} }

// Stream returns the stream name.
func (s Streams) Stream(name string) *rand.Rand { return NewStream(s.master, s.prefix+name) }

// Sub returns the streams under name.
func (s Streams) Sub(name string) Streams {
	return Streams{master: s.master, prefix: s.prefix + name + "/"}
}
