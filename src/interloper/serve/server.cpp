// The only file that includes cpp-httplib: it is heavy to compile.
#include "interloper/serve/server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <iostream>
#include <random>

#include "interloper/error.hpp"
#include "interloper/serve/page.hpp"

namespace interloper::serve {

namespace {

std::string random_token() {
  std::random_device device;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", device());
  return token;
}

}  // namespace

void run_server(Api& api, const ServerOptions& options) {
  httplib::Server server;
  server.Get(R"(/api/.*)", [&api](const httplib::Request& request, httplib::Response& response) {
    const std::string window = request.has_param("window") ? request.get_param_value("window") : "";
    Response answer = api.get(request.path, window);
    response.status = answer.status;
    response.set_content(answer.body, "application/json");
  });
  const std::string token = options.start_backfill ? random_token() : std::string();
  // The pages: one document that routes on its own path.
  std::string html(kPage);
  html.replace(html.find("@TOKEN@"), 7, token);
  auto page = [html](const httplib::Request&, httplib::Response& response) {
    response.set_content(html, "text/html; charset=utf-8");
  };
  if (options.start_backfill) {
    server.Post(
        R"(/api/assets/([^/]+)/backfill)",
        [&api, &options, token](const httplib::Request& request, httplib::Response& response) {
          if (request.get_header_value("X-Interloper-Token") != token) {
            response.status = 403;
            response.set_content(R"({"error":"missing or wrong X-Interloper-Token"})",
                                 "application/json");
            return;
          }
          const std::string text =
              request.has_param("window") ? request.get_param_value("window") : "";
          const Response answer = api.backfill(request.matches[1], text, options.start_backfill);
          response.status = answer.status;
          response.set_content(answer.body, "application/json");
        });
  }
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
