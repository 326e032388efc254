package report

import (
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// The run's one price model: every replica of every pool has a Rate, and
// is paid at it for the time its lifecycle says it was provisioned (in any
// phase but parked: loading, serving, draining, down, a spare, interrupted)
// — the whole run when its capacity is reserved, paid whether used or not.
// The summary's bill (cost, each group's, spot's, the fallback and decode
// pools') and the time series' spend rates (timeseries.csv usd_per_hour
// and its per-group columns, which the plots draw: PriceSamples) are both
// read from it; nothing else prices GPUs.

// Rate is what one replica costs.
type Rate struct {
	// USDPerGPUHour is its GPUs' price per GPU-hour: its group's or the
	// [cost] price for its tier, times spot.price_fraction on spot.
	USDPerGPUHour float64
	GPUs          int
	// Reserved capacity is paid while parked too.
	Reserved bool
	Spot     bool
}

// USDPerHour is the replica's spend rate while paid.
func (r Rate) USDPerHour() float64 { return float64(r.GPUs) * r.USDPerGPUHour }

// paid reports whether a replica at rate r is paid in phase ph.
func (r Rate) paid(ph fleet.Phase) bool { return ph != fleet.PhaseParked || r.Reserved }

// PoolRates is a pool and its replicas' rates.
type PoolRates struct {
	Pool  *fleet.Pool
	Rates []Rate
}

// Billing is the run's pools with their rates: the primary pool, then the
// fallback and the decode pool where there are.
type Billing struct {
	Primary, Fallback, Decode PoolRates
}

// NewBilling prices r's pools from its scenario.
func NewBilling(r *Result) *Billing {
	f, sc := r.Fleet, r.Scenario
	b := &Billing{Primary: PoolRates{f.Pool, primaryRates(r)}}
	if f.Fallback != nil && len(f.Fallback.Replicas) > 0 {
		g := sc.Catalog().GPUs[sc.Fallback.GPU]
		price := g.PricePerGPUHour
		if sc.Cost.Tier == scenario.TierReserved {
			price = g.ReservedPricePerGPUHour
		}
		b.Fallback = poolAt(f.Fallback, Rate{USDPerGPUHour: price, GPUs: sc.Fallback.GPUsPerReplica()})
	}
	if d := f.Disagg; d != nil {
		b.Decode = poolAt(d.Decode, Rate{USDPerGPUHour: decodePrice(sc), GPUs: d.DecodeReplicaTP(), Reserved: sc.Cost.Tier == scenario.TierReserved})
		spot := sc.DecodeSpotRange()
		for j := spot[0]; j < spot[1]; j++ {
			x := &b.Decode.Rates[j]
			x.USDPerGPUHour *= sc.Spot.PriceFraction
			x.Reserved, x.Spot = false, true
		}
	}
	return b
}

// poolAt is pool p with every replica at rate x.
func poolAt(p *fleet.Pool, x Rate) PoolRates {
	rs := make([]Rate, len(p.Replicas))
	for i := range rs {
		rs[i] = x
	}
	return PoolRates{p, rs}
}

// primaryRates are the primary pool's replicas' rates: each at its group's
// price and tier (the [cost] price and tier for a fleet of one kind), spot
// replicas at the spot fraction and never reserved.
func primaryRates(r *Result) []Rate {
	f, sc := r.Fleet, r.Scenario
	rates := make([]Rate, len(f.Replicas))
	for i := range rates {
		x := Rate{USDPerGPUHour: sc.Price(), GPUs: sc.Cluster.GPUsPerReplica(), Reserved: sc.Cost.Tier == scenario.TierReserved}
		if g := f.GroupOf(i); g != nil {
			x = Rate{USDPerGPUHour: sc.GroupPrice(g.GroupConfig), GPUs: g.TP, Reserved: sc.GroupTier(g.GroupConfig) == scenario.TierReserved}
		}
		rates[i] = x
	}
	for _, p := range sc.SpotParts() {
		for i := p.First; i < p.End; i++ {
			rates[i].USDPerGPUHour *= sc.Spot.PriceFraction
			rates[i].Reserved, rates[i].Spot = false, true
		}
	}
	return rates
}

// Bill is what a set of replicas were paid: GPU-hours and USD.
type Bill struct {
	GPUHours, USD float64
}

// Bill is the bill of the pool's replicas [first, end) up to the run's end
// (end of run), and of those of them for which keep returns true (nil:
// all). The paid GPU-time is summed exactly per price, then priced.
func (pr PoolRates) Bill(first, last int, endOfRun sim.Time, keep func(Rate) bool) Bill {
	type class struct {
		price float64
		gpuNs sim.Time
	}
	var cs []class
	for i := first; i < last; i++ {
		x := pr.Rates[i]
		if keep != nil && !keep(x) {
			continue
		}
		paid := endOfRun
		if !x.Reserved {
			paid = pr.Pool.Life.ProvisionedNs(i, endOfRun)
		}
		k := 0
		for k < len(cs) && cs[k].price != x.USDPerGPUHour {
			k++
		}
		if k == len(cs) {
			cs = append(cs, class{price: x.USDPerGPUHour})
		}
		cs[k].gpuNs += paid * sim.Time(x.GPUs)
	}
	var b Bill
	for _, c := range cs {
		h := c.gpuNs.Seconds() / 3600
		b.GPUHours += h
		b.USD += h * c.price
	}
	return b
}

// All is the bill of the whole pool (none without one).
func (pr PoolRates) All(end sim.Time) Bill {
	if pr.Pool == nil {
		return Bill{}
	}
	return pr.Bill(0, len(pr.Rates), end, nil)
}

// PriceSamples fills each of the run's samples' spend rates
// (fleet.Sample.USDPerHour, and ColumnsUSD for the group columns of
// GroupColumns, in their order): every replica paid in its phase at the
// sample's time, at its rate.
func PriceSamples(r *Result) {
	samples := r.Fleet.Samples
	if len(samples) == 0 {
		return
	}
	times := make([]sim.Time, len(samples))
	for k := range samples {
		times[k] = samples[k].Time
	}
	b := NewBilling(r)
	for _, pr := range []PoolRates{b.Primary, b.Fallback, b.Decode} {
		if pr.Pool == nil {
			continue
		}
		for i, x := range pr.Rates {
			pr.Pool.Life.Phases(i, times, func(k int, ph fleet.Phase) {
				if x.paid(ph) {
					samples[k].USDPerHour += x.USDPerHour()
				}
			})
		}
	}
	cols := GroupColumns(r.Scenario)
	if len(cols) == 0 {
		return
	}
	for k := range samples {
		samples[k].ColumnsUSD = make([]float64, len(cols))
	}
	for c, col := range cols {
		for i := col.First; i < col.End; i++ {
			x := b.Primary.Rates[i]
			b.Primary.Pool.Life.Phases(i, times, func(k int, ph fleet.Phase) {
				if x.paid(ph) {
					samples[k].ColumnsUSD[c] += x.USDPerHour()
				}
			})
		}
	}
}
