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
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <random>
#include <string>
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
    {"depthwise narrow rows stacked into tiles, odd last row, channel tail", "g20mb3ic20ih7iw5oc20kh3ph1"},
    {"depthwise narrow rows stacked, stride 2", "g24mb2ic24ih9iw9oc24kh3sh2sw2ph1"},
    {"pointwise deep: channel blocks, row and column tails", "mb2ic300ih7iw9oc13kh1"},
    {"pointwise wide: several row and column blocks", "mb1ic70ih20iw30oc100kh1"},
    {"pointwise strided, odd sizes", "mb2ic20ih15iw17oc10kh1sh2sw3"},
    {"asymmetric stride 2 (TensorFlow's SAME: 0 above, 1 below)", "mb2ic16ih16oc24oh8kh3sh2ph0"},
    {"asymmetric 3x3 (1 above, 0 below; 0 left, 2 right)", "mb2ic16ih12iw10oc16oh11ow10kh3ph1pw0"},
    {"asymmetric depthwise", "g16mb2ic16ih16oc16oh8kh3sh2ph0"},
    {"stride 2 across, 1 down, dilated, rows ending mid-vector", "mb2ic5ih11iw37oc9kh3sh1sw2dh1ph2"},
    {"first layer, 7x7 stride 2, C = 3 (cpu.02's input copy blocked by C)", "mb2ic3ih30iw26oc20kh7sh2ph3"},
    {"pointwise, many channels, 7x7 plane (cpu.02's 1x1 tiles, a channel tail)", "mb1ic200ih7oc40oh7kh1"},
    {"depthwise 14x14 rows ending mid-vector (cpu.07's partial last vector)", "g24mb2ic24ih14oc24oh14kh3ph1"},
    {"stride 2, C = 4 (cpu.02 interleaves the input copy pixel by pixel)", "mb2ic4ih13oc8oh7kh3sh2ph1"},
    {"stride 2, one channel", "mb1ic1ih15oc8oh8kh3sh2ph1"},
    {"depthwise 5x5, stride 2 across, 1 down, odd rows ending mid-vector (cpu.07's phases)",
     "g8mb2ic8ih9iw37oc8kh5sh1sw2ph2"},
    {"depthwise rows of 3 pixels, several to a vector (cpu.07 stores a row's vector into the next rows)",
     "g4mb1ic4ih6iw3oc4kh3ph1"},
    {"pointwise, 5 x 7 planes sharing column panels, channel blocks summed across images (cpu.06)",
     "mb3ic140ih5iw7oc20kh1"},
    {"pointwise, 7 x 8 planes read as one row of 56 pixels, a channel tail (cpu.02)", "mb4ic20ih7iw8oc20kh1"},
    {"pointwise 14 x 14 at batch 1, many channels, a channel tail: cpu.06's rows-first schedule on 2 threads",
     "mb1ic8ih14oc382oh14kh1"},
    {"pointwise 14 x 14 at batch 1, 96 channels: cpu.06's column blocks mirrored, the partial panel's the larger",
     "mb1ic8ih14oc96oh14kh1"},
    {"a batch whose images' copies are over cpu.08's band budget: bands of 7, 7 and 1 rows",
     "mb16ic64ih15iw24oc8kh3ph1"},
    {"3x3 on 7 x 7 planes, 32 outputs, a channel tail: cpu.02's row-pair tiles, an odd last row",
     "mb2ic20ih7oc32oh7kh3ph1"},
    {"stride 2 to 6 x 6 planes, 17 outputs: cpu.02's row-pair tiles stepping two pixels, a k block's tail",
     "mb1ic16ih12oc17oh6kh3sh2ph1"},
    {"1x1 stride 2 to 7 x 7 planes, one k block: cpu.02's row-pair tiles with 1 x 1 taps", "mb2ic24ih14oc16oh7kh1sh2"},
    {"5x5 dilated to 7 x 7 planes: cpu.02's row-pair tiles with run-time tap loops", "mb2ic16ih11oc24oh7kh5ph2dh1"},
    {"3x3 on 4 x 4 planes, 48 outputs: cpu.02's 3 x 9 tile as row pairs of 8", "mb1ic8ih4oc48oh4kh3ph1"},
    {"pointwise, 400 outputs over 3 column blocks: cpu.06's row blocks of 64 panels and one of 3",
     "mb3ic20ih14oc400oh14kh1"},
    {"1 x 3 kernel on a one-row image at batch 1: cpu.02's input copy shared by the threads block by block",
     "mb1ic40ih1iw30oc32oh1ow28kh1kw3"},
    {"3x3 whose F(4x4) weights (36 x 64 x 64 floats) outgrow L2: Winograd chunks sized by their traffic, tiles over the edge",
     "mb4ic60ih5iw6oc60kh3ph1"},
};

