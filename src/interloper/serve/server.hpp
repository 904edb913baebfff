#pragma once

// The HTTP server of `interloper serve` (cpp-httplib stays inside server.cpp).

#include <functional>
#include <string>

#include "interloper/serve/api.hpp"

namespace interloper::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8321;
  // When set, POST /api/assets/NAME/backfill?window=W runs it with the asset's name and the
  // window (its default window when W is empty), checked against the per-server token that the
  // page carries in <meta name="interloper-token">; a missing or wrong X-Interloper-Token
  // header answers 403. Api::backfill says what else is refused.
  StartBackfill start_backfill;
  // The most partitions one such backfill may cover.
  std::size_t max_run_partitions = kMaxRunPartitions;
};

// Serves `api` under /api/ until the process is stopped. Prints "serving http://HOST:PORT/"
// on stdout once listening. Throws il::Error when the address cannot be bound.
void run_server(Api& api, const ServerOptions& options);

}  // namespace interloper::serve
