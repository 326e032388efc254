package failures

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

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

// HostSpares is the spare pool a topology needs: how many hosts (HGX
// servers or NVL72 compute trays) are out for repair at once.
type HostSpares struct {
	// MeanHosts is the mean number of hosts in repair.
	MeanHosts float64
	// Hosts99 and Hosts999 are the fewest spare hosts that cover the hosts
	// in repair 99% and 99.9% of the time.
	Hosts99, Hosts999 int
}

// maxSpareHosts bounds the distribution HostSparesFor computes.
const maxSpareHosts = 200000

// HostSparesFor sizes the spare pool of gpus GPUs laid out as topo: each
// row's failures take down the hosts of its unit (a GPU or host fault one
// host, a rack fault every host in the rack: 18 trays of an NVL72 rack, 4
// servers of an HGX ToR rack) for its mean repair time. Failures of each
// size are in repair as an M/G/∞ queue, Poisson with mean rate × repair
// time, so the hosts out are a sum of scaled Poisson variables, whose
// distribution is computed exactly by convolution (a rack fault makes the
// tail much heavier than the same mean of single hosts). Restart-app,
// fail-slow and degraded rows take nothing out.
func (p *Profile) HostSparesFor(topo Topology, gpus int) HostSpares {
	mean, pmf := p.hostsOutPMF(topo, gpus, topo.HostGPUs)
	return HostSpares{MeanHosts: mean, Hosts99: hostsQuantile(pmf, 0.99), Hosts999: hostsQuantile(pmf, 0.999)}
}

// HostSparesAt is the fewest spare hosts that cover the hosts in repair
// with probability coverage (in (0, 1)), as HostSparesFor computes them:
// HostSparesAt(t, g, 0.99) is HostSparesFor(t, g).Hosts99.
func (p *Profile) HostSparesAt(topo Topology, gpus int, coverage float64) int {
	_, pmf := p.hostsOutPMF(topo, gpus, topo.HostGPUs)
	return hostsQuantile(pmf, coverage)
}

// UnitSparesAt is HostSparesAt for units of unitGPUs GPUs packed on topo
// (serving replicas of TP·DP GPUs): a failure takes the units its blast
// unit holds (a server fault 8 TP=1 replicas, or one TP=8 replica; a GPU
// fault one), at least one.
func (p *Profile) UnitSparesAt(topo Topology, gpus, unitGPUs int, coverage float64) int {
	_, pmf := p.hostsOutPMF(topo, gpus, max(unitGPUs, 1))
	return hostsQuantile(pmf, coverage)
}

// hostsOutPMF is the mean and the distribution of the number of units of
// unitGPUs GPUs (hosts, for HostSparesFor) in repair.
func (p *Profile) hostsOutPMF(topo Topology, gpus, unitGPUs int) (float64, []float64) {
	means := map[int]float64{} // hosts per failure -> mean failures in repair
	for i := range p.Rows {
		r := &p.Rows[i]
		if r.Mode == ModeFailSlow || r.Mode == ModeNVLinkDegraded || r.Action == ActionRestartApp || r.PerGPUHour == 0 {
			continue
		}
		h := max(1, topo.unitGPUsNominal(r.Scope)/unitGPUs)
		rep := p.RepairOf(r).MeanHours()
		if p.Escalation != nil && r.Repair == nil {
			rep = p.Escalation.MeanHours(r.Action)
		}
		means[h] += r.PerGPUHour * float64(gpus) * rep
	}
	mean := 0.0
	pmf := []float64{1}
	sizes := make([]int, 0, len(means))
	for h := range means {
		sizes = append(sizes, h)
	}
	slices.Sort(sizes) // a fixed order: the same sums bit for bit
	for _, h := range sizes {
		mean += float64(h) * means[h]
		pmf = convolvePoisson(pmf, h, means[h])
	}
	return mean, pmf
}

// hostsQuantile is the smallest k with P(N <= k) >= coverage for N ~ pmf
// (len(pmf) when the computed distribution does not reach it).
func hostsQuantile(pmf []float64, coverage float64) int {
	cum := 0.0
	for k, x := range pmf {
		cum += x
		if cum >= coverage {
			return k
		}
	}
	return len(pmf)
}

// convolvePoisson is the distribution of X + h·N for X ~ pmf and N ~
// Poisson(m), up to maxSpareHosts.
func convolvePoisson(pmf []float64, h int, m float64) []float64 {
	if m <= 0 {
		return pmf
	}
	d := distuv.Poisson{Lambda: m}
	nMax := int(m + 12*math.Sqrt(m) + 12)
	n := min(len(pmf)+h*nMax, maxSpareHosts)
	out := make([]float64, n)
	for j := 0; j <= nMax; j++ {
		pj := d.Prob(float64(j))
		if pj < 1e-300 {
			continue
		}
		for k, x := range pmf {
			if idx := k + h*j; idx < n {
				out[idx] += x * pj
			}
		}
	}
	return out
}
