// The accuracy of the fast kernels, measured: how much of the FP32 summation bound each kernel
// uses on shapes chosen to stress transforms (few channels: the transforms' rounding dominates;
// many channels: the GEMM's does) and the blocked kernels' tails, for signed data and for
// positive data (no cancellation in the direct sum, so the bound is tight and a transform's
// cancellations show).
// Prints, per kernel and shape: max |error|, max |error| / max |exact|, and the worst
// |error| / bound with error_scale 1 ("bound used") — the figure behind each error_scale in
// kernels/cpu/cpu_kernels.inc. Run alone: build/tests/convlab_tests -tc="*accuracy*" -s
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "conv_test_util.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/kernel.hpp"

using namespace convlab;

namespace {

struct Accuracy {
  double max_abs = 0, max_exact = 0, bound_used = 0;
};

// Error of `got` against the oracle's `want`, with `magnitude` = sum|x*w| + |b| per output.
Accuracy measure(const ConvProblem& p, const std::vector<float>& got, const std::vector<float>& want,
                 const std::vector<float>& magnitude) {
  const double m = static_cast<double>(p.c_per_group() * p.r * p.s) + 1;
  const double u = std::ldexp(1.0, -24);
  const double gamma = m * u / (1 - m * u);
  Accuracy a;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    a.max_abs = std::max(a.max_abs, err);
    a.max_exact = std::max(a.max_exact, std::fabs(static_cast<double>(want[i])));
    a.bound_used = std::max(a.bound_used, err / (gamma * magnitude[i] + u * std::fabs(want[i])));
  }
  return a;
}

const char* const kShapes[] = {
    "mb2ic1ih28oc6oh28kh3ph1",      // one input channel: transforms dominate the error
    "mb2ic3ih32oc16oh32kh3ph1",     // first layer
    "mb3ic5ih13iw11oc7oh11ow9kh3",  // odd sizes, no padding: partial tiles
    "mb1ic8ih10oc8oh12kh3ph2",      // padding 2
    "mb2ic32ih8oc64oh8kh3ph1",      // deep layer
    "mb1ic64ih28oc64oh28kh3ph1",    // the benchmark layer's channels
    "mb1ic256ih14oc32oh14kh3ph1",   // many channels: the GEMM's summation dominates
    // Tails and schedules of the blocked kernels (block = SIMD width, 16 with AVX-512):
    "mb5ic20ih9iw13oc40oh9ow13kh3ph1",  // C and K tails (40 = a pair of blocks + one); batch 5
                                         // shares out unevenly, so images are split by rows
    "mb8ic16ih17oc17oh21kh3ph3",        // padding larger than the kernel; K = one block + 1
    "mb2ic8ih15iw12oc16oh6ow5kh3kw2sh2sw2dh1dw1",  // stride 2, dh1 (PyTorch dilation 2), non-square kernel
};

}  // namespace

TEST_CASE("accuracy: fast kernels stay within error_scale x the FP32 bound, with the margin reported") {
  const KernelInfo& reference = *find_kernel("cpu.00_reference");
  std::map<std::string_view, double> worst;  // per kernel
  for (const char* descriptor : kShapes) {
    const ConvProblem p = parse_problem(descriptor);
    for (const bool positive : {false, true}) {
      auto in = test::random_values(p.input_elems(), 7);
      auto w = test::random_values(p.weight_elems(), 8);
      auto b = test::random_values(p.k, 9);
      if (positive) in = test::absolute(in), w = test::absolute(w), b = test::absolute(b);
      // The oracle once per shape and sign, not once per kernel: it is most of this test's time.
      const auto want = test::run_kernel(reference, p, in, w, b, Activation::none);
      const auto magnitude =
          test::run_kernel(reference, p, test::absolute(in), test::absolute(w), test::absolute(b), Activation::none);
      for (const KernelInfo& kernel : all_kernels()) {
        if (&kernel == &reference || !kernel.supports(p)) continue;
        for (const test::Executor& where : test::executors(kernel)) {
          // The GPU emulator's runs are the native suite's: a short (sanitized or emulated) run
          // meets those kernels' memory use in the GPU tests, and their accuracy is the same.
          if (test::short_run() && where.gpu != nullptr) continue;
          CAPTURE(kernel.id);
          CAPTURE(where.name);
          CAPTURE(descriptor);
          CAPTURE(positive);
          const Accuracy a = measure(p, test::run_kernel(kernel, where, p, in, w, b, Activation::none), want, magnitude);
          MESSAGE(fmt::format("{} ({}) {} {}: max |err| {:.3g}, normalised {:.3g}, bound used {:.3f} (error_scale {})",
                              kernel.id, where.name, descriptor, positive ? "positive" : "signed", a.max_abs,
                              a.max_abs / a.max_exact, a.bound_used, kernel.error_scale));
          CHECK(a.bound_used <= kernel.error_scale);
          worst[kernel.id] = std::max(worst[kernel.id], a.bound_used);
        }
      }
    }
  }
  for (const KernelInfo& kernel : all_kernels())
    if (worst.contains(kernel.id))
      MESSAGE(fmt::format("{}: worst bound used {:.3f} of error_scale {}", kernel.id, worst[kernel.id], kernel.error_scale));
}
