// cpu.auto: which kernels it considers, what --explain says about its measurement, and the file
// that remembers its choices. Its timing is never asserted here (a benchmark's job: `convlab conv
// --kernel all --interleave` prints cpu.auto against the best kernel).
#include <doctest/doctest.h>

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "bench/check/oracle.hpp"
#include "bench/harness/conv_bench.hpp"
#include "bench/harness/forward_threads.hpp"
#include "bench/harness/int8_conv_data.hpp"
#include "bench/harness/model_bench.hpp"
#include "cli_test_util.hpp"
#include "conv_test_util.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/timing_memory.hpp"
#include "kernels/cpu/auto_select.hpp"
#include "kernels/cpu/plan_timing.hpp"
#include "models/weight_file.hpp"

using namespace convlab;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Plans `kernel` (cpu.auto by default) on `p` with `options`, and puts the default (no cache) back afterwards.
std::unique_ptr<PlannedConv> plan_auto(const ConvProblem& p, const cpu::AutoOptions& options,
                                       const char* kernel = "cpu.auto") {
  cpu::set_auto_options(options);
  const auto w = test::random_values(p.weight_elems(), 3);
  auto planned = find_kernel(kernel)->plan(p, ConvWeights{w, {}}, Epilogue{});
  cpu::set_auto_options({});
  return planned;
}

}  // namespace

TEST_CASE("cpu.auto's rounds: a burst over a candidate's first runs does not drop it; a slow one is dropped") {
  // Scripted timings, no clock: candidate 0 takes 1.5 ms, candidate 1 1.0 ms but 10 ms in its
  // first two rounds (each round runs a candidate twice: untimed, then timed), candidate 2 3.0 ms.
  std::vector<int> calls(3, 0);
  const auto t = cpu::time_interleaved(3, [&calls](std::size_t i) {
    const int call = calls[i]++;
    return i == 0 ? 1.5 : i == 1 ? (call < 4 ? 10.0 : 1.0) : 3.0;
  });
  CHECK_FALSE(t.dropped[1]);
  CHECK(t.median[1] == doctest::Approx(1.0));
  CHECK(t.median[1] < t.median[0]);
  CHECK(t.dropped[2]);
  CHECK(t.ms[2].size() == 3);  // timed in the first three rounds only
}

TEST_CASE("cpu.auto's rounds: a median lead the fastest runs contradict is measured on, and unsettled if it stays") {
  // Candidate 0 takes 2.4 ms, but bursts of another process's work fall on its timed runs of
  // rounds 2-4 (6 ms); candidate 1 takes 2.9 ms throughout. After five rounds the medians say 1
  // (2.9 against 6.0) and the fastest runs say 0 (2.4 against 2.9): rounds go on until they agree.
  std::vector<int> calls(2, 0);
  const auto bursts = cpu::time_interleaved(2, [&calls](std::size_t i) {
    const int call = calls[i]++;  // odd calls are the timed ones
    return i == 1 ? 2.9 : call % 2 == 1 && call >= 3 && call <= 7 ? 6.0 : 2.4;
  });
  CHECK(bursts.settled);
  CHECK(bursts.rounds == 7);
  CHECK(bursts.median[0] == doctest::Approx(2.4));
  CHECK(bursts.median[0] < bursts.median[1]);
  CHECK(std::string(cpu::remembered_note(bursts)).empty());

  // The bursts never stop: measured to the budget, the choice is the medians' and not settled.
  std::vector<int> again(2, 0);
  const auto noisy = cpu::time_interleaved(2, [&again](std::size_t i) {
    const int call = again[i]++;
    return i == 1 ? 2.9 : call % 2 == 1 && call >= 3 ? 6.0 : 2.4;
  });
  CHECK_FALSE(noisy.settled);
  CHECK(noisy.rounds > 5);
  CHECK(noisy.median[1] < noisy.median[0]);
  CHECK(has(cpu::remembered_note(noisy), "not remembered: the fastest runs contradict the medians"));

  // A close call (under 5% by the medians) is no contradiction, whichever run was fastest.
  std::vector<int> close(2, 0);
  const auto near = cpu::time_interleaved(2, [&close](std::size_t i) {
    const int call = close[i]++;
    return i == 1 ? (call == 1 ? 1.8 : 2.05) : 2.0;  // 1's one fast run: 1.8
  });
  CHECK(near.settled);
}

