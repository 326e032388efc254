// Command fleetsim simulates GPU serving fleets. It is the only place that
// exits: every subcommand returns an error and main maps it to an exit
// status (2 for bad input or usage, 1 for failures while running).
//
//	fleetsim run [SCENARIO.toml | BUILTIN] [--out DIR] [--seed N] [--replications N] [--requests] [--shard i/n]
//	fleetsim ab SCENARIO.toml | A.toml B.toml [--replications N] [--shard i/n]
//	fleetsim sweep SCENARIO.toml --param KEY=SPEC... [--shard i/n]
//	fleetsim size SCENARIO.toml --slo ttft_p99=800ms,success=99.9%
//	fleetsim merge PART.json...
//	fleetsim plot DIR
//	fleetsim validate SCENARIO.toml
//	fleetsim scenarios [show NAME]
//	fleetsim trace stats FILE [--format mooncake|azure] [--json]
//	fleetsim failures list | show PROFILE | replay FILE
package main