// Errors of one kernel on one problem, judged against its error bound.
struct Comparison {
  std::size_t outside_bound = 0;
  double max_abs = 0, max_rel = 0, diff2 = 0, ref2 = 0;
  void add(const Comparison& o) {
    outside_bound += o.outside_bound;
    max_abs = std::max(max_abs, o.max_abs);
    max_rel = std::max(max_rel, o.max_rel);
    diff2 += o.diff2;
    ref2 += o.ref2;
  }
  double normalised() const { return ref2 > 0 ? std::sqrt(diff2 / ref2) : 0; }
};

Comparison compare_with_reference(const KernelInfo& kernel, const test::Executor& where, const ConvProblem& p,
                                  Activation activation, std::uint64_t stream) {
  const KernelInfo& reference = *find_kernel("cpu.00_reference");
  const auto in = test::random_values(p.input_elems(), stream);
  const auto w = test::random_values(p.weight_elems(), stream + 1);
  const auto b = test::random_values(p.k, stream + 2);
  const auto want = test::run_kernel(reference, p, in, w, b, activation);
  const auto magnitude = test::run_kernel(reference, p, test::absolute(in), test::absolute(w), test::absolute(b),
                                          Activation::none);
  const auto got = test::run_kernel(kernel, where, p, in, w, b, activation);
  REQUIRE(got.size() == want.size());
  const double m = static_cast<double>(p.c_per_group() * p.r * p.s) + 1;  // + the bias add
  const double u = std::ldexp(1.0, -24);
  const double gamma = kernel.error_scale * m * u / (1 - m * u);
  Comparison c;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double bound = gamma * magnitude[i] + u * std::fabs(want[i]);  // + the final rounding
    if (!(d <= bound)) ++c.outside_bound;  // NaN counts as outside
    c.max_abs = std::max(c.max_abs, d);
    c.max_rel = std::max(c.max_rel, d / std::max(static_cast<double>(std::fabs(want[i])), 1e-3));
    c.diff2 += d * d;
    c.ref2 += static_cast<double>(want[i]) * want[i];
  }
  return c;
}

// Every kernel of `backend` but the oracle (tested against hand-computed values in
// tests/test_reference_conv.cpp, never against itself) on the labelled shapes. Returns how many
// comparisons ran, so that a run of none fails.
std::size_t check_labelled_shapes(Backend backend) {
  std::size_t compared = 0;
  for (const KernelInfo& kernel : all_kernels()) {
    if (kernel.backend != backend || kernel.id == "cpu.00_reference") continue;
    constexpr Activation kActivations[] = {Activation::none, Activation::relu, Activation::relu6};
    for (std::size_t a = 0; a < std::size(kActivations); ++a) {
      const Activation activation = kActivations[a];
      std::uint64_t stream = 100;
      for (std::size_t shape_index = 0; shape_index < std::size(kSweep); ++shape_index) {
        const SweepShape& shape = kSweep[shape_index];
        const ConvProblem p = parse_problem(shape.descriptor);
        if (!kernel.supports(p)) continue;
        stream += 3;
        for (const test::Executor& where : test::executors(kernel)) {
          // In the short (sanitized or emulated) run the GPU emulators take each shape with one of
          // the three activations, in turn; the native run takes all three. Under the sanitizers
          // these were the suite's two longest tests (CUDA 317 s, Metal 119 s: now 113 s together).
          if (test::short_run() && where.gpu != nullptr && shape_index % std::size(kActivations) != a) continue;
          CAPTURE(kernel.id);
          CAPTURE(where.name);
          const std::string role = shape.role, descriptor = shape.descriptor;  // doctest prints a char* as a pointer
          CAPTURE(role);
          CAPTURE(descriptor);
          CAPTURE(to_string(activation));
          const Comparison c = compare_with_reference(kernel, where, p, activation, stream);
          CHECK_MESSAGE(c.outside_bound == 0, fmt::format("{} outputs outside the error bound", c.outside_bound));
          ++compared;
        }
      }
    }
  }
  return compared;
}