// A measurement contradicted to the end (time_interleaved: another process's bursts) is used but
// not remembered: where a test's first plan says so, the file must not have its line, and the
// rest of the test, which needs one, cannot run.
bool not_remembered(const std::string& why, const test::fs::path& file, const std::string& key) {
  if (!has(why, "not remembered")) return false;
  CHECK_FALSE(has(test::fs::exists(file) ? test::slurp(file) : std::string(), key));
  MESSAGE("measured among another process's bursts, so not remembered: " << why);
  return true;
}

namespace {
// A plan that records where it ran and writes its mark into the first output.
struct RecordingPlan final : PlannedConv {
  float mark;
  mutable const float* input = nullptr;
  mutable void* workspace = nullptr;
  explicit RecordingPlan(float m) : mark(m) {}
  std::size_t workspace_bytes() const override { return 64; }
  std::size_t weight_bytes() const override { return 0; }
  void run(const float* in, float* out, void* ws) const override {
    input = in, workspace = ws;
    out[0] = mark + in[1];  // the pattern's second input, -0.5
  }
};
}  // namespace

TEST_CASE("plan timing: each plan runs on its own input, output and workspace, as conv times kernels") {
  // Shared buffers let a candidate find the data another had just read in cache (plan_timing.hpp).
  const ConvProblem p = parse_problem("mb1ic4ih8oc4oh8kh3ph1");
  const RecordingPlan a(1), b(2), stranger(3);
  const cpu::PlanTimingBuffers buffers(p, {&a, &b});
  CHECK(buffers.time_ms(a) >= 0);
  CHECK(buffers.time_ms(b) >= 0);
  CHECK(a.input != b.input);
  CHECK(a.workspace != b.workspace);
  CHECK(a.workspace != nullptr);
  CHECK(buffers.output(a)[0] == 0.5f);
  CHECK(buffers.output(b)[0] == 1.5f);
  CHECK_THROWS_AS(buffers.time_ms(stranger), std::logic_error);
}

TEST_CASE("plan timing: a network's plans reuse one set of timing buffers, zeroed again, freed at its end") {
  // New pages cost a fault each, 11 us on the Zen 5 VM: per-candidate buffers for every layer of
  // mobilenet-v2 at batch 32 had added 0.8 million (timing_memory.hpp).
  const ReuseTimingMemory reuse;
  float* first = nullptr;
  {
    TimingFloats a = timing_floats(1000);
    first = a.get();
    a[5] = 3;
  }
  CHECK(reuse.free_blocks() == 1);
  TimingFloats smaller = timing_floats(500);
  CHECK(smaller.get() == first);
  CHECK(smaller[5] == 0.0f);
  CHECK(reuse.free_blocks() == 0);
  const TimingFloats larger = timing_floats(2000);
  CHECK(larger.get() != first);
  {
    const ReuseTimingMemory nested;  // the outer one stays this thread's
    smaller.reset();
    CHECK(nested.free_blocks() == 0);
    CHECK(reuse.free_blocks() == 1);
  }
  // Two plans' timing buffers, one after the other (six blocks, the free one among them): the
  // second takes the first's.
  const ConvProblem p = parse_problem("mb1ic4ih8oc4oh8kh3ph1");
  const RecordingPlan x(1), y(2);
  { const cpu::PlanTimingBuffers buffers(p, {&x, &y}); }
  CHECK(reuse.free_blocks() == 6);
  const cpu::PlanTimingBuffers again(p, {&x, &y});
  CHECK(reuse.free_blocks() == 0);
  CHECK(again.time_ms(x) >= 0);
  CHECK(again.output(x)[0] == 0.5f);
}

