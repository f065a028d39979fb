// cpu.01_im2col_eigen, cpu.05_depthwise_xsimd and cpu.06_pointwise_xsimd: what the generic oracle
// sweep (test_kernels.cpp) does not check: the reasons they give for problems they refuse, and
// bit-identical repeats on problems the sweep's determinism case (a 3x3 layer) does not reach.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "conv_test_util.hpp"
#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/cpu/direct_xsimd.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/microkernel.hpp"
#include "bench/commands/cli_args.hpp"

using namespace convlab;

namespace {
const KernelInfo& kernel(const char* id) {
  const KernelInfo* k = find_kernel(id);
  REQUIRE(k != nullptr);
  return *k;
}

// The reason names what is wrong, and plan refuses the problem instead of computing garbage.
void check_refuses(const KernelInfo& k, const char* descriptor, const char* reason_fragment) {
  CAPTURE(k.id);
  CAPTURE(descriptor);
  const ConvProblem p = parse_problem(descriptor);
  const std::string why = k.unsupported(p);
  CHECK(why.find(reason_fragment) != std::string::npos);
  const auto w = test::random_values(p.weight_elems(), 1);
  CHECK_THROWS_AS(k.plan(p, ConvWeights{w, {}}, Epilogue{}), InputError);
}

void check_repeats(const KernelInfo& k, const char* descriptor) {
  CAPTURE(k.id);
  CAPTURE(descriptor);
  const ConvProblem p = parse_problem(descriptor);
  REQUIRE(k.supports(p));
  const auto in = test::random_values(p.input_elems(), 1);
  const auto w = test::random_values(p.weight_elems(), 2);
  const auto b = test::random_values(p.k, 3);
  const auto first = test::run_kernel(k, p, in, w, b, Activation::relu6);
  for (int i = 0; i < 3; ++i) CHECK(test::run_kernel(k, p, in, w, b, Activation::relu6) == first);
}
}  // namespace

TEST_CASE("cpu.05_depthwise_xsimd: refuses every problem that is not depthwise with multiplier 1") {
  const KernelInfo& k = kernel("cpu.05_depthwise_xsimd");
  check_refuses(k, "mb2ic8ih8oc8kh3ph1", "groups == ic == oc");
  check_refuses(k, "g4mb2ic4ih8oc8kh3ph1", "channel multiplier 1");
  check_refuses(k, "g2mb2ic8ih8oc8kh3ph1", "got g2 ic8 oc8");
  CHECK(k.supports(parse_problem("g16mb1ic16ih7iw40oc16kh5kw3sh2sw3ph2pw1dh1")));
}

TEST_CASE("cpu.06_pointwise_xsimd: refuses kernels other than 1x1, groups and padding") {
  const KernelInfo& k = kernel("cpu.06_pointwise_xsimd");
  check_refuses(k, "mb2ic8ih8oc8kh3ph1", "1x1 kernels only, got kh3 kw3");
  check_refuses(k, "mb2ic8ih8oc8kh1kw3", "got kh1 kw3");
  check_refuses(k, "g2mb2ic8ih8oc8kh1", "groups 1 only, got g2");
  check_refuses(k, "mb2ic8ih8oc8kh1ph1", "padding 0 only, got 1 above, 1 below, 1 left, 1 right");
  check_refuses(k, "mb2ic8ih8oc8oh9kh1ph0", "padding 0 only, got 0 above, 1 below, 0 left, 1 right");
  CHECK(k.supports(parse_problem("mb2ic8ih9oc8kh1sh2")));
}

TEST_CASE("cpu.07 and cpu.08: refuse strides across over 2 and what else they cannot run, by name") {
  const KernelInfo& dw = kernel("cpu.07_depthwise_rows");
  check_refuses(dw, "g4mb1ic4ih9iw100oc4kh3sh3sw3", "stride across 1 or 2 and dilation 1 only");
  check_refuses(dw, "g8mb2ic8ih11iw70oc8kh5kw3sw2ph2pw1dw1", "stride across 1 or 2 and dilation 1 only");
  check_refuses(dw, "mb2ic8ih8oc8kh3ph1", "depthwise only");
  CHECK(dw.supports(parse_problem("g8mb2ic8ih9iw37oc8kh5sh1sw2ph2")));
  CHECK(dw.supports(parse_problem("g8mb2ic8ih16oc8kh3sh3sw1ph1")));
  const KernelInfo& rows = kernel("cpu.08_direct_rows");
  check_refuses(rows, "mb2ic4ih9iw20oc8kh3sh1sw3", "stride across 1 or 2 only, got sw3");
  check_refuses(rows, "g2mb2ic8ih8oc8kh3ph1", "groups 1 only, got g2");
  CHECK(rows.supports(parse_problem("mb2ic3ih30iw26oc20kh7sh2ph3")));
}

