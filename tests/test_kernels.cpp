// Every listed kernel of every available backend against cpu.00_reference on a shape sweep
// labelled by role. Generated from the registry: a kernel is tested the moment it is listed.
//
// Tolerance: for an FP32 kernel summing m = C/g*R*S products in any order, the classic bound is
// |out - exact| <= gamma_m * (sum|x*w| + |bias|), gamma_m = m*u/(1 - m*u), u = 2^-24. The
// reference is the exactly rounded result (double accumulation), so each output is checked
// against that bound computed per element: sum|x*w| + |b| is the reference run on |x|, |w|, |b|.
// Kernels that transform the problem (Winograd) scale the bound by their list entry's
// error_scale, whose reason is written beside it in the kernel list.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "conv_test_util.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/kernel.hpp"

using namespace convlab;

namespace {
struct SweepShape {
  const char* role;
  const char* descriptor;
};

const SweepShape kSweep[] = {
    {"first layer (3 input channels)", "mb2ic3ih32oc16oh32kh3ph1"},
    {"deep layer", "mb2ic32ih8oc64oh8kh3ph1"},
    {"strided downsample", "mb2ic16ih16oc32oh8kh3sh2ph1"},
    {"shortcut 1x1 stride 2", "mb2ic16ih16oc32oh8kh1sh2"},
    {"pointwise", "mb2ic64ih8oc128oh8kh1"},
    {"depthwise", "g32mb2ic32ih16oc32oh16kh3ph1"},
    {"depthwise strided", "g64mb2ic64ih16oc64oh8kh3sh2ph1"},
    {"grouped", "g4mb2ic16ih9oc8oh9kh3ph1"},
    {"dilated", "mb2ic8ih12oc8oh12kh3dh1ph2"},
    {"5x5 (LeNet)", "mb2ic1ih28oc6oh28kh5ph2"},
    {"odd sizes, no padding", "mb3ic5ih13iw11oc7oh11ow9kh3"},
    {"batch 1", "mb1ic16ih15oc24oh15kh3ph1"},
    {"depthwise wide rows, 5x3 dilated, stride 2", "g8mb2ic8ih11iw70oc8kh5kw3sw2ph2pw1dw1"},
    {"depthwise stride 3, no padding", "g4mb1ic4ih9iw100oc4kh3sh3sw3"},
    {"pointwise deep: channel blocks, row and column tails", "mb2ic300ih7iw9oc13kh1"},
    {"pointwise wide: several row and column blocks", "mb1ic70ih20iw30oc100kh1"},
    {"pointwise strided, odd sizes", "mb2ic20ih15iw17oc10kh1sh2sw3"},
};
}  // namespace

TEST_CASE("kernels: every available kernel matches cpu.00_reference on the shape sweep") {
  const KernelInfo& reference = *find_kernel("cpu.00_reference");
  for (const KernelInfo& kernel : all_kernels()) {
    if (!backend_status(kernel.backend).available) continue;
    for (Activation activation : {Activation::none, Activation::relu, Activation::relu6}) {
      std::uint64_t stream = 100;
      for (const SweepShape& shape : kSweep) {
        const ConvProblem p = parse_problem(shape.descriptor);
        CAPTURE(kernel.id);
        CAPTURE(shape.role);
        CAPTURE(shape.descriptor);
        CAPTURE(to_string(activation));
        if (!kernel.supports(p)) continue;
        const auto in = test::random_values(p.input_elems(), stream++);
        const auto w = test::random_values(p.weight_elems(), stream++);
        const auto b = test::random_values(p.k, stream++);
        const auto want = test::run_kernel(reference, p, in, w, b, activation);
        const auto magnitude =
            test::run_kernel(reference, p, test::absolute(in), test::absolute(w), test::absolute(b), Activation::none);
        const auto got = test::run_kernel(kernel, p, in, w, b, activation);
        REQUIRE(got.size() == want.size());
        const double m = static_cast<double>(p.c_per_group() * p.r * p.s) + 1;  // + the bias add
        const double u = std::ldexp(1.0, -24);
        const double gamma = kernel.error_scale * m * u / (1 - m * u);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
          const double bound = gamma * magnitude[i] + u * std::fabs(want[i]);  // + the final rounding
          if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= bound)) ++bad;
        }
        CHECK_MESSAGE(bad == 0, fmt::format("{} of {} outputs outside the FP32 error bound", bad, got.size()));
      }
    }
  }
}

TEST_CASE("kernels: deterministic kernels give bit-identical outputs on repeated runs") {
  const ConvProblem p = parse_problem("mb2ic16ih16oc32oh16kh3ph1");
  const auto in = test::random_values(p.input_elems(), 1);
  const auto w = test::random_values(p.weight_elems(), 2);
  const auto b = test::random_values(p.k, 3);
  for (const KernelInfo& kernel : all_kernels()) {
    if (!kernel.deterministic || !backend_status(kernel.backend).available || !kernel.supports(p)) continue;
    CAPTURE(kernel.id);
    const auto first = test::run_kernel(kernel, p, in, w, b, Activation::relu);
    for (int i = 0; i < 3; ++i) CHECK(test::run_kernel(kernel, p, in, w, b, Activation::relu) == first);
  }
}

TEST_CASE("kernels: the registry is well formed") {
  CHECK(find_kernel("cpu.00_reference") != nullptr);
  CHECK(find_kernel("cpu.99_nothing") == nullptr);
  for (const KernelInfo& k : all_kernels()) {
    CAPTURE(k.id);
    const std::string prefix = std::string(to_string(k.backend)) + ".";
    CHECK(k.id.substr(0, prefix.size()) == prefix);  // <backend>.<NN>_<technique>
    CHECK(k.id.size() > prefix.size() + 3);
    CHECK(!k.summary.empty());
    CHECK(find_kernel(k.id) == &k);  // ids are unique
  }
}