TEST_CASE("cpu.auto: considers every kernel of ours by default, and leaves Winograd F(4x4) out when strict") {
  const ConvProblem p = parse_problem("mb1ic16ih12oc16oh12kh3ph1");  // cpu.01-04 all support it
  const std::string all = plan_auto(p, {})->explain();
  CAPTURE(all);
  for (const char* id : {"cpu.01_im2col_eigen", "cpu.02_direct_xsimd", "cpu.03_winograd_f2x3", "cpu.04_winograd_f4x3"})
    CHECK(has(all, id));
  // The margin, the medians and each kernel's accuracy: bound and measured difference.
  CHECK(has(all, "% ahead of "));
  CHECK(has(all, "interleaved rounds"));
  CHECK(has(all, " ms"));
  CHECK(has(all, "cpu.04_winograd_f4x3 "));
  CHECK(has(all, "error bound 436x FP32's, difference "));
  CHECK(has(all, "outputs' normalised difference from cpu.01_im2col_eigen's"));

  const auto strict = plan_auto(p, {.strict_accuracy = true});
  CAPTURE(strict->explain());
  CHECK_FALSE(has(strict->explain(), "cpu.04_winograd_f4x3"));
  CHECK(has(strict->explain(), "strict accuracy"));
  CHECK(strict->chosen_kernel() != "cpu.04_winograd_f4x3");
}

TEST_CASE("cpu.auto: a choice is remembered per machine, threads, accuracy mode and problem, and reused") {
  const test::fs::path file = test::scratch() / "auto-cache" / "cpu-auto.tsv";  // the folder is created
  test::fs::remove_all(file.parent_path());
  const cpu::AutoOptions options{.cache_file = file.string(), .machine = "test machine"};
  const ConvProblem p = parse_problem("mb2ic8ih10oc16oh10kh3ph1");

  const auto first = plan_auto(p, options);
  const std::string key = "test machine\t" + std::to_string(omp_get_max_threads()) + "\tdefault\tmb2ic8ih10oc16oh10kh3ph1\t";
  if (not_remembered(first->explain(), file, key)) return;
  CHECK_FALSE(has(first->explain(), "(remembered in"));
  const std::string text = test::slurp(file);
  CHECK(text.rfind("# convlab", 0) == 0);
  CHECK(has(text, key));

  const auto second = plan_auto(p, options);
  CHECK(second->chosen_kernel() == first->chosen_kernel());
  CHECK(has(second->explain(), "(remembered in " + file.string() + ")"));
  CHECK(test::lines(test::slurp(file)) == test::lines(text));  // nothing measured, nothing added

  // Another machine (or build), accuracy mode or problem measures again.
  CHECK_FALSE(has(plan_auto(p, {.cache_file = file.string(), .machine = "another"})->explain(), "(remembered in"));
  CHECK_FALSE(has(plan_auto(p, {.strict_accuracy = true, .cache_file = file.string(), .machine = "test machine"})
                      ->explain(),
                  "(remembered in"));
  CHECK_FALSE(has(plan_auto(p.with_batch(3), options)->explain(), "(remembered in"));

  // A line naming a kernel that cannot run the problem, or one cut short, is not trusted: the last
  // line of a key decides, and a measurement replaces it.
  test::fs::remove(file);
  {
    std::ofstream broken(file);
    broken << "test machine\t" << omp_get_max_threads() << "\tdefault\tmb2ic8ih10oc16oh10kh3ph1\tnone\tcpu.05_depthwise_xsimd\tx\n";
    broken << "test machine\t" << omp_get_max_threads() << "\tdefault\tmb2ic8ih10oc16oh10kh3ph1\tno\n";
  }
  const auto remeasured = plan_auto(p, options);
  CHECK_FALSE(has(remeasured->explain(), "(remembered in"));
  if (!has(remeasured->explain(), "not remembered")) CHECK(has(plan_auto(p, options)->explain(), "(remembered in"));
}

