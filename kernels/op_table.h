#pragma once
// The op table: every op the runtime knows, declared once, as MT_DTYPE_TABLE declares the
// dtypes. Everything else about an op is read from its row: OpId and kNumOps, op_name, the
// dtypes the shape function and every backend's registration check, the arity, the shape
// function, the C++ wrappers of the uniform families (runtime/ops/ops.h), the Python bindings
// and the ops the tests and fuzzers iterate over (Note [Adding an op] in docs/design.md).
//
// Columns: X(Name, "TfName", cc_name, "py_name", arity, dtypes, shape_fn, flags)
//   Name      the enumerator: OpId::k##Name
//   TfName    TensorFlow's op name, used in placement logs and error messages
//   cc_name   the C++ function in namespace mt (runtime/ops/ops.h)
//   py_name   the Python function, relative to the package: "add", "nn.relu"
//   arity     the inputs shape inference sees: a count, or kVariadic (one or more); a
//             source op sees one, the output itself (op_def.h)
//   dtypes    the DTypeSet (core/dtype_set.h) of the input that keys the kernel: the first,
//             or the one the flags name; a source op's is its output's
//   shape_fn  the function of kernels/shape_fns.h that validates a call and infers outputs
//   flags     OpFlags (op_id.h): kNone, kSource, kGrad (differentiable), kCostly (much
//             work per element), kRandom, kKeyInput1 (the kernel is keyed by input 1),
//             kResource (input 0 is a variable's value: the op runs on its device),
//             writes_inputs(n) (a resource op writes its first n inputs in place),
//             kAliasInput0 and kCopyIsResult (no kernel runs: the execute body returns
//             input 0, or its copy to the op's device)
//             kGradReadsInputs, kGradReadsOutputs, kGradReadsNoValue and
//             grad_reads_outputs(mask) (the values a gradient reads: the tape keeps the
//             others weakly), kGpuFloatOnly (the GPU kernel takes the float dtypes only)
//
// The families below are separate lists so that code which handles a family uniformly
// (one CPU loop and one CUDA functor per element-wise op, one wrapper signature) can expand
// just that family; MT_OP_TABLE is all of them, in OpId order.

// The data ops: constants, fills, copies and casts. Range writes start + i * delta
// (attrs.start, limit, delta; kernels/range.h) into the 1-D output its wrapper sized.
#define MT_DATA_OPS(X)                                                                          \
  X(EagerConst, "_EagerConst", constant, "constant", 1, kAllDTypes, infer_data_op, kSource)     \
  X(Fill, "Fill", fill, "fill", 1, kAllDTypes, infer_data_op, kSource)                          \
  X(Range, "Range", range, "range", 1, kNumericDTypes, infer_range, kSource)                    \
  X(Identity, "Identity", identity, "identity", 1, kAllDTypes, infer_data_op,                   \
    kGrad | kCopyIsResult | kGradReadsNoValue)                                                  \
  X(Cast, "Cast", cast, "cast", 1, kAllDTypes, infer_data_op, kGrad | kGradReadsNoValue)        \
  X(StopGradient, "StopGradient", stop_gradient, "stop_gradient", 1, kAllDTypes, infer_data_op, \
    kNone)

// Linear algebra, the n-ary sum and ClipByValue (t, clip_value_min, clip_value_max: the
// bounds broadcast to t's shape, never growing it; kernels/math_shape.cc).
// MatMul is rank 2 only; matmul() sends higher ranks to BatchMatMulV2, as tf.matmul does.
#define MT_MATH_OPS(X)                                                                           \
  X(MatMul, "MatMul", matmul, "matmul", 2, kNumericDTypes, infer_matmul,                         \
    kGrad | kGradReadsInputs | kGpuFloatOnly)                                                    \
  X(BatchMatMulV2, "BatchMatMulV2", matmul, "linalg.matmul", 2, kNumericDTypes,                  \
    infer_batch_matmul, kGrad | kGradReadsInputs | kGpuFloatOnly)                                \
  X(AddN, "AddN", add_n, "add_n", kVariadic, kNumericDTypes, infer_add_n,                        \
    kGrad | kGradReadsNoValue)                                                                   \
  X(UnsortedSegmentSum, "UnsortedSegmentSum", unsorted_segment_sum, "math.unsorted_segment_sum", \
    2, kNumericDTypes, infer_segment_sum, kGrad)                                                 \
  X(ClipByValue, "ClipByValue", clip_by_value, "clip_by_value", 3, kNumericDTypes,               \
    infer_clip_by_value, kGrad | kGradReadsInputs)

