package failures

import "gonum.org/v1/gonum/stat/distuv"

// MeanInRepair is the mean number of failed units (servers, for the
// host-widened repairs that dominate) out for repair at a random moment in
// a fleet of gpus GPUs: each row's failure rate times its action's mean
// repair time, summed (Little's law). Fail-slow rows are left out: a
// straggler is degraded, not out.
//
// Failures arrive as a Poisson process (exactly for exponential times to
// failure, and approximately for Weibull ones, by Palm–Khintchine) and
// repairs overlap freely, so the number out is an M/G/∞ queue's: Poisson
// with this mean, whatever the repair distribution. Two failures of one
// server count twice (rare at these rates).
func (p *Profile) MeanInRepair(gpus int) float64 {
	var m float64
	for _, r := range p.Rows {
		if r.Mode == ModeFailSlow || r.Mode == ModeNVLinkDegraded {
			continue
		}
		h := p.RepairOf(&r).MeanHours()
		if p.Escalation != nil && r.Repair == nil && r.Action != ActionRestartApp {
			h = p.Escalation.MeanHours(r.Action)
		}
		m += r.PerGPUHour * float64(gpus) * h
	}
	return m
}

// SparesFor is the fewest spares k that cover the units out of service
// with probability coverage: the smallest k with P(N <= k) >= coverage for
// N ~ Poisson(meanOut).
func SparesFor(meanOut, coverage float64) int {
	if meanOut <= 0 {
		return 0
	}
	d := distuv.Poisson{Lambda: meanOut}
	k := 0
	for d.CDF(float64(k)) < coverage && k < 1<<20 {
		k++
	}
	return k
}