// Every kernel of `backend` but the oracle on sweep_size() random problems it supports.
void check_random_problems(Backend backend) {
  const std::size_t wanted = test::sweep_size();
  for (const KernelInfo& kernel : all_kernels()) {
    if (kernel.backend != backend || kernel.id == "cpu.00_reference") continue;
    const std::vector<test::Executor> executors = test::executors(kernel);
    REQUIRE_MESSAGE(!executors.empty(), fmt::format("{}: no executor here, so no problem could be tested", kernel.id));
    std::mt19937 rng(2024);
    Comparison total;
    std::size_t tested = 0, drawn = 0, runs = 0, padded = 0, asymmetric = 0;
    while (tested < wanted && drawn < 100 * wanted) {
      const ConvProblem p = test::random_problem(rng);
      ++drawn;
      if (!kernel.supports(p)) continue;
      padded += p.has_padding() ? 1 : 0;
      asymmetric += p.pad_bottom_delta != 0 || p.pad_right_delta != 0 ? 1 : 0;
      const Activation activation = tested % 3 == 0 ? Activation::relu : Activation::none;
      for (const test::Executor& where : executors) {
        const Comparison c = compare_with_reference(kernel, where, p, activation, 1000 + drawn * 3);
        CHECK_MESSAGE(c.outside_bound == 0,
                      fmt::format("{} ({}) on {}: {} outputs outside the error bound (max abs {:.3g})", kernel.id,
                                  where.name, to_string(p), c.outside_bound, c.max_abs));
        total.add(c);
        ++runs;
      }
      ++tested;
    }
    std::printf("%-24s %5zu problems (%4zu asymmetric), %5zu runs: max abs %.3g, max rel %.3g, normalised %.3g\n",
                std::string(kernel.id).c_str(), tested, asymmetric, runs, total.max_abs, total.max_rel, total.normalised());
    // A kernel that pads pads asymmetrically too (ONNX's pads): the sweep must have tried it.
    if (padded > wanted / 10) CHECK_MESSAGE(asymmetric > 0, fmt::format("{}: no asymmetric problem tested", kernel.id));
    CHECK_MESSAGE(tested == wanted, fmt::format("{} supports only {} of {} random problems drawn", kernel.id, tested, drawn));
  }
}
}  // namespace

// One test case per backend, so that a backend whose kernels cannot run here is reported as
// skipped, with the reason, and never counted as passed.
TEST_CASE("kernels: every CPU kernel matches cpu.00_reference on the labelled shapes") {
  CHECK(check_labelled_shapes(Backend::cpu) > 0);
}
TEST_CASE("kernels: every CUDA kernel matches cpu.00_reference on the labelled shapes, wherever it runs") {
  if (!test::skipped_here(Backend::cuda)) CHECK(check_labelled_shapes(Backend::cuda) > 0);
}
TEST_CASE("kernels: every Metal kernel matches cpu.00_reference on the labelled shapes, wherever it runs") {
  if (!test::skipped_here(Backend::metal)) CHECK(check_labelled_shapes(Backend::metal) > 0);
}

