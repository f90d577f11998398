#pragma once
// OpId: every op the runtime knows, with the TensorFlow name it carries in placement logs
// and error messages ("MatMul", "AddN", "_EagerConst").

#include <cstdint>
#include <string_view>

namespace mt {

enum class OpId : uint8_t {
  kEagerConst,  // _EagerConst: materialises a host constant on its device
  kFill,        // Fill: zeros, ones, fill
  kIdentity,    // Identity: an explicit copy to the op's device
  kCast,        // Cast: CPU kernel only
  kMatMul,
  kAddN,
  kAddV2,
  kSub,
  kMul,
  kRealDiv,
  kNeg,
  kAbs,
  kExp,
  kRelu,
  kSum,
  kMean,
  kMax,
};
inline constexpr int kNumOps = static_cast<int>(OpId::kMax) + 1;

// Returns the TensorFlow op name, e.g. "MatMul".
const char* op_name(OpId op);

}  // namespace mt
