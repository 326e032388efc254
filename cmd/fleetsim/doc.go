// Command fleetsim simulates GPU serving fleets. It is the only place that
// exits: every subcommand returns an error and main maps it to an exit
// status (2 for bad input or usage, 1 for failures while running).
//
//	fleetsim run [SCENARIO.toml | BUILTIN] [--out DIR] [--seed N] [--quiet] [--requests]
//	fleetsim validate SCENARIO.toml
//	fleetsim scenarios [show NAME]
//	fleetsim trace stats FILE [--format mooncake|azure] [--json]
package main
