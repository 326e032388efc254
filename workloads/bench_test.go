package workloads

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
)

// BenchmarkSynthetic measures one request of the default synthetic
// workload with shared system prompts (target: well under 1 µs, no
// allocations).
func BenchmarkSynthetic(b *testing.B) {
	c := DefaultConfig()
	c.DurationS, c.MaxRequests = 0, 1<<62
	c.SystemPrompts, c.SystemPromptTokens, c.SystemPromptChoice = 16, 1024, ChoiceZipf
	src := mustNew(b, c, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAgentic measures one turn of the default agentic workload.
func BenchmarkAgentic(b *testing.B) {
	c := DefaultConfigFor(KindAgentic)
	c.DurationS, c.MaxRequests = 0, 1<<62
	src := mustNew(b, c, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMooncakeReader measures one row of a Mooncake trace held in
// memory: 24 hash_ids a row, about the conversation trace's mean.
func BenchmarkMooncakeReader(b *testing.B) {
	var buf bytes.Buffer
	const rows = 10_000
	for i := range rows {
		fmt.Fprintf(&buf, `{"timestamp": %d, "input_length": 12035, "output_length": 343, "hash_ids": [`, i*300)
		for j := range 24 {
			if j > 0 {
				buf.WriteString(", ")
			}
			fmt.Fprintf(&buf, "%d", i*24+j)
		}
		buf.WriteString("]}\n")
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data) / rows))
	b.ReportAllocs()
	r := NewMooncakeReader(bytes.NewReader(data), "bench.jsonl", TraceOptions{})
	for b.Loop() {
		if _, err := r.Next(); err != nil {
			r = NewMooncakeReader(bytes.NewReader(data), "bench.jsonl", TraceOptions{})
		}
	}
}

// BenchmarkDiurnal measures one arrival of the autoscaled day's diurnal
// process (BenchmarkAutoscaledDay1024: 1,030 req/s ± 30% over a day), as
// Diurnal.NextArrival draws it (cosine on every draw above the global
// trough) and as the workload's source does, with segment bounds.
func BenchmarkDiurnal(b *testing.B) {
	d := Diurnal{MeanRatePerS: 1030, Amplitude: 0.3, PeriodS: 86400, PhaseS: 43200}
	for _, p := range []struct {
		name string
		proc ArrivalProcess
	}{{"plain", d}, {"segments", newDiurnalSegs(d)}} {
		b.Run(p.name, func(b *testing.B) {
			rng := newRng(1)
			var t sim.Time
			for b.Loop() {
				if t = p.proc.NextArrival(rng, t); t > 86400*sim.Second {
					t = 0
				}
			}
		})
	}
}
