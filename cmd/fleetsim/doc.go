// Command fleetsim simulates GPU serving fleets. It is the only place that
// exits: every subcommand returns an error and main maps it to an exit
// status (2 for bad input or usage, 1 for failures while running; -h and
// --help print a command's usage and flags and exit 0).
//
//	fleetsim run [SCENARIO.toml | BUILTIN] [--out DIR] [--seed N] [--replications N] [--requests] [--shard i/n] [--json]
//	fleetsim ab SCENARIO.toml | A.toml B.toml [--replications N] [--shard i/n] [--json]
//	fleetsim sweep SCENARIO.toml --param KEY=SPEC... [--shard i/n] [--json]
//	fleetsim size SCENARIO.toml --slo ttft_p99=800ms,success=99.9% [--json]
//	fleetsim merge PART.json... [--json]
//	fleetsim plot DIR
//	fleetsim validate SCENARIO.toml
//	fleetsim scenarios [show NAME]
//	fleetsim trace stats FILE [--format mooncake|azure] [--json]
//	fleetsim failures list | show PROFILE | replay FILE
//	fleetsim calibrate BENCH.csv | RESULT.json...
//	fleetsim version
//
// Stdout carries results only and is byte-identical for the same scenario
// and seed; progress (a bar on a terminal, plain lines otherwise) and notes
// go to stderr.
package main
