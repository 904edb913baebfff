#pragma once

// The HTTP server of `interloper serve` (cpp-httplib stays inside server.cpp).

#include <string>

#include "interloper/serve/api.hpp"

namespace interloper::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8321;
};

// Serves `api` under /api/ until the process is stopped. Prints "serving http://HOST:PORT/"
// on stdout once listening. Throws il::Error when the address cannot be bound.
void run_server(Api& api, const ServerOptions& options);

}  // namespace interloper::serve
