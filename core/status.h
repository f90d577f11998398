#pragma once
// Status helpers that absl 20220623 lacks: early-return macros for absl::Status and
// absl::StatusOr. Use them below the public API; the public API converts to mt::Error.
//
//   absl::StatusOr<Shape> s = infer(...);
//   MT_ASSIGN_OR_RETURN(Shape out, infer(...));
//   MT_RETURN_IF_ERROR(validate(...));

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MT_RETURN_IF_ERROR(expr)                                  \
  do {                                                            \
    ::absl::Status mt_status_ = (expr);                           \
    if (__builtin_expect(!mt_status_.ok(), 0)) return mt_status_; \
  } while (0)

#define MT_STATUS_CONCAT_INNER_(a, b) a##b
#define MT_STATUS_CONCAT_(a, b) MT_STATUS_CONCAT_INNER_(a, b)

// Declares or assigns `lhs` from a StatusOr expression, returning its status on error.
#define MT_ASSIGN_OR_RETURN(lhs, expr) \
  MT_ASSIGN_OR_RETURN_IMPL_(MT_STATUS_CONCAT_(mt_statusor_, __LINE__), lhs, expr)

#define MT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)                     \
  auto tmp = (expr);                                                  \
  if (__builtin_expect(!tmp.ok(), 0)) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()
