// cuda.00_naive: one thread per output element.
//
// What it is: the CPU reference's loops turned inside out: thread i computes output i (ow
//   fastest, so neighbouring threads write neighbouring addresses: coalesced stores), summing
//   C/g x R x S products straight from global memory. Every stride, padding, dilation and group
//   count.
// Why it is slow: every input value is fetched from memory R x S x K/g times and every weight
//   once per output pixel; the caches absorb part of it, but the multiprocessors mostly wait on
//   loads. Expect a few percent of the FP32 peak; the point is a GPU baseline that is obviously
//   right.
// Measured: on an H200 (bench/RESULTS.md, batch 32), 1.9 TFLOP/s on mb32ic64ih56oc64oh56kh3ph1,
//   against cuDNN FP32's 24-27.
// Run: build/convlab conv --backend cuda --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cuda.00_naive
#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

__global__ void conv_naive(ConvArgs a) {
  const ConvShape& p = a.p;
  const long long total = static_cast<long long>(p.n) * p.k * p.oh * p.ow;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const auto [n, k, oy, ox, c0] = output_element(p, i);
  const int cpg = p.c / p.groups;
  float acc = 0.0f;
  for (int c = 0; c < cpg; ++c) {
    const float* plane = a.in + (static_cast<long long>(n) * p.c + c0 + c) * p.h * p.w;
    const float* taps = a.weight + (static_cast<long long>(k) * cpg + c) * p.r * p.s;
    for (int r = 0; r < p.r; ++r) {
      const int y = oy * p.stride_h - p.pad_h + r * p.dil_h;
      if (y < 0 || y >= p.h) continue;
      for (int s = 0; s < p.s; ++s) {
        const int x = ox * p.stride_w - p.pad_w + s * p.dil_w;
        if (x >= 0 && x < p.w) acc += plane[y * p.w + x] * taps[r * p.s + s];
      }
    }
  }
  a.out[i] = conv_epilogue(a, k, i, acc);
}

// Its row: every problem, OIHW weights; a thread per output.
struct naive : KernelDefaults {
  template <class Launch>
  static void launch(Launch& launch, const ConvArgs& a, float* /*workspace*/) {
    launch(elementwise_launch(output_pixels(a.p) * a.p.k), conv_naive, a);
  }
};

}  // namespace convlab::cuda