TEST_CASE("cpu.01_im2col_eigen: supports every problem") {
  const KernelInfo& k = kernel("cpu.01_im2col_eigen");
  for (const char* d : {"g32mb2ic32ih16oc32oh16kh3ph1", "g4mb2ic16ih9oc8oh9kh3ph1", "mb2ic8ih12oc8oh12kh3dh1ph2",
                        "mb2ic8ih9oc8kh1sh2"})
    CHECK(k.unsupported(parse_problem(d)).empty());
}

TEST_CASE("cpu.01/05/06: bit-identical repeats on their own problems (tails, strides, channel blocks)") {
  const int threads = omp_get_max_threads();
  for (int t : {1, 2}) {
    omp_set_num_threads(t);
    // Batch 1 (Eigen threads the GEMM) and batch 3 (OpenMP over images): both paths of cpu.01.
    check_repeats(kernel("cpu.01_im2col_eigen"), "g2mb1ic8ih13iw17oc12kh3ph1");
    check_repeats(kernel("cpu.01_im2col_eigen"), "g2mb3ic8ih13iw17oc12kh3ph1");
    check_repeats(kernel("cpu.05_depthwise_xsimd"), "g8mb2ic8ih11iw70oc8kh5kw3sw2ph2pw1dw1");
    check_repeats(kernel("cpu.05_depthwise_xsimd"), "g20mb3ic20ih7iw5oc20kh3ph1");  // stacked rows
    check_repeats(kernel("cpu.06_pointwise_xsimd"), "mb2ic300ih7iw9oc13kh1");
    check_repeats(kernel("cpu.06_pointwise_xsimd"), "mb2ic20ih15iw17oc10kh1sh2sw3");
  }
  omp_set_num_threads(threads);
}

TEST_CASE("cpu.auto: the layout changes of the kernel it chose are its own, so `layout ms` is reported") {
  // Problems where a layout-changing kernel (cpu.02, cpu.05: NCHWc) is among the candidates; whatever
  // cpu.auto picks, it must answer as that kernel does when asked alone.
  for (const char* descriptor : {"mb2ic32ih16oc32oh16kh3ph1", "g32mb2ic32ih16oc32oh16kh3ph1", "mb1ic3ih8oc8oh8kh3ph1"}) {
    CAPTURE(descriptor);
    const ConvProblem p = parse_problem(descriptor);
    const auto w = test::random_values(p.weight_elems(), 1);
    const auto chosen = kernel("cpu.auto").plan(p, ConvWeights{w, {}}, Epilogue{});
    const std::string id = chosen->chosen_kernel();
    CAPTURE(id);
    const auto alone = kernel(id.c_str()).plan(p, ConvWeights{w, {}}, Epilogue{});
    CHECK(chosen->changes_layout() == alone->changes_layout());
    if (!alone->changes_layout()) continue;
    // And it runs them: the output of the layout changes alone is what the chosen kernel's is.
    const auto in = test::random_values(p.input_elems(), 2);
    std::vector<float> a(static_cast<std::size_t>(p.output_elems()), 0.5f), b = a;
    std::vector<unsigned char> workspace(std::max(chosen->workspace_bytes(), alone->workspace_bytes()) + 64);
    chosen->run_layout_changes_only(in.data(), a.data(), workspace.data());
    alone->run_layout_changes_only(in.data(), b.data(), workspace.data());
    CHECK(a == b);
  }
}

TEST_CASE("kernels: a baseline left out of this build is said to be not built, never 'unknown'") {
  for (const AbsentKernel& a : absent_kernels()) {
    CHECK(find_kernel(a.id) == nullptr);
    CHECK(find_int8_kernel(a.id) == nullptr);
    for (const Precision precision : {Precision::fp32, Precision::int8})
      CHECK_THROWS_WITH_AS(parse_kernel_ids(std::string(a.id), Backend::cpu, precision),
                           doctest::Contains((std::string(a.id) + " is not built").c_str()), InputError);
  }
#ifdef CONVLAB_WITH_ONEDNN
  CHECK(absent_kernels().empty());
#else
  CHECK(absent_kernels().size() == 2);  // onednn.conv and onednn.conv_int8
#endif
}

