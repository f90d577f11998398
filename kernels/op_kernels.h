#pragma once
// The kernels of each row, one registration function per backend (internal to kernels/).
//
// Note [Registering kernels]
// A backend (kernels/cpu/, kernels/cuda/) declares, in its own namespace,
//
//   template <OpId kOp> absl::Status add_op_kernels(KernelRegistry& registry);
//   MT_OP_TABLE(MT_DECLARE_OP_KERNELS)
//
// and the file of each op family defines the function for its rows, usually once for the
// whole family from its list in op_table.h: unary_kernels.cc defines MT_UNARY_KERNELS(Name)
// as `MT_OP_KERNELS(Name) { return add_unary<OpId::k##Name>(registry); }` and expands
//
//   MT_UNARY_OPS(MT_UNARY_KERNELS)
//
// The backend's register function calls add_op_kernels for every row of the table
// (MT_OP_TABLE(MT_ADD_OP_KERNELS)): a row with no kernels on a backend does not link, and no
// list of families or ops is kept by hand. Adding a unary op therefore takes its row and
// its functors; the registration follows from the row.

#include "absl/status/status.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_id.h"

// Declares the registration function of row `Name` (an explicit specialization).
#define MT_DECLARE_OP_KERNELS(Name, ...) \
  template <>                            \
  absl::Status add_op_kernels<OpId::k##Name>(KernelRegistry & registry);

// Starts the definition of row `Name`'s registration function; `registry` is its argument.
#define MT_OP_KERNELS(Name) \
  template <>               \
  absl::Status add_op_kernels<OpId::k##Name>(KernelRegistry & registry)

// Calls row `Name`'s registration function, returning its error (in a function returning
// absl::Status, with `registry` in scope).
#define MT_ADD_OP_KERNELS(Name, ...) MT_RETURN_IF_ERROR(add_op_kernels<OpId::k##Name>(registry));
