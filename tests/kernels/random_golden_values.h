#pragma once
// TensorFlow 2.21's tf.random.stateless_{uniform,normal,truncated_normal}(shape=[10], seed,
// dtype) on the CPU, as raw bits, and FNV-1a hashes of 100003 stateless_uniform values of
// seed [12345, -7]. Generated with tensorflow-cpu in a throwaway venv (never a dependency):
//   x = tf.random.stateless_normal([10], seed=tf.constant([1, 2], tf.int64), dtype=tf.float32)
//   x.numpy().view(np.uint32)
// Used by philox_test.cc (Note [TensorFlow's random bits] in kernels/random_distributions.h).

#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/random_distributions.h"

namespace mt::testutil {

struct RandomGolden {
  RandomDistribution dist;
  DType dtype;
  int64_t seed0;
  int64_t seed1;
  std::vector<uint64_t> bits;  // element bits, zero-extended
};

inline const std::vector<RandomGolden>& tensorflow_random_goldens() {
  static const auto* goldens = new std::vector<RandomGolden>{
      // One case a line.
      // clang-format off
      {RandomDistribution::kUniform, DType::kFloat32, 1, 2, {0x3f581458, 0x3e44a788, 0x3f7f087c, 0x3e243c98, 0x3e8b424c, 0x3f263b8a, 0x3ddb05b0, 0x3d8573e0, 0x3ee0f2ac, 0x3dad9af0}},
      {RandomDistribution::kUniform, DType::kFloat32, 12345, -7, {0x3f01af28, 0x3f33178e, 0x3ee91cb0, 0x3f5d9d1e, 0x3f15a934, 0x3f23c3f0, 0x3d971740, 0x3ea06468, 0x3eb6da44, 0x3f768508}},
      {RandomDistribution::kUniform, DType::kFloat32, -1, int64_t{1} << 40, {0x3efca5cc, 0x3e5ca0e8, 0x3d944070, 0x3f49eb36, 0x3e885638, 0x3e929da4, 0x3c961000, 0x3e545788, 0x3e62e398, 0x3eb06ff4}},
      {RandomDistribution::kUniform, DType::kFloat64, 1, 2, {0x3fe81458cf3129e2, 0x3fef087c2c290f26, 0x3fc6849f8a98ee28, 0x3feb60b64610ae7c, 0x3fe07956bf15b35e, 0x3fe372a5bf23a328, 0x3fea77afee2ccf48, 0x3fcb60f1181018d0, 0x3feadf3750539e86, 0x3fea46dcca5797e2}},
      {RandomDistribution::kUniform, DType::kFloat64, 12345, -7, {0x3faaf2980b3178e0, 0x3fe48e59cadd9d1e, 0x3fe5a93546a3c3f0, 0x3fe2e2e828503234, 0x3feb6d23dcf68508, 0x3fd76ce9cd90acbc, 0x3fe242caa2eea9d4, 0x3fef6b483cd7f8fa, 0x3fd8db72d2895c9c, 0x3fdb1fbab72fdda4}},
      {RandomDistribution::kUniform, DType::kFloat64, -1, int64_t{1} << 40, {0x3fee52e70637283a, 0x3fe2880e8fc9eb36, 0x3fc0ac7641253b48, 0x3fc2c20048d45788, 0x3fe8b8e68c5837fa, 0x3febe5371c4097be, 0x3fe3c4c07d046248, 0x3fd08fcc66363bac, 0x3fee1f44ec92dd00, 0x3fb55ac9d4251830}},
      {RandomDistribution::kUniform, DType::kBFloat16, 1, 2, {0x3eb0, 0x3f62, 0x3ef8, 0x3e18, 0x3e18, 0x3f0a, 0x3f36, 0x3ef8, 0x3eac, 0x3ebc}},
      {RandomDistribution::kUniform, DType::kBFloat16, 12345, -7, {0x3e20, 0x3f0e, 0x3eb0, 0x3df0, 0x3e50, 0x3f70, 0x3f68, 0x3e50, 0x3e08, 0x3d00}},
      {RandomDistribution::kUniform, DType::kBFloat16, -1, int64_t{1} << 40, {0x3f66, 0x3e68, 0x3d60, 0x3e58, 0x3de0, 0x3f52, 0x3f00, 0x3f62, 0x3f66, 0x3f7a}},
      {RandomDistribution::kUniform, DType::kFloat16, 1, 2, {0x3858, 0x3388, 0x2bc0, 0x3b26, 0x3098, 0x3714, 0x2db0, 0x3a7c, 0x3158, 0x36bc}},
      {RandomDistribution::kUniform, DType::kFloat16, 12345, -7, {0x3b28, 0x3b8e, 0x3a58, 0x391e, 0x30d0, 0x37e0, 0x35d0, 0x3468, 0x3922, 0x3908}},
      {RandomDistribution::kUniform, DType::kFloat16, -1, int64_t{1} << 40, {0x35cc, 0x2740, 0x1f00, 0x366c, 0x3638, 0x3ad2, 0x2c00, 0x39e2, 0x2f30, 0x3bfa}},
      {RandomDistribution::kNormal, DType::kFloat32, 1, 2, {0x3f0b4acd, 0x3e545b81, 0x3d96a8e4, 0x3d3e3228, 0xbfa69a7f, 0xbf742ff1, 0x3f577b86, 0x3ff847a8, 0x3f26b8d4, 0x3f8d6ced}},
      {RandomDistribution::kNormal, DType::kFloat32, 12345, -7, {0xbf8dd9ff, 0xbeba0686, 0xbf6ffacc, 0x3f556568, 0xbf4c1285, 0xbf29742b, 0x4006bcb4, 0xbf6248f4, 0xbea96bb0, 0x3fb2bb9a}},
      {RandomDistribution::kNormal, DType::kFloat32, -1, int64_t{1} << 40, {0x3f9490ce, 0x3e830a6f, 0xc00e5670, 0x3f0d68dc, 0x3fcad127, 0xbebca089, 0x402e8f5b, 0x3f3fa723, 0x3fb81a9d, 0xbf78e5b5}},
      {RandomDistribution::kNormal, DType::kFloat64, 1, 2, {0xbfc23745fceed393, 0x3fe7b30df7adce2e, 0xbff7813821086c87, 0x3ff25d2c6f1a9e3a, 0xbfe719a6fdd9e259, 0xbfecbe32b640db75, 0x3fe33624a9899bf6, 0x3fc1bcdad7102049, 0xbfe10dd80237903c, 0x3fd05a2939ccb65f}},
      {RandomDistribution::kNormal, DType::kFloat64, 12345, -7, {0xbffe487886ca5555, 0xbff84cc25b26ae7f, 0xbfde5adbf63f1851, 0xbfe7d99ab5c11ff8, 0x3fda82ea7711af8d, 0xbfd7ad68ff19bd84, 0xbfbedce7d64a4aa7, 0x3ff0d65f1755868d, 0x3fe445b45d492247, 0xbff3880897921b63}},
      {RandomDistribution::kNormal, DType::kFloat64, -1, int64_t{1} << 40, {0xbfc4057866b6545d, 0xbfd274164847b881, 0x3ff9b761b8becdf1, 0x3ff38cf771bf39e1, 0xbfe095e0b5557f59, 0x3fdfd5d434a0eb65, 0x3fef5bfda8d46fe6, 0xbfabb2935c8f40d6, 0x3fc6472de6863d1c, 0x3fd3452357ccf626}},
      {RandomDistribution::kNormal, DType::kBFloat16, 1, 2, {0x3f0b, 0x3e54, 0x3d97, 0x3d3e, 0xbfa7, 0xbf74, 0x3f57, 0x3ff8, 0x3f27, 0x3f8d}},
      {RandomDistribution::kNormal, DType::kBFloat16, 12345, -7, {0xbf8e, 0xbeba, 0xbf70, 0x3f55, 0xbf4c, 0xbf29, 0x4007, 0xbf62, 0xbea9, 0x3fb3}},
      {RandomDistribution::kNormal, DType::kBFloat16, -1, int64_t{1} << 40, {0x3f95, 0x3e83, 0xc00e, 0x3f0d, 0x3fcb, 0xbebd, 0x402f, 0x3f40, 0x3fb8, 0xbf79}},
      {RandomDistribution::kNormal, DType::kFloat16, 1, 2, {0x385a, 0x32a3, 0x2cb5, 0x29f2, 0xbd35, 0xbba1, 0x3abc, 0x3fc2, 0x3936, 0x3c6b}},
      {RandomDistribution::kNormal, DType::kFloat16, 12345, -7, {0xbc6f, 0xb5d0, 0xbb80, 0x3aab, 0xba61, 0xb94c, 0x4036, 0xbb12, 0xb54b, 0x3d96}},
      {RandomDistribution::kNormal, DType::kFloat16, -1, int64_t{1} << 40, {0x3ca5, 0x3418, 0xc073, 0x386b, 0x3e57, 0xb5e5, 0x4174, 0x39fd, 0x3dc1, 0xbbc7}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat32, 1, 2, {0x3f0b4acd, 0x3e545b81, 0x3d96a8e4, 0x3d3e3228, 0x3e2c3e2c, 0xbfd7af2c, 0x3e77d657, 0x3fda0aa9, 0x3f8d93a1, 0xbf8949c5}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat32, 12345, -7, {0xbf8dd9ff, 0xbeba0686, 0xbf6ffacc, 0x3f556568, 0xbf6b04f5, 0xbff854a9, 0xbe07df39, 0xbf25a340, 0xbf46e7d8, 0xbec1aa83}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat32, -1, int64_t{1} << 40, {0x3f9490ce, 0x3e830a6f, 0x3f0d68dc, 0x3fcad127, 0x3f7aaa0e, 0xbee927ab, 0x3e4f14f6, 0x3f0338ef, 0xbf21621f, 0xbf0b5e08}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat64, 1, 2, {0xbfc23745fceed393, 0x3fe7b30df7adce2e, 0xbfe1ad29167909a9, 0xbfe7809d7af7e4ad, 0xbfd97fb79abfff44, 0x3fc850c94ed98bcb, 0xbff1b8b647d0508d, 0xbfeb8d42b681b709, 0xbfe931696fd06ee0, 0x3ff020a967415993}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat64, 12345, -7, {0xbffe487886ca5555, 0xbff84cc25b26ae7f, 0xbfe63f4057af0c8d, 0xbff827e18865cbd9, 0x3fd1b199f5a31d72, 0xbfe380813fac2a96, 0x3ff95c922c9cb713, 0xbff1c85ad0409e57, 0x3fbe26b4d5afa5a2, 0x3ff28c26f888dd0f}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat64, -1, int64_t{1} << 40, {0xbfc4057866b6545d, 0xbfd274164847b881, 0x3ffd9ecf5bc26a25, 0x3fd992b6af958a56, 0xbfec4ec7ec09082d, 0x3feba70770be8097, 0x3ff4fba804a20533, 0xbfdcc9fb8156976c, 0x3fec5bf8cc914650, 0xbfcf876f30f87af4}},
      {RandomDistribution::kTruncatedNormal, DType::kBFloat16, 1, 2, {0x3f0b, 0x3e54, 0x3d97, 0x3d3e, 0x3e2c, 0xbfd8, 0x3e78, 0x3fda, 0x3f8e, 0xbf89}},
      {RandomDistribution::kTruncatedNormal, DType::kBFloat16, 12345, -7, {0xbf8e, 0xbeba, 0xbf70, 0x3f55, 0xbf6b, 0xbff8, 0xbe08, 0xbf26, 0xbf47, 0xbec2}},
      {RandomDistribution::kTruncatedNormal, DType::kBFloat16, -1, int64_t{1} << 40, {0x3f95, 0x3e83, 0x3f0d, 0x3fcb, 0x3f7b, 0xbee9, 0x3e4f, 0x3f03, 0xbf21, 0xbf0b}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat16, 1, 2, {0x385a, 0x32a3, 0x2cb5, 0x29f2, 0x3162, 0xbebd, 0x33bf, 0x3ed0, 0x3c6d, 0xbc4a}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat16, 12345, -7, {0xbc6f, 0xb5d0, 0xbb80, 0x3aab, 0xbb58, 0xbfc3, 0xb03f, 0xb92d, 0xba37, 0xb60d}},
      {RandomDistribution::kTruncatedNormal, DType::kFloat16, -1, int64_t{1} << 40, {0x3ca5, 0x3418, 0x386b, 0x3e57, 0x3bd5, 0xb749, 0x3279, 0x381a, 0xb90b, 0xb85b}},
      // clang-format on
  };
  return *goldens;
}

struct UniformHash {
  DType dtype;
  uint64_t fnv1a;
};

// FNV-1a (64-bit) of the bytes of tf.random.stateless_uniform([100003], seed=[12345, -7]).
inline constexpr UniformHash kTensorFlowUniformHashes[] = {
    {DType::kFloat32, 0xe749584d36fa9c99ull},
    {DType::kFloat64, 0x5c47b9e8aabe5939ull},
    {DType::kBFloat16, 0x101375d3885253cbull},
    {DType::kFloat16, 0x8608b32bd0251357ull},
};

}  // namespace mt::testutil
