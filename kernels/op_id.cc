#include "kernels/op_id.h"

namespace mt {

const char* op_name(OpId op) {
  switch (op) {
    case OpId::kEagerConst:
      return "_EagerConst";
    case OpId::kFill:
      return "Fill";
    case OpId::kIdentity:
      return "Identity";
    case OpId::kCast:
      return "Cast";
    case OpId::kMatMul:
      return "MatMul";
    case OpId::kAddN:
      return "AddN";
    case OpId::kAddV2:
      return "AddV2";
    case OpId::kSub:
      return "Sub";
    case OpId::kMul:
      return "Mul";
    case OpId::kRealDiv:
      return "RealDiv";
    case OpId::kNeg:
      return "Neg";
    case OpId::kAbs:
      return "Abs";
    case OpId::kExp:
      return "Exp";
    case OpId::kRelu:
      return "Relu";
    case OpId::kSum:
      return "Sum";
    case OpId::kMean:
      return "Mean";
    case OpId::kMax:
      return "Max";
  }
  return "Unknown";
}

}  // namespace mt