// The comparisons: broadcasting binary ops whose output is bool (infer_comparison). A NaN
// compares unequal to everything, itself included.
#define MT_COMPARISON_OPS(X)                                                                      \
  X(Equal, "Equal", equal, "equal", 2, kAllDTypes, infer_comparison, kNone)                       \
  X(NotEqual, "NotEqual", not_equal, "not_equal", 2, kAllDTypes, infer_comparison, kNone)         \
  X(Less, "Less", less, "less", 2, kNumericDTypes, infer_comparison, kNone)                       \
  X(LessEqual, "LessEqual", less_equal, "less_equal", 2, kNumericDTypes, infer_comparison, kNone) \
  X(Greater, "Greater", greater, "greater", 2, kNumericDTypes, infer_comparison, kNone)           \
  X(GreaterEqual, "GreaterEqual", greater_equal, "greater_equal", 2, kNumericDTypes,              \
    infer_comparison, kNone)

// Element-wise binary ops with NumPy broadcasting; the output has the inputs' dtype, except
// for the comparisons, which are part of this family.
// Integer FloorDiv and FloorMod by zero, and integer Pow to a negative power, are
// InvalidArgument on the CPU (Note [Integer division by zero] in kernels/cpu/binary_kernels.cc).
#define MT_BINARY_OPS(X)                                                                       \
  X(AddV2, "AddV2", add, "add", 2, kNumericDTypes, infer_binary, kGrad | kGradReadsNoValue)    \
  X(Sub, "Sub", sub, "subtract", 2, kNumericDTypes, infer_binary, kGrad | kGradReadsNoValue)   \
  X(Mul, "Mul", mul, "multiply", 2, kNumericDTypes, infer_binary, kGrad | kGradReadsInputs)    \
  X(RealDiv, "RealDiv", div, "divide", 2, kFloatDTypes, infer_binary, kGrad)                   \
  X(Pow, "Pow", pow, "pow", 2, kNumericDTypes, infer_binary, kGrad | kCostly)                  \
  X(Maximum, "Maximum", maximum, "maximum", 2, kNumericDTypes, infer_binary, kGrad)            \
  X(Minimum, "Minimum", minimum, "minimum", 2, kNumericDTypes, infer_binary, kGrad)            \
  X(SquaredDifference, "SquaredDifference", squared_difference, "math.squared_difference", 2,  \
    kNumericDTypes, infer_binary, kGrad)                                                       \
  X(FloorDiv, "FloorDiv", floordiv, "math.floordiv", 2, kNumericDTypes, infer_binary, kNone)   \
  X(FloorMod, "FloorMod", floormod, "math.floormod", 2, kNumericDTypes, infer_binary, kNone)   \
  X(LogicalAnd, "LogicalAnd", logical_and, "logical_and", 2, kBoolDTypes, infer_binary, kNone) \
  X(LogicalOr, "LogicalOr", logical_or, "logical_or", 2, kBoolDTypes, infer_binary, kNone)     \
  MT_COMPARISON_OPS(X)

