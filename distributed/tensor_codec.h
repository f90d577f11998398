#pragma once
// Tensors and op attributes in worker.proto messages (internal), with the checks a task
// makes on what it receives: a known dtype, non-negative dims, and bytes that match.
//
//   proto::TensorValue v;
//   MT_RETURN_IF_ERROR(encode_tensor(*t.impl(), &v));   // reads the tensor's bytes
//   MT_ASSIGN_OR_RETURN(DecodedValue d, decode_value(v, "input 0"));

#include <algorithm>
#include <cstddef>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "distributed/worker.pb.h"
#include "kernels/op_attrs.h"
#include "runtime/eager/tensor_impl.h"

namespace mt::distributed::internal {

// Tensors up to kInlineBytes travel inside an op's message; larger ones in raw pieces of
// at most kChunkBytes on the Bulk service (Note [Tensor bytes on the wire]).
inline constexpr size_t kInlineBytes = size_t{64} << 10;
inline constexpr size_t kChunkBytes = size_t{4} << 20;

// Returns the gRPC message limit for a tensor limit of `max_tensor_bytes`: room for one
// piece of a large tensor even when tensors are limited below it (the limit on tensors is
// then checked by the code that reads them).
inline int grpc_message_limit(int64_t max_tensor_bytes) {
  return static_cast<int>(std::max<int64_t>(max_tensor_bytes, 2 * kChunkBytes));
}

// HTTP/2 flow-control window of every stream: several pieces in flight, so that sending
// a large tensor does not wait for the receiver's window updates piece by piece.
inline constexpr int kStreamWindowBytes = 8 * kChunkBytes;

// Writes `t`'s dtype, dims and bytes (read from its device, remote ones included).
absl::Status encode_tensor(const mt::internal::TensorImpl& t, proto::TensorValue* out);

struct DecodedValue {
  DType dtype;
  Shape shape;
};

// Validates `value`. InvalidArgument, naming `what`: an unknown dtype, a bad dim, or
// "declares shape (2, 2) of float32 (16 bytes) but carries 12 bytes". With `with_bytes`
// false (Fill's source) the value must carry no bytes at all.
absl::StatusOr<DecodedValue> decode_value(const proto::TensorValue& value, const char* what,
                                          bool with_bytes = true);

// Returns InvalidArgument unless `dtype` is a DType.
absl::StatusOr<DType> decode_dtype(int dtype, const char* what);

void encode_attrs(const OpAttrs& attrs, proto::Attrs* out);
absl::StatusOr<OpAttrs> decode_attrs(const proto::Attrs& attrs);

}  // namespace mt::distributed::internal
