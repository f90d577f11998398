#pragma once
// Declarations only.
// How values of several replicas combine (tf.distribute.ReduceOp): their sum, or their
// mean (the sum divided by the number of replicas).

namespace mt::distribute {

enum class ReduceOp { kSum, kMean };

// Returns "SUM" or "MEAN", TensorFlow's names.
inline const char* reduce_op_name(ReduceOp op) { return op == ReduceOp::kSum ? "SUM" : "MEAN"; }

}  // namespace mt::distribute