// Element-wise unary ops; the output has the input's dtype.
#define MT_UNARY_OPS(X)                                                                            \
  X(Neg, "Neg", neg, "negative", 1, kNumericDTypes, infer_unary, kGrad | kGradReadsNoValue)        \
  X(Abs, "Abs", abs, "abs", 1, kNumericDTypes, infer_unary, kGrad)                                 \
  X(Exp, "Exp", exp, "exp", 1, kFloatDTypes, infer_unary, kGrad | kCostly | kGradReadsOutputs)     \
  X(Relu, "Relu", relu, "nn.relu", 1, kNumericDTypes, infer_unary, kGrad | kGradReadsOutputs)      \
  X(Sqrt, "Sqrt", sqrt, "sqrt", 1, kFloatDTypes, infer_unary, kGrad | kGradReadsOutputs)           \
  X(Rsqrt, "Rsqrt", rsqrt, "math.rsqrt", 1, kFloatDTypes, infer_unary, kGrad | kGradReadsOutputs)  \
  X(Square, "Square", square, "square", 1, kNumericDTypes, infer_unary, kGrad)                     \
  X(Log, "Log", log, "math.log", 1, kFloatDTypes, infer_unary, kGrad | kCostly)                    \
  X(Log1p, "Log1p", log1p, "math.log1p", 1, kFloatDTypes, infer_unary, kGrad | kCostly)            \
  X(Tanh, "Tanh", tanh, "tanh", 1, kFloatDTypes, infer_unary, kGrad | kCostly | kGradReadsOutputs) \
  X(Erf, "Erf", erf, "math.erf", 1, kFloatDTypes, infer_unary, kGrad | kCostly | kGradReadsInputs) \
  X(Sin, "Sin", sin, "sin", 1, kFloatDTypes, infer_unary, kGrad | kCostly | kGradReadsInputs)      \
  X(Cos, "Cos", cos, "cos", 1, kFloatDTypes, infer_unary, kGrad | kCostly | kGradReadsInputs)      \
  X(Sigmoid, "Sigmoid", sigmoid, "sigmoid", 1, kFloatDTypes, infer_unary,                          \
    kGrad | kCostly | kGradReadsOutputs)                                                           \
  X(Sign, "Sign", sign, "sign", 1, kNumericDTypes, infer_unary, kNone)                             \
  X(Floor, "Floor", floor, "floor", 1, kFloatDTypes, infer_unary, kNone)                           \
  X(Round, "Round", round, "round", 1, kNumericDTypes, infer_unary, kNone)                         \
  X(LogicalNot, "LogicalNot", logical_not, "logical_not", 1, kBoolDTypes, infer_unary, kNone)

// Reductions over axes (Note [Reductions] in op_def.h).
#define MT_REDUCTION_OPS(X)                                                              \
  X(Sum, "Sum", reduce_sum, "reduce_sum", 1, kNumericDTypes, infer_reduction,            \
    kGrad | kGradReadsNoValue)                                                           \
  X(Mean, "Mean", reduce_mean, "reduce_mean", 1, kNumericDTypes, infer_reduction,        \
    kGrad | kGradReadsNoValue)                                                           \
  X(Max, "Max", reduce_max, "reduce_max", 1, kNumericDTypes, infer_reduction, kGrad)     \
  X(Min, "Min", reduce_min, "reduce_min", 1, kNumericDTypes, infer_reduction, kGrad)     \
  X(Prod, "Prod", reduce_prod, "reduce_prod", 1, kNumericDTypes, infer_reduction, kGrad) \
  X(Any, "Any", reduce_any, "reduce_any", 1, kBoolDTypes, infer_reduction, kNone)        \
  X(All, "All", reduce_all, "reduce_all", 1, kBoolDTypes, infer_reduction, kNone)

// The index of the largest or smallest element along attrs.axis, as attrs.dst_dtype (int32
// or int64); the first index on ties, and a NaN never wins (Note [Arg reductions] in
// kernels/cpu/arg_kernels.cc).
#define MT_ARG_OPS(X)                                                                  \
  X(ArgMax, "ArgMax", argmax, "argmax", 1, kNumericDTypes, infer_arg_reduction, kNone) \
  X(ArgMin, "ArgMin", argmin, "argmin", 1, kNumericDTypes, infer_arg_reduction, kNone)