TEST_CASE("cpu.02: on large layers plan times its register tiles where the registers allow several, and names the one it keeps") {
  // 32 vector registers (AVX-512, NEON) allow 4 x 7, 3 x 9 and 2 x 14; 16 (AVX2, SSE) only 2 x 6,
  // and plan then measures nothing (explain stays empty). 58 MFLOP per image: above the threshold.
  const ConvProblem p = parse_problem("mb2ic64ih28oc64oh28kh3ph1");
  const auto w = test::random_values(p.weight_elems(), 1);
  const auto planned = kernel("cpu.02_direct_xsimd").plan(p, ConvWeights{w, {}}, Epilogue{});
  const std::string why = planned->explain();
  if (why.empty()) {
    MESSAGE("SKIPPED: this build's register file allows one register tile (AVX2 or SSE): nothing to choose");
    return;
  }
  CAPTURE(why);
  CHECK(why.rfind("register tile ", 0) == 0);
  CHECK(why.find("4 x 7 ") != std::string::npos);
  CHECK(why.find("2 x 14 ") != std::string::npos);
  // Whichever tile won, the output is the oracle's (the sweep checks every tile on small layers).
  const auto in = test::random_values(p.input_elems(), 2);
  std::vector<float> got(static_cast<std::size_t>(p.output_elems())), want = got;
  std::vector<unsigned char> workspace(planned->workspace_bytes() + 64);
  planned->run(in.data(), got.data(), workspace.data());
  const auto oracle = kernel("cpu.00_reference").plan(p, ConvWeights{w, {}}, Epilogue{});
  oracle->run(in.data(), want.data(), nullptr);
  for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(std::abs(got[i] - want[i]) <= 1e-3f * (1 + std::abs(want[i])));
}

TEST_CASE("cpu.02: plan times the tiles on a batch-1 1 x 1 layer of ImageNet's size (2 x 14 won there by 1.4x) and on 4 images a thread at batch 32; not on a tiny layer") {
  const auto explain = [](const char* descriptor) {
    const ConvProblem p = parse_problem(descriptor);
    const auto w = test::random_values(p.weight_elems(), 1);
    return kernel("cpu.02_direct_xsimd").plan(p, ConvWeights{w, {}}, Epilogue{})->explain();
  };
  if (explain("mb2ic64ih28oc64oh28kh3ph1").empty()) {
    MESSAGE("SKIPPED: this build's register file allows one register tile (AVX2 or SSE): nothing to choose");
    return;
  }
  // mobilenet-v2's features.14.conv.2: 9 MFLOP per image, once under the threshold and left on 4 x 7.
  const std::string why = explain("mb1ic576ih7oc160oh7kh1");
  CAPTURE(why);
  CHECK(why.find("interleaved rounds") != std::string::npos);
  CHECK(why.find("2 x 14 ") != std::string::npos);
  // 65 kFLOP, a few microseconds a run: the first choice, unmeasured.
  CHECK(explain("mb1ic32ih4oc64oh4kh1").find("register tile") == std::string::npos);
  // At batch 32 on 4 images a thread: what a tile does over a batch shows only over several images.
  const int threads = omp_get_max_threads();
  const std::string batch = explain("mb32ic64ih14oc64oh14kh3ph1");
  CAPTURE(batch);
  CHECK(batch.find(fmt::format("on {} image(s)", std::min(32, 4 * threads))) != std::string::npos);
}

TEST_CASE("cpu.02: every register tile, in place and from the reorder, gives the oracle's outputs on 1 x 1 layers of many output channels") {
  // Plan measures which is fastest, so a test cannot count on reaching each: K over 64 in place
  // (several groups of output-channel blocks reading the NCHW planes) was reached only so.
  for (const char* descriptor : {"mb1ic64ih14oc96oh14kh1", "mb2ic32ih7oc160oh7kh1", "mb1ic40ih28oc72oh28kh1"}) {
    const ConvProblem p = parse_problem(descriptor);
    const auto in = test::random_values(p.input_elems(), 1);
    const auto w = test::random_values(p.weight_elems(), 2);
    const auto b = test::random_values(p.k, 3);
    std::vector<float> want(static_cast<std::size_t>(p.output_elems()));
    kernel("cpu.00_reference").plan(p, ConvWeights{w, b}, Epilogue{})->run(in.data(), want.data(), nullptr);
    for (int per_tile = cpu::kMaxKBlocks; per_tile >= std::max(1, cpu::kMaxKBlocks / 2); --per_tile)
      for (const bool in_place : {true, false}) {
        CAPTURE(descriptor);
        CAPTURE(per_tile);
        CAPTURE(in_place);
        const auto planned = cpu::direct_xsimd_plan_as(p, ConvWeights{w, b}, Epilogue{}, per_tile, in_place);
        CHECK(planned->changes_layout() == !in_place);  // each of these layers may be read in place
        std::vector<float> got(want.size());
        std::vector<unsigned char> workspace(planned->workspace_bytes() + 64);
        planned->run(in.data(), got.data(), workspace.data());
        for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(std::abs(got[i] - want[i]) <= 1e-4f * (1 + std::abs(want[i])));
      }
  }
  const ConvProblem p = parse_problem("mb1ic8ih4oc16oh4kh1");
  const auto w = test::random_values(p.weight_elems(), 1);
  CHECK_THROWS_WITH_AS(cpu::direct_xsimd_plan_as(p, ConvWeights{w, {}}, Epilogue{}, cpu::kMaxKBlocks + 1, false),
                       doctest::Contains("output-channel blocks"), InputError);
}

