// interloper/cli.hpp — the `interloper` command line, for YAML pipelines or compiled DAGs.
//
// The `interloper` tool runs assets declared in a pipeline file:
//
//   interloper materialize pipeline.yaml --partition 2026-11-03
//   interloper backfill pipeline.yaml --window 2026-11-01..2026-11-30 --concurrency 4
//   interloper status pipeline.yaml --window 2026-11-01..2026-11-30
//
// A program that defines its assets in C++ gets the same commands over its own DAG with one
// call; the PIPELINE argument disappears and the materialization store is chosen by flag:
//
//   int main(int argc, char** argv) {
//     il::Source shop("shop", il::open_destination("sqlite:warehouse.db"));
//     shop.asset("orders", compute_orders).partitioning(il::TimePartitionConfig("date"));
//     return il::cli::main(argc, argv, il::DAG({shop}));
//   }
//
//   ./shop backfill --window 2026-11-01..2026-11-30 --store state.db
//
// Exit codes: 0 success, 1 a run failed, 2 bad input (usage, pipeline file, keys, windows,
// validation). Errors are printed as one line on stderr, `PROGRAM: error: ...`, where PROGRAM is
// `interloper` or the name a program built on il::cli::main was started as.
//
// Signals: both mains first set SIGCHLD back to its default and unblock every signal on the
// calling thread, whatever the parent left them as. A SIGCHLD inherited as ignored would let the
// system reap commands before their exit status is read; a blocked SIGINT or SIGTERM would never
// stop a run.
#pragma once

#include "interloper/dag.hpp"

namespace interloper::cli {

// Runs the commands over `dag` (whose assets carry their destinations). Returns the exit
// code; never throws. `argv[0]` names the program in help output.
int main(int argc, char** argv, const DAG& dag);

// Runs the commands over the pipeline file each command names. Returns the exit code; never
// throws.
int main(int argc, char** argv);

}  // namespace interloper::cli