// Neural-network ops over the last axis (kernels/nn_shape.cc). BiasAdd adds a 1-D bias along
// the last axis; SparseSoftmaxCrossEntropyWithLogits takes (logits [batch, classes], labels
// [batch], int32 or int64) and has two outputs, the loss [batch] and its gradient. Gelu is
// x * Phi(x), or its tanh approximation with attrs.approximate (kernels/gelu.h).
#define MT_NN_OPS(X)                                                                             \
  X(Softmax, "Softmax", nn::softmax, "nn.softmax", 1, kFloatDTypes, infer_softmax,               \
    kGrad | kCostly)                                                                             \
  X(LogSoftmax, "LogSoftmax", nn::log_softmax, "nn.log_softmax", 1, kFloatDTypes, infer_softmax, \
    kGrad | kCostly)                                                                             \
  X(BiasAdd, "BiasAdd", nn::bias_add, "nn.bias_add", 2, kNumericDTypes, infer_bias_add,          \
    kGrad | kGradReadsNoValue)                                                                   \
  X(SparseSoftmaxCrossEntropyWithLogits, "SparseSoftmaxCrossEntropyWithLogits",                  \
    nn::sparse_softmax_cross_entropy_with_logits, "nn.sparse_softmax_cross_entropy_with_logits", \
    2, kFloatDTypes, infer_sparse_xent,                                                          \
    kGrad | kCostly | kGradSkipsInputs | grad_reads_outputs(1u << 1))                            \
  X(Gelu, "Gelu", nn::gelu, "nn.gelu", 1, kFloatDTypes, infer_unary,                             \
    kGrad | kCostly | kGradReadsInputs)

// Shape and data movement (Note [Array ops] in kernels/array_layout.h): copies that
// rearrange elements, for every dtype. GatherV2 takes (params, indices), keyed by params;
// OneHot is keyed by its indices and writes attrs.dst_dtype. MatrixBandPart keeps a band of
// each innermost matrix (attrs.dims: num_lower, num_upper; negative keeps the whole
// triangle) and zeroes the rest; Cumsum is the running sum along attrs.axis
// (kernels/array_shape.cc). Pad, PadV2 (attrs.value), MirrorPad (attrs.symmetric) and
// MirrorPadGrad take the (before, after) paddings of each dimension in attrs.dims; TopKV2
// returns (values, int32 indices) of the attrs.k largest along the last axis (Note [Pads
// and top k] in kernels/pad_shape.cc). ScatterNd (indices, updates; the output's shape
// in attrs.dims, keyed by updates) adds each update into a zero tensor;
// TensorScatterUpdate and TensorScatterAdd (tensor, indices, updates) write or add them
// into a copy of the tensor (Note [Scatter] in kernels/scatter.h).
#define MT_ARRAY_OPS(X)                                                                            \
  X(Reshape, "Reshape", reshape, "reshape", 1, kAllDTypes, infer_reshape, kGrad)                   \
  X(Transpose, "Transpose", transpose, "transpose", 1, kAllDTypes, infer_transpose, kGrad)         \
  X(ExpandDims, "ExpandDims", expand_dims, "expand_dims", 1, kAllDTypes, infer_expand_dims, kGrad) \
  X(Squeeze, "Squeeze", squeeze, "squeeze", 1, kAllDTypes, infer_squeeze, kGrad)                   \
  X(ConcatV2, "ConcatV2", concat, "concat", kVariadic, kAllDTypes, infer_concat, kGrad)            \
  X(Pack, "Pack", stack, "stack", kVariadic, kAllDTypes, infer_concat, kGrad)                      \
  X(SplitV, "SplitV", split, "split", 1, kAllDTypes, infer_split, kGrad)                           \
  X(Slice, "Slice", slice, "slice", 1, kAllDTypes, infer_slice, kGrad)                             \
  X(StridedSlice, "StridedSlice", strided_slice, "strided_slice", 1, kAllDTypes,                   \
    infer_strided_slice, kGrad)                                                                    \
  X(GatherV2, "GatherV2", gather, "gather", 2, kAllDTypes, infer_gather, kGrad)                    \
  X(OneHot, "OneHot", one_hot, "one_hot", 1, kIntDTypes, infer_one_hot, kNone)                     \
  X(BroadcastTo, "BroadcastTo", broadcast_to, "broadcast_to", 1, kAllDTypes, infer_broadcast_to,   \
    kGrad)                                                                                         \
  X(Tile, "Tile", tile, "tile", 1, kAllDTypes, infer_tile, kGrad)                                  \
  X(MatrixBandPart, "MatrixBandPart", linalg::band_part, "linalg.band_part", 1, kAllDTypes,        \
    infer_band_part, kGrad | kGradReadsNoValue)                                                    \
  X(Cumsum, "Cumsum", cumsum, "math.cumsum", 1, kNumericDTypes, infer_cumsum,                      \
    kGrad | kGradReadsNoValue)                                                                     \
  X(Pad, "Pad", pad, "pad", 1, kAllDTypes, infer_pad, kGrad | kGradReadsNoValue)                   \
  X(PadV2, "PadV2", pad, "pad", 1, kAllDTypes, infer_pad, kGrad | kGradReadsNoValue)               \
  X(MirrorPad, "MirrorPad", pad, "pad", 1, kAllDTypes, infer_pad, kGrad | kGradReadsNoValue)       \
  X(MirrorPadGrad, "MirrorPadGrad", mirror_pad_grad, "mirror_pad_grad", 1, kNumericDTypes,         \
    infer_pad, kNone)                                                                              \
  X(TopKV2, "TopKV2", math::top_k, "math.top_k", 1, kNumericDTypes, infer_top_k,                   \
    kGrad | kGradSkipsInputs | grad_reads_outputs(1u << 1))                                        \
  X(ScatterNd, "ScatterNd", scatter_nd, "scatter_nd", 2, kNumericDTypes, infer_scatter_nd,         \
    kGrad | kKeyInput1 | kGradReadsInputs)                                                         \
  X(TensorScatterUpdate, "TensorScatterUpdate", tensor_scatter_nd_update,                          \
    "tensor_scatter_nd_update", 3, kAllDTypes, infer_tensor_scatter, kGrad | kGradReadsInputs)     \
  X(TensorScatterAdd, "TensorScatterAdd", tensor_scatter_nd_add, "tensor_scatter_nd_add", 3,       \
    kNumericDTypes, infer_tensor_scatter, kGrad | kGradReadsInputs)                                \
  X(ZerosLike, "ZerosLike", zeros_like, "zeros_like", 1, kAllDTypes, infer_data_op, kNone)         \
  X(OnesLike, "OnesLike", ones_like, "ones_like", 1, kAllDTypes, infer_data_op, kNone)             \
  X(SelectV2, "SelectV2", where, "where", 3, kAllDTypes, infer_select, kGrad | kKeyInput1)

