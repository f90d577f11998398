#include "core/dtype.h"

namespace mt {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
  }
  return "unknown";
}

const char* dtype_type_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
  }
  return "unknown";
}

}  // namespace mt
