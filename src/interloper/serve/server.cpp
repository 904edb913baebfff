// The only file that includes cpp-httplib: it is heavy to compile.
#include "interloper/serve/server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <iostream>

#include "interloper/error.hpp"
#include "interloper/serve/page.hpp"

namespace interloper::serve {

void run_server(Api& api, const ServerOptions& options) {
  httplib::Server server;
  server.Get(R"(/api/.*)", [&api](const httplib::Request& request, httplib::Response& response) {
    const std::string window = request.has_param("window") ? request.get_param_value("window") : "";
    Response answer = api.get(request.path, window);
    response.status = answer.status;
    response.set_content(answer.body, "application/json");
  });
  // The pages: one document that routes on its own path.
  auto page = [](const httplib::Request&, httplib::Response& response) {
    response.set_content(std::string(kPage), "text/html; charset=utf-8");
  };
  server.Get("/", page);
  server.Get("/lineage", page);
  server.Get("/runs", page);
  server.Get(R"(/assets/[^/]+)", page);
  server.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
    if (response.status != 404) return;
    response.set_content(fmt::format("{{\"error\":\"no such path\"}}"), "application/json");
    (void)request;
  });
  if (!server.bind_to_port(options.host, options.port)) {
    throw Error(fmt::format("serve: cannot listen on {}:{}", options.host, options.port));
  }
  std::cout << fmt::format("serving http://{}:{}/", options.host, options.port) << std::endl;
  server.listen_after_bind();
}

}  // namespace interloper::serve
