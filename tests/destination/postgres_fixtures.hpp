// What the PostgreSQL destination tests share: reading a value straight from the server.
#pragma once

#include <string>

#include "interloper/postgres/postgres.hpp"

namespace interloper::testing {

// The first value of `sql` run on `pool`, as text ("" when there is no row or it is null),
// bypassing any destination.
inline std::string first_value(postgres::Pool& pool, const std::string& sql) {
  auto conn = pool.acquire();
  postgres::Result result = conn->exec(sql);
  if (result.rows() == 0 || result.is_null(0, 0)) return "";
  return std::string(result.value(0, 0));
}

}  // namespace interloper::testing