// The random ops (Note [Random ops] in kernels/random_shape.cc): source ops whose attrs
// carry where their Philox stream starts and the distribution's parameters.
#define MT_RANDOM_OPS(X)                                                                           \
  X(RandomUniform, "RandomUniform", random_uniform, "random.uniform", 1, kFloatDTypes,             \
    infer_random, kSource | kRandom)                                                               \
  X(RandomUniformInt, "RandomUniformInt", random_uniform_int, "random.uniform", 1,                 \
    kRandomIntDTypes, infer_random, kSource | kRandom)                                             \
  X(RandomStandardNormal, "RandomStandardNormal", random_normal, "random.normal", 1, kFloatDTypes, \
    infer_random, kSource | kRandom | kCostly)                                                     \
  X(TruncatedNormal, "TruncatedNormal", truncated_normal, "random.truncated_normal", 1,            \
    kFloatDTypes, infer_random, kSource | kRandom | kCostly)                                       \
  X(StatelessRandomUniformV2, "StatelessRandomUniformV2", stateless_uniform,                       \
    "random.stateless_uniform", 1, kFloatDTypes, infer_random, kSource | kRandom)                  \
  X(StatelessRandomUniformIntV2, "StatelessRandomUniformIntV2", stateless_uniform_int,             \
    "random.stateless_uniform", 1, kRandomIntDTypes, infer_random, kSource | kRandom)              \
  X(StatelessRandomNormalV2, "StatelessRandomNormalV2", stateless_normal,                          \
    "random.stateless_normal", 1, kFloatDTypes, infer_random, kSource | kRandom | kCostly)         \
  X(StatelessTruncatedNormalV2, "StatelessTruncatedNormalV2", stateless_truncated_normal,          \
    "random.stateless_truncated_normal", 1, kFloatDTypes, infer_random,                            \
    kSource | kRandom | kCostly)