TEST_CASE("cpu.auto_int8: a layer's choice is remembered beside cpu.auto's and reused; a line it cannot use is measured again") {
  const test::fs::path file = test::scratch() / "auto-cache-int8" / "cpu-auto.tsv";
  test::fs::remove_all(file.parent_path());
  const cpu::AutoOptions options{.cache_file = file.string(), .machine = "test machine"};
  const ConvProblem p = parse_problem("mb2ic8ih10oc16oh10kh3ph1");
  const Int8ConvData data = make_int8_conv_data(p, 5);
  const auto plan_int8_auto = [&] {
    cpu::set_auto_options(options);
    auto planned = find_int8_kernel("cpu.auto_int8")->plan(p, data.weights(), Epilogue{});
    cpu::set_auto_options({});
    return planned;
  };
  const auto first = plan_int8_auto();
  const bool split = cpu_int8_seven_bit_path() && data.input_q.zero_point < 128;  // measured on both inputs
  const std::string key = "test machine\t" + std::to_string(omp_get_max_threads()) + "\tdefault\tint8 " + to_string(p) +
                          (split ? " (split at 128)" : "") + "\tnone\t";
  if (not_remembered(first->explain(), file, key)) return;
  CHECK_FALSE(has(first->explain(), "(remembered in"));
  const std::string text = test::slurp(file);
  CHECK(has(text, key + first->chosen_kernel() + "\t"));
  const auto second = plan_int8_auto();
  CHECK(second->chosen_kernel() == first->chosen_kernel());
  CHECK(has(second->explain(), "(remembered in " + file.string() + ")"));
  CHECK(test::lines(test::slurp(file)) == test::lines(text));  // nothing measured, nothing added
  CHECK_FALSE(has(plan_auto(p, options)->explain(), "(remembered in"));  // FP32's choice is not int8's

  // A kernel that cannot run the layer (cpu.22 is depthwise), or two plans where inputs are not
  // measured apart, are measured again; a pair where they are is planned as remembered.
  test::fs::remove(file);
  std::ofstream(file) << key << "cpu.22_int8_depthwise\tx\n";
  CHECK_FALSE(has(plan_int8_auto()->explain(), "(remembered in"));
  test::fs::remove(file);
  std::ofstream(file) << key << "cpu.21_int8_direct_madd / cpu.24_int8_direct_rows\tx\n";
  const auto pair = plan_int8_auto();
  CHECK(has(pair->explain(), "(remembered in") == split);
  if (split) CHECK(pair->chosen_kernel() == "cpu.21_int8_direct_madd / cpu.24_int8_direct_rows");
}

TEST_CASE("cpu.auto: the file is read once a process, then only what another process appended or replaced") {
  const test::fs::path file = test::scratch() / "auto-cache-appended" / "cpu-auto.tsv";
  test::fs::remove_all(file.parent_path());
  test::fs::create_directories(file.parent_path());  // p's plan writes nothing if its timings stay unsettled
  const cpu::AutoOptions options{.cache_file = file.string(), .machine = "test machine"};
  const ConvProblem p = parse_problem("mb2ic8ih10oc16oh10kh3ph1"), q = parse_problem("mb2ic8ih12oc16oh12kh3ph1");
  const std::string threads = std::to_string(omp_get_max_threads());
  const auto line = [&](const ConvProblem& problem, const char* kernel) {
    return "test machine\t" + threads + "\tdefault\t" + to_string(problem) + "\tnone\t" + kernel + "\tby hand\n";
  };
  const std::string measured = plan_auto(p, options)->chosen_kernel();  // measured, and the file read
  std::ofstream(file, std::ios::app) << line(q, "cpu.08_direct_rows");  // another process's line
  const auto appended = plan_auto(q, options);
  CHECK(appended->chosen_kernel() == "cpu.08_direct_rows");
  CHECK(has(appended->explain(), "by hand (remembered in"));
  // Half a line (its writer not done) waits; once whole, it counts, the last line of a key winning.
  std::ofstream(file, std::ios::app) << line(q, "cpu.02_direct_xsimd").substr(0, 40);
  CHECK(plan_auto(q, options)->chosen_kernel() == "cpu.08_direct_rows");
  std::ofstream(file, std::ios::app) << line(q, "cpu.02_direct_xsimd").substr(40);
  CHECK(plan_auto(q, options)->chosen_kernel() == "cpu.02_direct_xsimd");
  // A file replaced by a longer one is read from its start, not from where the old one ended.
  const char* other = measured == "cpu.08_direct_rows" ? "cpu.02_direct_xsimd" : "cpu.08_direct_rows";
  const std::string old_text = test::slurp(file);
  test::fs::remove(file);
  std::ofstream(file) << line(p, other) << std::string(old_text.size(), '#') << '\n';
  CHECK(plan_auto(p, options)->chosen_kernel() == other);
}

