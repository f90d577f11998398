#pragma once
// Includes only: every public header of the runtime.
// minitensor: a small eager tensor runtime whose heart is a device placement engine.
// Include this one header to use it.
//
//   #include "runtime/minitensor.h"
//
//   mt::debugging::set_log_device_placement(true);
//   mt::Tensor a = mt::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
//   mt::Tensor b = mt::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
//   mt::Tensor c = mt::matmul(a, b);    // on GPU:0 when there is one, else CPU:0
//   {
//     mt::DeviceScope on_cpu("/CPU:0");
//     mt::Tensor s = mt::add_n({c, c}); // on CPU:0; c is copied there if needed
//   }
//   std::cout << c << "\n";

#include "runtime/autodiff/gradient_tape.h"      // IWYU pragma: export
#include "runtime/config.h"                      // IWYU pragma: export
#include "runtime/debugging.h"                   // IWYU pragma: export
#include "runtime/eager/device_scope.h"          // IWYU pragma: export
#include "runtime/eager/error.h"                 // IWYU pragma: export
#include "runtime/eager/tensor.h"                // IWYU pragma: export
#include "runtime/function/function.h"           // IWYU pragma: export
#include "runtime/ops/array_ops.h"               // IWYU pragma: export
#include "runtime/ops/attention_ops.h"           // IWYU pragma: export
#include "runtime/ops/batch_norm_ops.h"          // IWYU pragma: export
#include "runtime/ops/constant.h"                // IWYU pragma: export
#include "runtime/ops/conv_ops.h"                // IWYU pragma: export
#include "runtime/ops/layer_norm_ops.h"          // IWYU pragma: export
#include "runtime/ops/nn_ops.h"                  // IWYU pragma: export
#include "runtime/ops/ops.h"                     // IWYU pragma: export
#include "runtime/ops/pad_ops.h"                 // IWYU pragma: export
#include "runtime/ops/random_ops.h"              // IWYU pragma: export
#include "runtime/placement_policy.h"            // IWYU pragma: export
#include "runtime/strategy/mirrored_strategy.h"  // IWYU pragma: export
#include "runtime/trace/memory_snapshot.h"       // IWYU pragma: export
#include "runtime/trace/trace.h"                 // IWYU pragma: export
#include "runtime/train/checkpoint.h"            // IWYU pragma: export
#include "runtime/train/checkpoint_manager.h"    // IWYU pragma: export
#include "runtime/train/optimizers.h"            // IWYU pragma: export
#include "runtime/train/variable.h"              // IWYU pragma: export