// Convolutions and pools over the two spatial dimensions of a 4-D tensor, NHWC or NCHW
// (Note [Convolutions] in kernels/conv_shape.cc; attributes in OpAttrs). A filter is HWIO.
// The backprops are Conv2D's gradients (input_sizes / filter_sizes in attrs.dims),
// MaxPoolGrad takes (orig_input, orig_output, grad) and AvgPoolGrad (grad) with the
// original input's shape in attrs.dims.
#define MT_CONV_OPS(X)                                                                  \
  X(Conv2D, "Conv2D", nn::conv2d, "nn.conv2d", 2, kFloatDTypes, infer_conv2d,           \
    kGrad | kCostly | kGradReadsInputs)                                                 \
  X(Conv2DBackpropInput, "Conv2DBackpropInput", nn::conv2d_backprop_input,              \
    "nn.conv2d_backprop_input", 2, kFloatDTypes, infer_conv2d_backprop, kCostly)        \
  X(Conv2DBackpropFilter, "Conv2DBackpropFilter", nn::conv2d_backprop_filter,           \
    "nn.conv2d_backprop_filter", 2, kFloatDTypes, infer_conv2d_backprop, kCostly)       \
  X(MaxPool, "MaxPool", nn::max_pool2d, "nn.max_pool2d", 1, kFloatDTypes, infer_pool,   \
    kGrad | kCostly)                                                                    \
  X(MaxPoolGrad, "MaxPoolGrad", nn::max_pool_grad, "nn.max_pool_grad", 3, kFloatDTypes, \
    infer_pool_grad, kCostly)                                                           \
  X(AvgPool, "AvgPool", nn::avg_pool2d, "nn.avg_pool2d", 1, kFloatDTypes, infer_pool,   \
    kGrad | kCostly | kGradReadsNoValue)                                                \
  X(AvgPoolGrad, "AvgPoolGrad", nn::avg_pool_grad, "nn.avg_pool_grad", 1, kFloatDTypes, \
    infer_pool_grad, kCostly)

// Batch normalisation over the channels of a 4-D tensor, NHWC or NCHW (Note [Batch
// normalisation] in kernels/batch_norm_shape.cc; attributes epsilon, exponential_avg_factor,
// is_training and channels_first in OpAttrs). FusedBatchNormV3 takes (x, scale, offset, mean,
// variance) and returns (y, batch_mean, batch_variance, reserve_space_1, reserve_space_2);
// FusedBatchNormGradV3 takes (y_backprop, x, scale, reserve_space_1, reserve_space_2) and
// returns (x_backprop, scale_backprop, offset_backprop). x and y are any float dtype; the
// statistics are float32 (float64 with a float64 x).
#define MT_BATCH_NORM_OPS(X)                                                                 \
  X(FusedBatchNormV3, "FusedBatchNormV3", nn::fused_batch_norm, "nn.fused_batch_norm_v3", 5, \
    kFloatDTypes, infer_fused_batch_norm, kGrad | kCostly)                                   \
  X(FusedBatchNormGradV3, "FusedBatchNormGradV3", nn::fused_batch_norm_grad,                 \
    "nn.fused_batch_norm_grad", 5, kFloatDTypes, infer_fused_batch_norm_grad, kCostly)

