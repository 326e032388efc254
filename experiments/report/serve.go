package report

import (
	"github.com/fleetsim/fleetsim/experiments/results"
)

// ModelStats is one served model's requests in a fleet of several models.
type ModelStats struct {
	Model    string        `json:"model"`
	Share    float64       `json:"share"` // of the requests, normalised
	Replicas int           `json:"replicas"`
	Requests RequestCounts `json:"requests"`
	TTFT     Dist          `json:"ttft_ms"`
	TPOT     Dist          `json:"tpot_ms"`
	E2E      Dist          `json:"e2e_ms"`
	// GoodputRPS is requests per second that met the model's SLO;
	// SLOAttainment their share of arrivals (absent without an SLO).
	GoodputRPS    float64  `json:"goodput_requests_per_s"`
	SLOAttainment *float64 `json:"slo_attainment,omitempty"`
	TTFTSLOMs     float64  `json:"ttft_slo_ms,omitempty"`
	TPOTSLOMs     float64  `json:"tpot_slo_ms,omitempty"`
}

func modelStats(r *Result, secs float64) []ModelStats {
	sc, rec := r.Scenario, r.Rec
	if len(rec.PerModel) == 0 {
		return nil
	}
	total := 0.0
	for _, c := range sc.Serve {
		total += c.Share
	}
	var out []ModelStats
	for i, c := range sc.Serve {
		m := rec.PerModel[i]
		n := 0
		for _, g := range sc.Cluster.Groups {
			if g.Model == c.Model {
				n += g.Replicas
			}
		}
		ms := ModelStats{Model: c.Model, Share: results.Round6(c.Share / total), Replicas: n,
			Requests: RequestCounts{Arrived: m.Arrived, Completed: m.Completed, Failed: m.Failed, Shed: m.Shed, InFlight: m.InFlight(), Preempted: m.Preempted},
			TTFT:     dist(m.TTFT), TPOT: dist(m.TPOT), E2E: dist(m.E2E),
			GoodputRPS: results.Round6(Ratio(float64(m.MetSLO), secs)), TTFTSLOMs: m.SLO.TTFTMs, TPOTSLOMs: m.SLO.TPOTMs}
		if m.SLO.Set() {
			ms.SLOAttainment = ptr(results.Round6(Ratio(float64(m.MetSLO), float64(m.Arrived))))
		}
		out = append(out, ms)
	}
	return out
}