TEST_CASE("cpu.auto: its explanation ends with the chosen plan's own, cpu.02's register tile") {
  const test::fs::path file = test::scratch() / "auto-cache-plan-why" / "cpu-auto.tsv";
  test::fs::remove_all(file.parent_path());
  test::fs::create_directories(file.parent_path());
  const cpu::AutoOptions options{.cache_file = file.string(), .machine = "test machine"};
  const ConvProblem p = parse_problem("mb1ic32ih16oc64oh16kh3ph1");  // cpu.02 times its tiles here (AVX-512)
  std::ofstream(file) << "test machine\t" << omp_get_max_threads() << "\tdefault\t" << to_string(p)
                      << "\tnone\tcpu.02_direct_xsimd\tby hand\n";
  const auto automatic = plan_auto(p, options);  // the remembered choice, cpu.02 planned as alone
  REQUIRE(automatic->chosen_kernel() == "cpu.02_direct_xsimd");
  const std::string chose = "by hand (remembered in " + file.string() + ")", why = automatic->explain();
  CAPTURE(why);
  if (plan_auto(p, options, "cpu.02_direct_xsimd")->explain().empty()) CHECK(why == chose);  // one tile for this ISA
  else CHECK(why.rfind(chose + "; cpu.02_direct_xsimd: register tile ", 0) == 0);
}

TEST_CASE("cpu.auto: conv's table gives its choice and the chosen plan's, the timings left to the JSON") {
  const NamedProblem np{parse_problem("mb1ic32ih16oc64oh16kh3ph1"), ""};
  Result r{.problem = to_string(np.problem), .kernel = "cpu.auto", .batch = 1};
  r.accuracy = ErrorStats{};
  r.choices = {"chose cpu.02_direct_xsimd, 3.0% ahead of cpu.08_direct_rows (medians of 8 interleaved rounds, 20 ms "
               "timing): cpu.02_direct_xsimd 0.296 ms; cpu.08_direct_rows 0.319 ms; cpu.02_direct_xsimd: register "
               "tile 2 x 14 (medians of 10 interleaved rounds on 1 image(s), 22 ms: 2 x 12 0.2 ms, 2 x 14 0.1 ms)"};
  CHECK(has(conv_table_block(np, 1, {r}), "\n  cpu.auto: chose cpu.02_direct_xsimd, 3.0% ahead of cpu.08_direct_rows; "
                                           "cpu.02_direct_xsimd: register tile 2 x 14\n"));
  r.choices = {"chose cpu.04_winograd_f4x3, 3.0% ahead of cpu.02_direct_xsimd (medians of 8 interleaved rounds, 20 ms "
               "timing): cpu.04_winograd_f4x3 0.296 ms; cpu.02_direct_xsimd 0.319 ms"};  // a plan with nothing to say
  CHECK(has(conv_table_block(np, 1, {r}), "\n  cpu.auto: chose cpu.04_winograd_f4x3, 3.0% ahead of cpu.02_direct_xsimd\n"));
}