// Layer normalisation over the trailing axes of x, from attrs.axis to the last (Note [Layer
// normalisation] in kernels/layer_norm_shape.cc; attributes axis and epsilon in OpAttrs).
// LayerNorm takes (x, gamma, beta) and returns (y, mean, inv_std); LayerNormGrad takes (dy,
// x, gamma, mean, inv_std) and returns (dx, dgamma, dbeta); AddLayerNorm takes (x, residual,
// gamma, beta) and returns (y, sum, mean, inv_std), LayerNorm of sum = x + residual. x and y
// are any float dtype; gamma, beta and the statistics are float32 (float64 with a float64 x).
#define MT_LAYER_NORM_OPS(X)                                                                    \
  X(LayerNorm, "LayerNorm", nn::layer_norm, "nn.layer_norm", 3, kFloatDTypes, infer_layer_norm, \
    kGrad | kCostly | grad_reads_outputs(0b110))                                                \
  X(LayerNormGrad, "LayerNormGrad", nn::layer_norm_grad, "nn.layer_norm_grad", 5, kFloatDTypes, \
    infer_layer_norm_grad, kCostly)                                                             \
  X(AddLayerNorm, "AddLayerNorm", nn::add_layer_norm, "nn.add_layer_norm", 4, kFloatDTypes,     \
    infer_add_layer_norm, kGrad | kCostly | grad_reads_outputs(0b1110))

// Dot-product attention (Note [Dot-product attention] in kernels/attention_shape.cc;
// attributes scale and causal in OpAttrs). DotProductAttention takes (q [B, T, H, D], k [B, S,
// Hk, D], v [B, S, Hk, Dv]), Hk dividing H, and returns (o [B, T, H, Dv], lse [B, H, T]);
// DotProductAttentionGrad takes (do, q, k, v, o, lse) and returns (dq, dk, dv). q, k, v and o
// are any float dtype; lse is float32 (float64 with a float64 q).
#define MT_ATTENTION_OPS(X)                                                             \
  X(DotProductAttention, "DotProductAttention", nn::dot_product_attention,              \
    "nn.dot_product_attention", 3, kFloatDTypes, infer_attention, kGrad | kCostly)      \
  X(DotProductAttentionGrad, "DotProductAttentionGrad", nn::dot_product_attention_grad, \
    "nn.dot_product_attention_grad", 6, kFloatDTypes, infer_attention_grad, kCostly)

// Variables (runtime/train/variable.h): input 0 of the kResource ops is the variable's value, whose
// device they run on whatever the scope (TensorFlow's MaybePinToResourceDevice).
// VarHandleOp allocates the variable's buffer; ReadVariableOp returns the value itself
// (kAliasInput0: no kernel runs); the assignments write input 1 into input 0's buffer and have no
// output (Note [Variables write in place] in runtime/train/variable.h).
#define MT_RESOURCE_OPS(X)                                                                        \
  X(VarHandleOp, "VarHandleOp", Variable, "Variable", 1, kAllDTypes, infer_data_op, kSource)      \
  X(ReadVariableOp, "ReadVariableOp", Variable::read_value, "Variable.read_value", 1, kAllDTypes, \
    infer_data_op, kResource | kAliasInput0)                                                      \
  X(AssignVariableOp, "AssignVariableOp", Variable::assign, "Variable.assign", 2, kAllDTypes,     \
    infer_assign, kResource | writes_inputs(1))                                                   \
  X(AssignAddVariableOp, "AssignAddVariableOp", Variable::assign_add, "Variable.assign_add", 2,   \
    kNumericDTypes, infer_assign, kResource | writes_inputs(1))                                   \
  X(AssignSubVariableOp, "AssignSubVariableOp", Variable::assign_sub, "Variable.assign_sub", 2,   \
    kNumericDTypes, infer_assign, kResource | writes_inputs(1))                                   \
  X(ResourceApplyAdam, "ResourceApplyAdam", optimizers::Adam, "keras.optimizers.Adam", 5,         \
    kFloatDTypes, infer_apply_adam, kResource | writes_inputs(3))

#define MT_OP_TABLE(X) \
  MT_DATA_OPS(X)       \
  MT_MATH_OPS(X)       \
  MT_BINARY_OPS(X)     \
  MT_UNARY_OPS(X)      \
  MT_REDUCTION_OPS(X)  \
  MT_ARG_OPS(X)        \
  MT_ARRAY_OPS(X)      \
  MT_RANDOM_OPS(X)     \
  MT_NN_OPS(X)         \
  MT_CONV_OPS(X)       \
  MT_BATCH_NORM_OPS(X) \
  MT_LAYER_NORM_OPS(X) \
  MT_ATTENTION_OPS(X)  \
  MT_RESOURCE_OPS(X)
