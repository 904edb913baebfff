// Internal: the seam through which fault sweeps reach the SQL destinations' window writes.
#pragma once

#include <functional>

#include "interloper/sqlsession/session.hpp"

namespace interloper::detail {

// Given the session a window writer is about to use, the session it uses instead (a
// FaultySession over it, in a fault sweep). Unset, a writer uses its own session.
using SessionWrap = std::function<sql::SqlSession&(sql::SqlSession&)>;

// Sets (or, with an empty function, clears) the wrap of every window writer opened from now on,
// in any thread. Tests only.
void set_session_wrap(SessionWrap wrap);

// `session`, or what the wrap makes of it.
sql::SqlSession& wrap_session(sql::SqlSession& session);

}  // namespace interloper::detail