TEST_CASE("kernels: randomized sweep, every CPU kernel on at least 300 problems it supports") {
  check_random_problems(Backend::cpu);
}
TEST_CASE("kernels: randomized sweep, every CUDA kernel on at least 300 problems it supports, wherever it runs") {
  if (!test::skipped_here(Backend::cuda)) check_random_problems(Backend::cuda);
}
TEST_CASE("kernels: randomized sweep, every Metal kernel on at least 300 problems it supports, wherever it runs") {
  if (!test::skipped_here(Backend::metal)) check_random_problems(Backend::metal);
}

TEST_CASE("kernels: deterministic kernels give bit-identical outputs on repeated runs") {
  const ConvProblem p = parse_problem("mb2ic16ih16oc32oh16kh3ph1");
  const auto in = test::random_values(p.input_elems(), 1);
  const auto w = test::random_values(p.weight_elems(), 2);
  const auto b = test::random_values(p.k, 3);
  for (const KernelInfo& kernel : all_kernels()) {
    if (!kernel.deterministic || !kernel.supports(p)) continue;
    for (const test::Executor& where : test::executors(kernel)) {
      CAPTURE(kernel.id);
      CAPTURE(where.name);
      const auto first = test::run_kernel(kernel, where, p, in, w, b, Activation::relu);
      for (int i = 0; i < 3; ++i) CHECK(test::run_kernel(kernel, where, p, in, w, b, Activation::relu) == first);
    }
  }
}

TEST_CASE("kernels: the registry is well formed") {
  CHECK(find_kernel("cpu.00_reference") != nullptr);
  CHECK(find_kernel("cpu.99_nothing") == nullptr);
  for (const KernelInfo& k : all_kernels()) {
    CAPTURE(k.id);
    if (k.baseline) {
      CHECK(k.id.find('.') != std::string_view::npos);  // <library>.<op>, e.g. onednn.conv
    } else {
      const std::string prefix = std::string(to_string(k.backend)) + ".";
      CHECK(k.id.substr(0, prefix.size()) == prefix);  // <backend>.<NN>_<technique>
      CHECK(k.id.size() > prefix.size() + 3);
    }
    CHECK(!k.summary.empty());
    CHECK(find_kernel(k.id) == &k);  // ids are unique
  }
}

TEST_CASE("kernels: NaN passes through every kernel's activation, as through PyTorch's") {
  // One NaN input pixel: every output that reads it must be NaN, whatever the activation; a ReLU
  // that turned NaN into 0 would hide a broken input or kernel. Kernels that compute each output
  // on its own (error_scale 1) make no other output NaN; Winograd's tile transforms multiply the
  // NaN by zero coefficients too, so it may spread within its output tile. Baselines are not
  // ours to fix (oneDNN's ReLU post-op maps NaN to 0).
  const ConvProblem p = parse_problem("mb1ic3ih9oc20oh9kh3ph1");
  auto in = test::random_values(p.input_elems(), 7);
  in[4 * 9 + 4] = std::numeric_limits<float>::quiet_NaN();  // channel 0, pixel (4, 4)
  const auto w = test::random_values(p.weight_elems(), 8);
  const auto b = test::random_values(p.k, 9);
  for (const KernelInfo& kernel : all_kernels()) {
    if (kernel.baseline || !kernel.supports(p)) continue;
    for (const test::Executor& where : test::executors(kernel)) {
      for (Activation activation : {Activation::relu, Activation::relu6}) {
        CAPTURE(kernel.id);
        CAPTURE(where.name);
        CAPTURE(to_string(activation));
        const auto out = test::run_kernel(kernel, where, p, in, w, b, activation);
        std::size_t hidden = 0, spread = 0;
        for (std::int64_t k = 0; k < p.k; ++k)
          for (std::int64_t y = 0; y < 9; ++y)
            for (std::int64_t x = 0; x < 9; ++x) {
              const bool reads_nan = std::abs(y - 4) <= 1 && std::abs(x - 4) <= 1;
              const bool is_nan = std::isnan(out[(k * 9 + y) * 9 + x]);
              hidden += reads_nan && !is_nan;
              spread += !reads_nan && is_nan;
            }
        CHECK(hidden == 0);
        if (kernel.error_scale == 1.0) CHECK(spread == 0);
      }
    }
  }
}