TEST_CASE("cpu.02: the register tile plan measured is remembered in cpu.auto's file and reused") {
  const test::fs::path file = test::scratch() / "auto-cache-tile" / "cpu-auto.tsv";
  test::fs::remove_all(file.parent_path());
  const cpu::AutoOptions options{.cache_file = file.string(), .machine = "test machine"};
  const ConvProblem p = parse_problem("mb1ic32ih16oc64oh16kh3ph1");  // 9.4 MFLOP, 4 blocks of K
  const auto plan_direct = [&] {
    cpu::set_auto_options(options);
    const auto w = test::random_values(p.weight_elems(), 3);
    auto planned = find_kernel("cpu.02_direct_xsimd")->plan(p, ConvWeights{w, {}}, Epilogue{});
    cpu::set_auto_options({});
    return planned;
  };
  const auto first = plan_direct();
  if (!has(first->explain(), "interleaved rounds")) {
    std::printf("SKIPPED: one register tile for this ISA: nothing measured, nothing to remember\n");
    return;
  }
  const std::string key = "test machine\t" + std::to_string(omp_get_max_threads()) + "\tdefault\tcpu.02 register tile " +
                          to_string(p) + " none\t-\t";
  if (not_remembered(first->explain(), file, key)) return;
  const std::string text = test::slurp(file);
  CHECK(has(text, key));
  const auto second = plan_direct();
  CHECK(second->explain() == first->explain() + " (remembered in " + file.string() + ")");
  CHECK(test::lines(test::slurp(file)) == test::lines(text));
  // A tile this ISA does not have is measured again.
  test::fs::remove(file);
  std::ofstream(file) << key << "9 reordered\tx\n";
  const auto remeasured = plan_direct();
  CHECK_FALSE(has(remeasured->explain(), "(remembered in"));
  if (!has(remeasured->explain(), "not remembered"))
    CHECK(has(plan_direct()->explain(), "(remembered in"));  // and the new measurement is
}

TEST_CASE("cpu.auto_int8: its explanation ends with each chosen plan's own, cpu.23's register tile") {
  const test::fs::path file = test::scratch() / "auto-cache-int8-plan-why" / "cpu-auto.tsv";
  test::fs::remove_all(file.parent_path());
  test::fs::create_directories(file.parent_path());
  const ConvProblem p = parse_problem("mb1ic32ih16oc64oh16kh3ph1");  // every build times two cpu.23 tiles here
  const Int8ConvData data = make_int8_conv_data(p, 3);
  const bool split = cpu_int8_seven_bit_path() && data.input_q.zero_point < 128;  // two plans, by the input
  const std::string key = "test machine\t" + std::to_string(omp_get_max_threads()) + "\tdefault\tint8 " +
                          to_string(p) + (split ? " (split at 128)" : "") + "\tnone\t";
  const std::string chosen = split ? "cpu.24_int8_direct_rows / cpu.23_int8_direct_vnni" : "cpu.23_int8_direct_vnni";
  std::ofstream(file) << key << chosen << "\tby hand\n";
  cpu::set_auto_options({.cache_file = file.string(), .machine = "test machine"});
  const auto automatic = find_int8_kernel("cpu.auto_int8")->plan(p, data.weights(), Epilogue{});
  cpu::set_auto_options({});
  REQUIRE(automatic->chosen_kernel() == chosen);
  const std::string why = automatic->explain();
  CAPTURE(why);
  CHECK(why.rfind("by hand (remembered in " + file.string() + "); cpu.23_int8_direct_vnni: register tile ", 0) == 0);
  CHECK_FALSE(has(why, "cpu.24_int8_direct_rows: "));  // cpu.24 has nothing to say
}

TEST_CASE("cpu.23: the register tile plan measured is remembered in cpu.auto's file and reused") {
  const test::fs::path file = test::scratch() / "auto-cache-int8-tile" / "cpu-auto.tsv";
  test::fs::remove_all(file.parent_path());
  const ConvProblem p = parse_problem("mb1ic32ih16oc64oh16kh3ph1");  // 9.4 MOP, 4 blocks of K (AVX-512)
  const Int8ConvData data = make_int8_conv_data(p, 3);
  const auto plan_vnni = [&] {
    cpu::set_auto_options({.cache_file = file.string(), .machine = "test machine"});
    auto planned = find_int8_kernel("cpu.23_int8_direct_vnni")->plan(p, data.weights(), Epilogue{});
    cpu::set_auto_options({});
    return planned;
  };
  const auto first = plan_vnni();
  REQUIRE(has(first->explain(), "interleaved rounds"));  // every build has two tiles for 4 blocks or more
  const std::string key = "test machine\t" + std::to_string(omp_get_max_threads()) +
                          "\tdefault\tcpu.23 register tile " + to_string(p) + " none\t-\t";
  if (not_remembered(first->explain(), file, key)) return;
  const std::string text = test::slurp(file);
  CHECK(has(text, key));
  const auto second = plan_vnni();
  CHECK(second->explain() == first->explain() + " (remembered in " + file.string() + ")");
  CHECK(test::lines(test::slurp(file)) == test::lines(text));
}