TEST_CASE("cpu.03/04: small images grouped per thread, a short last group included, give the bytes of one at a time") {
  // 17 images of 6 x 6: at 2 threads the Winograd kernels take images in groups (the last alone),
  // at 3 threads one at a time, at 1 thread all together. Each output is the same sum in the same
  // order whatever the grouping, so the bytes must match; a wrong image offset would not.
  const ConvProblem p = parse_problem("mb17ic16ih6oc20oh6kh3ph1");
  const auto in = test::random_values(p.input_elems(), 1);
  const auto w = test::random_values(p.weight_elems(), 2);
  const auto b = test::random_values(p.k, 3);
  const int threads = omp_get_max_threads();
  for (const char* id : {"cpu.03_winograd_f2x3", "cpu.04_winograd_f4x3"}) {
    CAPTURE(id);
    omp_set_num_threads(3);
    const auto alone = test::run_kernel(kernel(id), p, in, w, b, Activation::relu);
    for (int t : {2, 1}) {
      CAPTURE(t);
      omp_set_num_threads(t);
      const auto planned = kernel(id).plan(p, ConvWeights{w, b}, Epilogue{});
      CHECK(planned->explain().find(t == 2 ? "2 image(s) per thread" : "17 image(s) per thread") != std::string::npos);
      CHECK(test::run_kernel(kernel(id), p, in, w, b, Activation::relu) == alone);
    }
  }
  omp_set_num_threads(threads);
}

TEST_CASE("layout: copies of large batches of short rows ask for their lines ahead, and give the bytes of one image") {
  // 12 images of 16 x 56 x 56 (2.4 MB): the input copies ask for their NCHW lines rows ahead
  // (prefetch_input_rows); one image (150 KB) stays in cache, and rows of 112 floats the hardware
  // prefetchers follow, so neither does. Each output is the same sum either way: image by image,
  // the bytes must match those of the image run alone.
  const ConvProblem p = parse_problem("mb12ic16ih56oc16oh56kh3ph1"), dw = parse_problem("g16mb12ic16ih56oc16oh56kh3ph1");
  CHECK(cpu::prefetch_input_rows(p, 16));
  CHECK(cpu::prefetch_input_rows(dw, 16));
  CHECK_FALSE(cpu::prefetch_input_rows(p.with_batch(1), 16));
  CHECK_FALSE(cpu::prefetch_input_rows(parse_problem("mb12ic16ih112oc16oh112kh3ph1"), 16));
  CHECK_FALSE(cpu::prefetch_input_rows(parse_problem("mb64ic8ih56oc16oh56kh3ph1"), 16));  // no full block of 16
  for (const auto& run : {std::pair{"cpu.02_direct_xsimd", p}, std::pair{"cpu.04_winograd_f4x3", p},
                          std::pair{"cpu.05_depthwise_xsimd", dw}}) {
    const char* id = run.first;  // not a structured binding: clang 14 cannot capture one (CAPTURE)
    const ConvProblem& problem = run.second;
    CAPTURE(id);
    const auto in = test::random_values(problem.input_elems(), 1);
    const auto w = test::random_values(problem.weight_elems(), 2);
    const auto b = test::random_values(problem.k, 3);
    const auto all = test::run_kernel(kernel(id), problem, in, w, b, Activation::relu);
    const ConvProblem one = problem.with_batch(1);
    for (const std::int64_t n : {0, 11}) {
      CAPTURE(n);
      const std::vector<float> image(in.begin() + n * one.input_elems(), in.begin() + (n + 1) * one.input_elems());
      const auto alone = test::run_kernel(kernel(id), one, image, w, b, Activation::relu);
      CHECK(std::equal(alone.begin(), alone.end(), all.begin() + n * one.output_elems()));
    }
  }
}
