// cuda.22_int8_direct: cuda.00's one thread per output, in int8; every group count.
//
// What it is: the int8 oracle's loops on the GPU. Thread i computes output i (ow fastest, so
//   neighbouring threads read neighbouring input bytes and write neighbouring output bytes),
//   summing C/g x R x S products of (x - 128) and the s8 weight straight from global memory, then
//   the compensation and the requantisation every int8 GPU kernel shares
//   (kernels/cuda/int8_gemm.cuh), so its bytes are the oracle's.
// Why it exists: cuda.20 and cuda.21 are GEMMs over one group; depthwise layers (MobileNet's) and
//   any other grouped conv need a kernel, and a depthwise layer has only R x S taps per output,
//   too few for a GEMM tile. One thread per output reads each tap's byte once per output, from
//   cache most of the time: a depthwise layer moves little data either way.
// Measured: not yet on a GPU (checked on the CPU emulator only).
// Run: build/convlab conv --backend cuda --precision int8 --problem g32mb32ic32ih32oc32oh32kh3ph1 --kernel cuda.22_int8_direct
#include "kernels/cuda/int8_gemm.cuh"

namespace convlab::cuda {

__global__ void conv_int8_direct(Int8ConvArgs a) {
  const ConvShape& p = a.p;
  const long long total = static_cast<long long>(p.n) * p.k * p.oh * p.ow;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const auto [n, k, oy, ox, c0] = output_element(p, i);
  const int cpg = p.c / p.groups;
  int acc = 0;
  for (int c = 0; c < cpg; ++c) {
    const unsigned char* plane = a.in + (static_cast<long long>(n) * p.c + c0 + c) * p.h * p.w;
    const signed char* taps = a.weight + (static_cast<long long>(k) * cpg + c) * p.r * p.s;
    for (int r = 0; r < p.r; ++r) {
      const int y = oy * p.stride_h - p.pad_h + r * p.dil_h;
      for (int s = 0; s < p.s; ++s) {
        const int x = ox * p.stride_w - p.pad_w + s * p.dil_w;
        // A padded tap is the zero point (the real 0): the compensation cancels it, as in the GEMMs.
        const int v = y >= 0 && y < p.h && x >= 0 && x < p.w ? __ldg(plane + y * p.w + x) : a.in_zero_point;
        acc += (v - 128) * taps[r * p.s + s];
      }
    }
  }
  a.out[i] = int8_requantize(a, k, acc);
}

// Its row: every problem; OIHW weights as given.
struct int8_direct {
  static std::string unsupported(const ConvProblem&) { return {}; }
  static std::vector<signed char> weights(const ConvProblem&, std::span<const std::int8_t> oihw) {
    return {oihw.begin(), oihw.end()};
  }
  template <class Launch>
  static void launch(Launch& launch, const Int8ConvArgs& a) {
    launch(elementwise_launch(output_pixels(a.p) * a.p.k), conv_int8_direct, a);
  }
};

}  // namespace convlab::cuda
