// cuda.04_depthwise: depthwise convolution (groups = C = K), one thread per output pixel.
//
// What changes against the general kernels: a depthwise layer does R x S multiply-adds per output
//   (9 for 3x3), so it is bound by memory, not arithmetic; the GEMM tiles of cuda.02 would be
//   almost empty (one input channel per group). Here a block covers a strip of one channel plane
//   (grid x = planes), so every thread of a block reads the same R x S taps (one broadcast load
//   each), consecutive threads read consecutive input pixels, and the neighbouring taps of
//   neighbouring threads hit the same cache lines.
// Why faster than cuda.00 on these layers: cuda.00 does the same arithmetic but decodes four
//   64-bit indices per output, and a warp may straddle two channels; here the plane is the
//   block's and the index math is 32-bit. Expect a share of the memory bandwidth, not of the
//   FP32 peak; the next step would be several outputs per thread, reusing loaded inputs.
// Measured: not yet measured on a GPU as a single layer (bench/RESULTS.md times it only inside
//   cuda.auto's network rows).
// Any stride, padding and dilation.
// Run: build/convlab conv --backend cuda --problem g32mb32ic32ih32oc32oh32kh3ph1 --kernel cuda.04_depthwise
#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

// grid: x = n * c planes, y = pixel blocks of one plane. 256 threads.
__global__ void conv_depthwise(ConvArgs a) {
  const ConvShape& p = a.p;
  const int plane = blockIdx.x, c = plane % p.c;
  const int q = blockIdx.y * blockDim.x + threadIdx.x;
  if (q >= p.oh * p.ow) return;
  const float* taps = a.weight + c * p.r * p.s;
  const int oy = q / p.ow, ox = q % p.ow;
  const float* in = a.in + static_cast<long long>(plane) * p.h * p.w;
  float acc = 0.0f;
  for (int r = 0; r < p.r; ++r) {
    const int y = oy * p.stride_h - p.pad_h + r * p.dil_h;
    if (y < 0 || y >= p.h) continue;
    for (int s = 0; s < p.s; ++s) {
      const int x = ox * p.stride_w - p.pad_w + s * p.dil_w;
      if (x >= 0 && x < p.w) acc += __ldg(in + y * p.w + x) * __ldg(taps + r * p.s + s);
    }
  }
  const long long o = static_cast<long long>(plane) * p.oh * p.ow + q;
  a.out[o] = conv_epilogue(a, c, o, acc);
}

// Its row: depthwise layers only, an output plane within grid y; OIHW weights.
struct depthwise : KernelDefaults {
  static std::string unsupported(const ConvProblem& p) {
    if (!p.is_depthwise()) return "not depthwise (needs groups = C = K)";
    if (blocks(p.out_h() * p.out_w(), 256) > kMaxGridYZ) return "an output plane too large";
    return {};
  }
  template <class Launch>
  static void launch(Launch& launch, const ConvArgs& a, float* /*workspace*/) {
    const ConvShape& p = a.p;
    launch(LaunchShape{{static_cast<unsigned>(p.n * p.c), blocks(static_cast<long long>(p.oh) * p.ow, 256), 1}, {256, 1, 1}, 0},
           conv_depthwise, a);
  }
};

}  // namespace convlab::cuda
