// cuda.20_int8_dp4a: cuda.02's implicit GEMM in int8, on __dp4a.
//
// What changes against cuda.02_implicit_gemm: the operands are bytes, four taps to a 32-bit word,
//   and one __dp4a multiplies four s8 pairs and adds them to an int32 in one instruction. The
//   block tile (64 channels x 64 pixels, 4 x 4 per thread, double-buffered through registers) and
//   the im2col gather are cuda.02's; a step covers 32 taps (8 words). Activations are quint8: the
//   gather stores x ^ 0x80 (= x - 128, an s8) and plan's compensation term restores the zero point
//   (kernels/cuda/int8_gemm.cuh). The epilogue requantises each int32 sum to a byte exactly as
//   kernels/common/quantize.hpp does, so the output is the int8 oracle's, byte for byte.
// Why faster: a word carries four operands, so each shared-memory load feeds four times the
//   multiplies of FP32, and __dp4a retires four multiply-adds in one instruction: on paper 4x the
//   FP32 rate on the same ALUs, a quarter of the bytes moved.
// Measured: not yet on a GPU (checked on the CPU emulator only).
// groups = 1; any stride, padding and dilation.
// Run: build/convlab conv --backend cuda --precision int8 --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cuda.20_int8_dp4a
#include "kernels/cuda/int8_gemm.cuh"

namespace convlab::cuda {

namespace {
constexpr int kDp4aTile = 64, kDp4aThreads = 256;  // 16 x 16 threads, each 4 channels x 4 pixels
}

// grid: x = pixel tiles over the whole batch, y = output-channel tiles. 256 threads.
__global__ void __launch_bounds__(kDp4aThreads) conv_int8_dp4a(Int8ConvArgs a) {
  __shared__ __align__(16) int as[2][kInt8StepWords][kDp4aTile];  // weights: word x channel
  __shared__ __align__(16) int bs[2][kInt8StepWords][kDp4aTile];  // im2col: word x pixel
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int k0 = blockIdx.y * kDp4aTile;
  const long long pix0 = static_cast<long long>(blockIdx.x) * kDp4aTile;
  const int steps = int8_padded_taps(a.p.c * a.p.r * a.p.s) / kInt8StepTaps;
  const PixelOrigin origin = pixel_origin(a.p, pix0 + tid % kDp4aTile);

  // This thread's share of a step: weight words (channel i / 8, word i % 8) for i = tid, tid + 256;
  // im2col words tid / 64 and tid / 64 + 4 of pixel tid % 64.
  int w[2], x[2];
  const auto load = [&](int step) {
    for (int j = 0; j < 2; ++j) {
      const int i = tid + j * kDp4aThreads;
      w[j] = static_cast<int>(int8_weight_word(a, k0 + i / kInt8StepWords, step * kInt8StepWords + i % kInt8StepWords));
      x[j] = static_cast<int>(int8_gather_word(a, origin, step * kInt8StepWords + tid / kDp4aTile + 4 * j));
    }
  };
  const auto store = [&](int buffer) {
    for (int j = 0; j < 2; ++j) {
      const int i = tid + j * kDp4aThreads;
      as[buffer][i % kInt8StepWords][i / kInt8StepWords] = w[j];
      bs[buffer][tid / kDp4aTile + 4 * j][tid % kDp4aTile] = x[j];
    }
  };

  int acc[4][4] = {};
  int8_gemm_steps(steps, load, store, [&](int buffer) {
#pragma unroll
    for (int word = 0; word < kInt8StepWords; ++word) {
      const int4 wv = *reinterpret_cast<const int4*>(&as[buffer][word][ty * 4]);
      const int4 xv = *reinterpret_cast<const int4*>(&bs[buffer][word][tx * 4]);
      const int ws[4] = {wv.x, wv.y, wv.z, wv.w}, xs[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = __dp4a(ws[i], xs[j], acc[i][j]);
    }
  });
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) int8_store(a, k0 + ty * 4 + i, pix0 + tx * 4 + j, acc[i][j]);
}

// Its row: groups 1; K rows of taps padded to 32 bytes.
struct int8_dp4a {
  static std::string unsupported(const ConvProblem& p) { return ungrouped_only(p); }
  static std::vector<signed char> weights(const ConvProblem& p, std::span<const std::int8_t> oihw) {
    return int8_gemm_weights(p, oihw);
  }
  template <class Launch>
  static void launch(Launch& launch, const Int8ConvArgs& a) {
    launch(LaunchShape{{blocks(output_pixels(a.p), kDp4aTile), blocks(a.p.k, kDp4aTile), 1}, {kDp4aThreads, 1, 1}, 0}, conv_int8_dp4a, a);
  }
};

}  // namespace convlab::cuda