TEST_CASE("cpu.auto: a cache that cannot be written costs a warning, not the run") {
  // A regular file where the cache's folder should be: the folder cannot be created.
  const test::fs::path blocker = test::scratch() / "not-a-folder";
  std::ofstream(blocker) << "x";
  const ConvProblem p = parse_problem("mb1ic8ih8oc8oh8kh3ph1");
  const auto planned = plan_auto(p, {.cache_file = (blocker / "cpu-auto.tsv").string(), .machine = "m"});
  CHECK_FALSE(planned->chosen_kernel().empty());
}

TEST_CASE("cli: cpu.auto remembers its choices in --auto-cache, and --auto-strict leaves F(4x4) out") {
  const test::fs::path file = test::scratch() / "cli-auto-cache.tsv";
  test::fs::remove(file);
  const std::string run = "run --model lab-cnn --kernel cpu.auto --batch 1 --trials 2 --warmup 1 --explain --auto-cache " +
                          file.string();
  const test::Outcome first = test::run_convlab(run);
  REQUIRE_MESSAGE(first.code == 0, first.err);
  CHECK_FALSE(has(first.out, "remembered in"));
  const test::Outcome second = test::run_convlab(run);
  REQUIRE_MESSAGE(second.code == 0, second.err);
  CHECK(has(second.out, "remembered in " + file.string()));

  const test::Outcome strict = test::run_convlab(run + " --auto-strict");
  REQUIRE_MESSAGE(strict.code == 0, strict.err);
  CHECK_FALSE(has(strict.out, "remembered in"));  // another accuracy mode: measured
  CHECK_FALSE(has(strict.out, "cpu.04_winograd_f4x3"));
  test::check_usage_error("run --model lab-cnn --auto-cache ''", "--auto-cache: give a file, or off");
}

TEST_CASE("cpu.auto against the best other kernel: within 5% or not, per batch, with the worst named") {
  auto result = [](const char* problem, const char* kernel, std::int64_t batch, double p50, const char* chose = "") {
    Result r{.problem = problem, .kernel = kernel, .batch = batch};
    r.latency.p50 = p50;
    if (*chose != 0) r.choices = {chose};
    return r;
  };
  // a: chose cpu.02, 1.02x the best (within); b: chose cpu.02, timed 1.2x cpu.04 (a wrong choice);
  // c: chose cpu.06, the best, although cpu.auto's own row is 1.3x: the same code, so noise, and
  // its own row decides. The oracle and baselines never count as the best.
  const std::string summary = auto_versus_best_summary(
      {result("a", "cpu.auto", 1, 0.9, "chose cpu.02_direct_xsimd, 3% ahead"), result("a", "cpu.02_direct_xsimd", 1, 1.02),
       result("a", "cpu.04_winograd_f4x3", 1, 1.0), result("a", "cpu.00_reference", 1, 0.1),
       result("b", "cpu.auto", 1, 1.0, "chose cpu.02_direct_xsimd, 1% ahead"), result("b", "cpu.02_direct_xsimd", 1, 1.2),
       result("b", "cpu.04_winograd_f4x3", 1, 1.0), result("b", "onednn.conv", 1, 0.5),
       result("c", "cpu.auto", 1, 1.3, "chose cpu.06_pointwise_xsimd (the only candidate)"),
       result("c", "cpu.06_pointwise_xsimd", 1, 1.0), result("a", "cpu.02_direct_xsimd", 32, 1.0)});
  CHECK(summary ==
        "batch 1: cpu.auto chose a kernel within 5% of the best other kernel of ours on 2 of 3 problems; worst 1.20x: "
        "chose cpu.02_direct_xsimd where cpu.04_winograd_f4x3 was faster, on b\n");
}

