#include "interloper/destination/session_hook.hpp"

#include <mutex>

namespace interloper::detail {

namespace {

std::mutex& wrap_mutex() {
  static std::mutex mutex;
  return mutex;
}

SessionWrap& current_wrap() {
  static SessionWrap wrap;
  return wrap;
}

}  // namespace

void set_session_wrap(SessionWrap wrap) {
  std::lock_guard lock(wrap_mutex());
  current_wrap() = std::move(wrap);
}

sql::SqlSession& wrap_session(sql::SqlSession& session) {
  std::lock_guard lock(wrap_mutex());
  return current_wrap() ? current_wrap()(session) : session;
}

}  // namespace interloper::detail
