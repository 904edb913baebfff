// Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: the
// browser reads commands on its fd 3 and writes answers and events on its fd 4, each a JSON text
// ended by a NUL byte), so that a test or a bench can load a page, wait for its scripts, click
// in it and read the DOM with nothing but the browser. Used by the serve tests and serve_bench.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace interloper::testing {

inline constexpr const char* kChromium = "/usr/bin/chromium";

class Chromium {
 public:
  // Starts `binary` headless, its profile in `profile_dir`, in a process group of its own, with
  // `flags` added to its command line (--window-size=W,H, say). Throws std::runtime_error when
  // it cannot start or does not answer within `timeout`.
  Chromium(const std::string& binary, const std::string& profile_dir,
           std::chrono::seconds timeout = std::chrono::seconds(60),
           const std::vector<std::string>& flags = {})
      : timeout_(timeout) {
    ::signal(SIGPIPE, SIG_IGN);  // a browser that died is reported by write(), not by a signal
    int commands[2];
    int answers[2];
    if (::pipe2(commands, O_CLOEXEC) != 0 || ::pipe2(answers, O_CLOEXEC) != 0) {
      throw std::runtime_error("chromium: pipe failed");
    }
    std::vector<std::string> args = {binary,
                                     "--headless",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--no-first-run",
                                     "--no-default-browser-check",
                                     "--remote-debugging-pipe",
                                     "--user-data-dir=" + profile_dir,
                                     "about:blank"};
    args.insert(args.end() - 1, flags.begin(), flags.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      // Via descriptors above 4 (without close-on-exec): a pipe end may already sit at 3 or 4.
      const int in = ::fcntl(commands[0], F_DUPFD, 10);
      const int out = ::fcntl(answers[1], F_DUPFD, 10);
      ::dup2(in, 3);
      ::dup2(out, 4);
      const int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 1);
      ::dup2(null, 2);
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(commands[0]);
    ::close(answers[1]);
    to_browser_ = commands[1];
    from_browser_ = answers[0];
    if (pid_ < 0) {
      ::close(to_browser_);
      ::close(from_browser_);
      throw std::runtime_error("chromium: fork failed");
    }
    try {
      const nlohmann::json target = call("Target.createTarget", {{"url", "about:blank"}});
      const nlohmann::json attached =
          call("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}});
      session_ = attached["sessionId"].get<std::string>();
    } catch (...) {
      stop();
      throw;
    }
  }

  ~Chromium() { stop(); }
  Chromium(const Chromium&) = delete;
  Chromium& operator=(const Chromium&) = delete;

  // Navigates the tab to `url` (returns once the navigation started, not when scripts ran).
  void open(const std::string& url) { call("Page.navigate", {{"url", url}}, true); }

  // The value of `expression` in the page (a promise is awaited), as JSON; null when it has no
  // JSON value. Throws std::runtime_error with the message of an exception it throws.
  nlohmann::json evaluate(const std::string& expression) {
    const nlohmann::json r =
        call("Runtime.evaluate",
             {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}}, true);
    if (r.contains("exceptionDetails")) {
      throw std::runtime_error("chromium: " + expression + ": " + r["exceptionDetails"].dump());
    }
    return r["result"].value("value", nlohmann::json());
  }

  // Evaluates `expression` every 50 ms until it is true; false when `timeout` passed first.
  bool wait_for(const std::string& expression, std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (true) {
      try {
        if (evaluate(expression) == true) return true;
      } catch (const std::runtime_error&) {
        // The page is between documents; try again.
      }
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

 private:
  // Asks the browser to close, and kills its process group after 5 s.
  void stop() {
    try {
      send("Browser.close", nlohmann::json::object(), false);
    } catch (const std::exception&) {
      // Killed below.
    }
    ::close(to_browser_);
    ::close(from_browser_);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(-pid_, SIGKILL);  // helpers the browser may leave behind
  }

  int send(const std::string& method, const nlohmann::json& params, bool in_page) {
    nlohmann::json message = {{"id", ++last_id_}, {"method", method}, {"params", params}};
    if (in_page) message["sessionId"] = session_;
    std::string text = message.dump();
    text.push_back('\0');
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t n = ::write(to_browser_, text.data() + at, text.size() - at);
      if (n <= 0) throw std::runtime_error("chromium: the browser stopped reading");
      at += static_cast<std::size_t>(n);
    }
    return last_id_;
  }

  // Sends a command and returns its result, skipping the events that come before it.
  nlohmann::json call(const std::string& method, const nlohmann::json& params,
                      bool in_page = false) {
    const int id = send(method, params, in_page);
    const auto until = std::chrono::steady_clock::now() + timeout_;
    while (true) {
      const auto end = buffer_.find('\0');
      if (end != std::string::npos) {
        const nlohmann::json answer = nlohmann::json::parse(buffer_.substr(0, end));
        buffer_.erase(0, end + 1);
        if (answer.value("id", 0) != id) continue;
        if (answer.contains("error")) {
          throw std::runtime_error("chromium: " + method + ": " + answer["error"].dump());
        }
        return answer["result"];
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      pollfd p{from_browser_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        throw std::runtime_error("chromium: no answer to " + method);
      }
      char chunk[65536];
      const ssize_t n = ::read(from_browser_, chunk, sizeof chunk);
      if (n <= 0) throw std::runtime_error("chromium: the browser exited during " + method);
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  std::chrono::seconds timeout_;
  pid_t pid_ = -1;
  int to_browser_ = -1;
  int from_browser_ = -1;
  int last_id_ = 0;
  std::string session_;
  std::string buffer_;
};

}  // namespace interloper::testing
