package report

import "github.com/fleetsim/fleetsim/experiments/results"

// TierSummary is one KV tier in summary.json's "kv_tiers" map (with
// [kv_tiers] enabled), by name: host_dram, ssd, store; per-replica tiers
// are summed over the replicas.
type TierSummary struct {
	CapacityBytes float64 `json:"capacity_bytes"`
	// Hits is prefix segments loaded from the tier instead of recomputed;
	// HitTokens their tokens; HitRate those over all prompt tokens (part of
	// prefix_cache.hit_rate, which counts every cached token).
	Hits      int64   `json:"hits"`
	HitTokens int64   `json:"hit_tokens"`
	HitRate   float64 `json:"hit_rate"`
	// BytesRead were loaded into HBM, BytesWritten written through.
	BytesRead    float64 `json:"bytes_read"`
	BytesWritten float64 `json:"bytes_written"`
	// LoadS is the time loads added to steps (or overlapped, layer-wise).
	LoadS     float64 `json:"load_s"`
	Evictions int64   `json:"evictions"`
	// USDPerMonth is its capacity's price for 720 h ([kv_tiers] *_usd_per_gb_month);
	// cost.usd and cost.usd_per_month include it.
	USDPerMonth float64 `json:"usd_per_month"`
}

// summarizeKVTiers adds the tiers' block to s.
func summarizeKVTiers(s *Summary, r *Result) {
	k := r.Fleet.KVTiers
	if k == nil {
		return
	}
	s.KVTiers = map[string]TierSummary{}
	c := r.Scenario.KVTiers
	price := map[string]float64{"host_dram": c.HostUSDPerGBMonth, "ssd": c.SSDUSDPerGBMonth, "store": c.StoreUSDPerGBMonth}
	var usdMonth float64
	for _, t := range k.Stats() {
		m := t.CapacityBytes / 1e9 * price[t.Name]
		usdMonth += m
		s.KVTiers[t.Name] = (TierSummary{CapacityBytes: results.Round6(t.CapacityBytes), Hits: t.Hits,
			HitTokens: t.HitTokens, HitRate: results.Round6(Ratio(float64(t.HitTokens), float64(s.Prefix.PromptTokens))),
			BytesRead: results.Round6(t.BytesRead), BytesWritten: results.Round6(t.BytesWritten), LoadS: results.Round6(float64(t.LoadNs) / 1e9),
			Evictions: t.Evictions, USDPerMonth: results.Round6(m)})
	}
	if usdMonth == 0 {
		return
	}
	co := &s.Cost
	co.USD = results.Round6(co.USD + usdMonth*r.EndTime.Seconds()/3600/HoursPerMonth)
	co.USDPerMonth = results.Round6(co.USDPerMonth + usdMonth)
	co.USDPerMillionOutputRaw = results.Round6(Ratio(co.USD*1e6, float64(r.Rec.OutputTokens)))
	if r.Rec.GoodOutputTokens > 0 {
		co.USDPerMillionOutputTokens = ptr(results.Round6(co.USD * 1e6 / float64(r.Rec.GoodOutputTokens)))
	}
}
