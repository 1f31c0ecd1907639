// Small status helpers (Debian's Abseil has no ASSIGN_OR_RETURN / RETURN_IF_ERROR).
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define XLAC_CONCAT_INNER(a, b) a##b
#define XLAC_CONCAT(a, b) XLAC_CONCAT_INNER(a, b)

#define XLAC_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::absl::Status _xlac_status = (expr);   \
    if (!_xlac_status.ok()) return _xlac_status; \
  } while (0)

#define XLAC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#define XLAC_ASSIGN_OR_RETURN(lhs, expr) \
  XLAC_ASSIGN_OR_RETURN_IMPL(XLAC_CONCAT(_xlac_statusor_, __LINE__), lhs, expr)
