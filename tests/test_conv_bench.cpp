// Problem files for `convlab conv`: descriptors with their roles, comments, and the shipped sets.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "bench/harness/conv_bench.hpp"
#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "models/catalog.hpp"

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

TEST_CASE("conv bench: networks.txt holds every conv layer's shape of every built-in network") {
  const auto listed = read_problems(std::string(CONVLAB_SOURCE_DIR) + "/bench/problems/networks.txt");
  const auto geometry = [](ConvProblem p) {
    p.name.clear();
    return to_string(p);
  };
  std::set<std::string> shapes;
  for (const auto& np : listed) shapes.insert(geometry(np.problem));
  for (const ModelInfo& m : all_models()) {
    const Network net = m.build(seeded_weights(1));
    for (const Layer& l : net.layers()) {
      if (l.kind != LayerKind::conv) continue;
      CAPTURE(m.name);
      CAPTURE(l.name);
      CHECK(shapes.contains(geometry(l.conv.with_batch(1))));
    }
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

TEST_CASE("conv bench: interleaved, every kernel is still checked and timed, its rows in the same order; the oracle "
          "alone") {
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
    CHECK(rows[i].interleaved == (i != 0));  // cpu.00_reference is timed after the rounds, by itself
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

TEST_CASE("conv bench: a kernel beyond tolerance is INVALID, with its numbers, never in the summary") {
  // Within tolerance: an FP32 error far below 1e-5 normalised and 1e-4 of the peak.
  CHECK(judge_accuracy(ErrorStats{.max_abs = 1e-6, .normalised = 1e-7, .peak = 1.0}, 1.0).empty());
  // Beyond: each tolerance alone fails, and the message gives the numbers.
  const std::string normalised = judge_accuracy(ErrorStats{.max_abs = 1e-6, .normalised = 3e-3, .peak = 1.0}, 1.0);
  CHECK(normalised.find("INVALID") == 0);
  CHECK(normalised.find("normalised error 0.003 (tolerance 1e-05)") != std::string::npos);
  CHECK_FALSE(judge_accuracy(ErrorStats{.max_abs = 0.5, .normalised = 1e-7, .peak = 1.0}, 1.0).empty());
  // error_scale widens both by its square root: Winograd F(4x4)'s 436 passes what FP32 fails.
  CHECK_FALSE(judge_accuracy(ErrorStats{.max_abs = 1e-4, .normalised = 5e-5, .peak = 1.0}, 1.0).empty());
  CHECK(judge_accuracy(ErrorStats{.max_abs = 1e-4, .normalised = 5e-5, .peak = 1.0}, 436.0).empty());
  // NaN never passes, and says so.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(judge_accuracy(ErrorStats{.max_abs = nan, .normalised = nan, .peak = 1.0}, 1.0).find("NaN") != std::string::npos);

  // An INVALID row, however fast, is not "best of ours"; oneDNN wins problem a.
  Result invalid{.problem = "a", .kernel = "cpu.01_im2col_eigen", .batch = 1, .status = ResultStatus::invalid};
  invalid.latency.p50 = 0.1;
  Result direct{.problem = "a", .kernel = "cpu.02_direct_xsimd", .batch = 1};
  direct.latency.p50 = 2.0;
  Result onednn{.problem = "a", .kernel = "onednn.conv", .batch = 1};
  onednn.latency.p50 = 1.0;
  if (find_kernel("onednn.conv") == nullptr) return;  // built without oneDNN: nothing to compare
  CHECK(best_versus_onednn_summary({invalid, direct, onednn}) ==
        "batch 1: best of ours vs onednn.conv over 1 problems: geometric mean 0.50x faster (0 of 1 won)\n");
}

TEST_CASE("conv bench: every kernel that runs is judged; correct kernels pass") {
  ConvBenchConfig config;
  config.problems = {{parse_problem("mb2ic8ih9oc8oh9kh3ph1"), ""}};
  config.protocol = {.warmup = 0, .trials = 2};
  const auto rows = run_conv_bench(config, {});
  REQUIRE(rows.size() >= 4);
  for (const Result& r : rows) {
    CAPTURE(r.kernel);
    CHECK(r.status == ResultStatus::ok);
    CHECK(r.error.empty());
    CHECK(r.measurement.samples_ms.size() == 2);
  }
}
