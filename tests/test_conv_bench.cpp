// Problem files for `convlab conv`: descriptors with their roles, comments, and the shipped sets.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "bench/harness/conv_bench.hpp"
#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"

using namespace convlab;

TEST_CASE("conv bench: problem files keep each descriptor's role") {
  const auto path = std::filesystem::temp_directory_path() / "convlab_problems_test.txt";
  std::ofstream(path) << "# header\n  mb1ic3ih32oc16oh32kh3ph1n\"lab-cnn:conv1\"   first layer (C = 3)  \n\n"
                      << "g8mb2ic8ih9oc8oh9kh3ph1 # depthwise, no role\n";
  const auto problems = read_problems(path.string());
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].problem.name == "lab-cnn:conv1");
  CHECK(problems[0].role == "first layer (C = 3)");
  CHECK(problems[1].problem.groups == 8);
  CHECK(problems[1].role.empty());
  std::filesystem::remove(path);
}

TEST_CASE("conv bench: the shipped problem sets parse") {
  for (const char* file : {"networks.txt", "large.txt"}) {
    CAPTURE(file);
    const auto problems = read_problems(std::string(CONVLAB_SOURCE_DIR) + "/bench/problems/" + file);
    CHECK(problems.size() >= 2);
    for (const auto& np : problems) CHECK(!np.role.empty());
  }
}

TEST_CASE("conv bench: large problems are checked on a sample, small ones whole") {
  ConvBenchConfig config;
  config.problems = {{parse_problem("mb1ic4ih6oc4oh6kh3ph1"), "small"}};
  config.kernels = {"cpu.00_reference"};
  config.protocol = {.warmup = 0, .trials = 1};
  const auto small = run_conv_bench(config, {});
  REQUIRE(small.size() == 1);
  CHECK_FALSE(small[0].accuracy->sampled);
  CHECK(small[0].accuracy->checked == 144);
  CHECK(small[0].accuracy->max_abs < 1e-6);
}

TEST_CASE("conv bench: interleaved, every kernel is still checked and timed, its rows in the same order") {
  ConvBenchConfig config;
  config.problems = {{parse_problem("mb2ic5ih7oc6oh7kh3ph1"), ""}};
  config.kernels = {"cpu.00_reference", "cpu.02_direct_xsimd", "cpu.01_im2col_eigen"};
  config.protocol = {.warmup = 1, .trials = 4};
  config.interleave = true;
  const auto rows = run_conv_bench(config, {});
  REQUIRE(rows.size() == 3);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(rows[i].kernel);
    CHECK(rows[i].kernel == config.kernels[i]);
    CHECK(rows[i].interleaved);
    CHECK(rows[i].status == ResultStatus::ok);
    CHECK(rows[i].measurement.samples_ms.size() == 4);
    CHECK(rows[i].latency.p50 > 0);
    REQUIRE(rows[i].accuracy);
    CHECK(rows[i].accuracy->max_abs < 1e-4);
  }
  CHECK(rows[1].layout_ms.has_value());  // cpu.02 reorders its input: timed apart as before
  config.interleave = false;
  CHECK_FALSE(run_conv_bench(config, {})[0].interleaved);
}

TEST_CASE("conv bench: best of ours versus oneDNN is a geometric mean over problems") {
  auto result = [](const char* problem, const char* kernel, double p50) {
    Result r{.problem = problem, .kernel = kernel, .batch = 1};
    r.latency.p50 = p50;
    return r;
  };
  // Problem a: best of ours 1 ms vs oneDNN 4 ms (4x); problem b: 4 ms vs 1 ms (0.25x).
  // The oracle and oneDNN itself never count as "ours".
  const std::vector<Result> results = {
      result("a", "cpu.00_reference", 0.5), result("a", "cpu.01_im2col_eigen", 1.0), result("a", "onednn.conv", 4.0),
      result("b", "cpu.01_im2col_eigen", 4.0), result("b", "onednn.conv", 1.0)};
  const std::string summary = best_versus_onednn_summary(results);
  if (find_kernel("onednn.conv") == nullptr) return;  // built without oneDNN: nothing to compare
  CHECK(summary == "batch 1: best of ours vs onednn.conv over 2 problems: geometric mean 1.00x faster (1 of 2 won)\n");
}