TEST_CASE("cpu.auto: a network's forward on one thread or on all, measured, remembered; other kernels on all") {
  const cpu::ScopedMaxThreads two(2);  // two threads whatever the machine: the choice is only made with several
  const Network net = load_model("lab-cnn", "", 1);
  const test::fs::path file = test::scratch() / "forward-threads.tsv";
  test::fs::remove(file);
  cpu::set_auto_options({.cache_file = file.string(), .machine = "test machine"});

  const PlannedForward fixed = plan_forward(net, "lab-cnn", 1, "cpu.02_direct_xsimd", 1);
  CHECK(fixed.threads == 2);
  CHECK(fixed.why.empty());

  const PlannedForward chosen = plan_forward(net, "lab-cnn", 1, "cpu.auto", 1);
  CAPTURE(chosen.why);
  REQUIRE((chosen.threads == 1 || chosen.threads == 2));
  CHECK(has(chosen.why, chosen.threads == 1 ? "chose 1 thread: " : "chose 2 threads: "));
  // Both forwards' medians, or (a slow build) why one thread was not tried.
  CHECK((has(chosen.why, " ms on 1 thread, ") || has(chosen.why, "too long for 1 thread to win")));
  if (not_remembered(chosen.why, file, "forward lab-cnn batch 1")) return cpu::set_auto_options({});
  CHECK(has(test::slurp(file), "\t2\tdefault\tforward lab-cnn batch 1\t-\t" + std::string(chosen.threads == 1 ? "1 thread" : "2 threads")));

  {  // On its threads every layer matches the oracle within cpu.auto's bound (it may pick Winograd).
    const cpu::ScopedMaxThreads scope(chosen.threads);
    CHECK(differs_from_reference(net, *chosen.plan, find_kernel("cpu.auto")->error_scale).empty());
  }

  const PlannedForward again = plan_forward(net, "lab-cnn", 1, "cpu.auto", 1);
  CHECK(again.threads == chosen.threads);
  CHECK(has(again.why, "(remembered in " + file.string() + ")"));

  // A line naming threads this process has not is not trusted: measured again.
  std::ofstream(file, std::ios::app) << "test machine\t2\tdefault\tforward lab-cnn batch 1\t-\t7 threads\tx\n";
  CHECK_FALSE(has(plan_forward(net, "lab-cnn", 1, "cpu.auto", 1).why, "(remembered in"));
  cpu::set_auto_options({});
}

TEST_CASE("cpu.auto's one-thread forward in a run, FP32 and int8: the row's threads, flag and explanation agree") {
  const cpu::ScopedMaxThreads two(2);
  ModelBenchConfig config;
  config.kernels = {"cpu.auto", "cpu.auto_int8", "cpu.02_direct_xsimd"};
  config.batches = {1};
  config.calibration_inputs = 2;
  config.eval_inputs = 2;
  config.protocol = {.warmup = 1, .trials = 3};
  const std::vector<Result> rows = run_model_bench(config);
  REQUIRE(rows.size() == 3);
  for (const Result& r : rows) {
    CAPTURE(r.kernel);
    CHECK(r.status == ResultStatus::ok);
    const auto line = std::ranges::find_if(r.choices, [](const std::string& c) { return c.starts_with("forward: chose "); });
    const std::vector<std::string> flags = r.flags();
    CHECK((std::ranges::find(flags, "on_1_thread") != flags.end()) == r.on_one_thread);
    CHECK(r.threads == 2);  // the threads given: what `compare` and `policy` match rows on
    if (r.kernel == "cpu.02_direct_xsimd") {  // a fixed kernel runs on the threads it is given
      CHECK(line == r.choices.end());
      CHECK_FALSE(r.on_one_thread);
      continue;
    }
    REQUIRE(line != r.choices.end());
    CHECK(r.on_one_thread == has(*line, "forward: chose 1 thread"));
  }
}

TEST_CASE("ScopedMaxThreads: OpenMP's thread count for a scope, put back after it") {
  const int before = omp_get_max_threads();
  {
    const cpu::ScopedMaxThreads one(1);
    CHECK(omp_get_max_threads() == 1);
    int in_region = 0;
#pragma omp parallel
    {
#pragma omp single
      in_region = omp_get_num_threads();
    }
    CHECK(in_region == 1);
  }
  CHECK(omp_get_max_threads() == before);
}
