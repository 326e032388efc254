package hw

// testProfile is the profile the step model's physics tests run under: the
// constants of fleetsim's default before the fitted profiles (the start of
// their fits, experiments/calibrate/testdata/start-profile.toml), with none
// of the optional costs. The tests check the model's structure, which must
// hold under any profile; the fitted ones move with each refit.
func testProfile() PerfProfile {
	return PerfProfile{Name: "test", GEMMEfficiencyBF16: 0.75, GEMMEfficiencyFP8: 0.5, GEMMEfficiencyFP4: 0.5,
		GEMMHalfTokens: 1, WeightBandwidthEfficiency: 0.95, AttentionEfficiency: 0.9, AttentionHalfContext: 1,
		KVBandwidthEfficiency: 0.95, NVLinkEfficiency: 0.7, AllReduceLatencyS: 8e-6, TPOverlap: 0,
		StepOverheadS: 1e-6, SeqOverheadS: 6.89779e-06, RuntimeReserveBytes: 2147483648}
}
