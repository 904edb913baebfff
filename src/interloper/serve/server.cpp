// The only file that includes cpp-httplib: it is heavy to compile.
#include "interloper/serve/server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <iostream>
#include <memory>
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

// Sends `body` as it is. cpp-httplib compresses a body given to set_content by the best
// encoding the client accepts, and a browser accepts brotli, which it runs at its slowest
// quality: 200 ms for the grid of 10^6 partitions, 30 times what answering it costs. A body
// given by a sized content provider is sent uncompressed.
void send(httplib::Response& response, std::shared_ptr<const std::string> body, const char* type) {
  const std::size_t size = body->size();
  response.set_content_provider(
      size, type,
      [body = std::move(body)](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        return sink.write(body->data() + offset, length);
      });
}

void send_json(httplib::Response& response, Response answer) {
  response.status = answer.status;
  send(response, std::make_shared<const std::string>(std::move(answer.body)), "application/json");
}

}  // namespace

void run_server(Api& api, const ServerOptions& options) {
  httplib::Server server;
  // cpp-httplib's default options add SO_REUSEPORT, under which a second server of the same
  // user shares a port already in use instead of failing to bind: keep only SO_REUSEADDR.
  server.set_socket_options([](int socket) {
    const int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.Get(R"(/api/.*)", [&api](const httplib::Request& request, httplib::Response& response) {
    const std::string window = request.has_param("window") ? request.get_param_value("window") : "";
    send_json(response, api.get(request.path, window));
  });
  const std::string token = options.start_backfill ? random_token() : std::string();
  // The pages: one document that routes on its own path.
  auto html = std::make_shared<std::string>(kPage);
  html->replace(html->find("@TOKEN@"), 7, token);
  auto page = [html = std::shared_ptr<const std::string>(html)](const httplib::Request&,
                                                                httplib::Response& response) {
    send(response, html, "text/html; charset=utf-8");
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
          send_json(response, api.backfill(request.matches[1], text, options.start_backfill,
                                           options.max_run_partitions));
        });
  }
  server.Get("/", page);
  server.Get("/lineage", page);
  server.Get("/runs", page);
  server.Get(R"(/assets/[^/]+)", page);
  server.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
    if (response.status == 404) {
      response.set_content(R"({"error":"no such path"})", "application/json");
    } else if (response.status == 400 && request.method == "POST" &&
               !request.has_header("Content-Length") && !request.has_header("Transfer-Encoding")) {
      // The server refuses such a request before any route sees it (`curl -X POST` sends one).
      response.set_content(R"x({"error":"a POST must say its length: )x"
                           R"x(send Content-Length: 0 (curl -X POST -d '')"})x",
                           "application/json");
    }
  });
  if (!server.bind_to_port(options.host, options.port)) {
    throw Error(fmt::format("serve: cannot listen on {}:{}", options.host, options.port));
  }
  std::cout << fmt::format("serving http://{}:{}/", options.host, options.port) << std::endl;
  server.listen_after_bind();
}

}  // namespace interloper::serve
