// The protocol, checked with a fake clock and a device that records every call.
#include <doctest/doctest.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <string>
#include <vector>

#include "bench/commands/measure_command.hpp"
#include "bench/harness/harness.hpp"
#include "bench/harness/memory.hpp"
#include "bench/harness/peak.hpp"
#include "kernels/common/error.hpp"

using namespace convlab;

namespace {
// Every event in order: "sync", "clock", "run", "start", "stop".
struct Log {
  std::vector<std::string> events;
};

// Each read advances 1 ms, and each run adds its own duration, so trial i measures exactly
// 1 ms (the clock read) + its run time: the sample identifies which runs were timed.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Log& log) : log_(log) {}
  std::int64_t now_ns() override {
    log_.events.emplace_back("clock");
    now_ += 1'000'000;
    return now_;
  }
  void advance_ms(std::int64_t ms) { now_ += ms * 1'000'000; }

 private:
  Log& log_;
  std::int64_t now_ = 0;
};

class CountingDevice final : public Device {
 public:
  CountingDevice(Log& log, bool timer) : log_(log), timer_(timer) {}
  std::string name() const override { return "counting"; }
  void synchronize() override { log_.events.emplace_back("sync"); }
  bool has_device_timer() const override { return timer_; }
  void mark_start() override { log_.events.emplace_back("start"); }
  void mark_stop() override { log_.events.emplace_back("stop"); }
  double elapsed_ms() override { return 0.5; }

 private:
  Log& log_;
  bool timer_;
};
}  // namespace

TEST_CASE("harness: cold run, warmup and trials are counted exactly and only trials are sampled") {
  Log log;
  FakeClock clock(log);
  CountingDevice device(log, false);
  int runs = 0;
  // Run i (0-based) takes i ms: the cold run 0 ms, warmups 1..3 ms, trials 4..8 ms.
  auto run = [&] {
    log.events.emplace_back("run");
    clock.advance_ms(runs++);
  };
  const Measurement m = measure(run, device, {.warmup = 3, .trials = 5}, clock);
  CHECK(runs == 1 + 3 + 5);
  REQUIRE(m.samples_ms.size() == 5);
  CHECK(m.cold_ms == doctest::Approx(1.0));  // clock step only: the cold run took 0 ms
  for (int i = 0; i < 5; ++i) CHECK(m.samples_ms[i] == doctest::Approx(1.0 + 4 + i));  // never a warmup's 1..3
  CHECK(m.device_samples_ms.empty());
}

TEST_CASE("harness: every timed run is synchronized before and after, between the clock reads") {
  Log log;
  FakeClock clock(log);
  CountingDevice device(log, false);
  measure([&] { log.events.emplace_back("run"); }, device, {.warmup = 2, .trials = 3}, clock);
  const std::vector<std::string> timed = {"sync", "clock", "run", "sync", "clock"};
  std::vector<std::string> expected = timed;                        // cold run
  expected.insert(expected.end(), {"run", "run", "sync"});           // warmup, then drain
  for (int i = 0; i < 3; ++i) expected.insert(expected.end(), timed.begin(), timed.end());
  CHECK(log.events == expected);
}

TEST_CASE("harness: a device clock is started and stopped around each timed run and sampled") {
  Log log;
  FakeClock clock(log);
  CountingDevice device(log, true);
  const Measurement m = measure([&] { log.events.emplace_back("run"); }, device, {.warmup = 0, .trials = 2}, clock);
  REQUIRE(m.device_samples_ms.size() == 2);
  CHECK(m.device_samples_ms[0] == 0.5);
  CHECK(m.cold_device_ms == 0.5);
  const std::vector<std::string> timed = {"sync", "clock", "start", "run", "stop", "sync", "clock"};
  std::vector<std::string> expected;
  for (int i = 0; i < 3; ++i) expected.insert(expected.end(), timed.begin(), timed.end());
  expected.insert(expected.begin() + 7, "sync");  // the drain after the (empty) warmup
  CHECK(log.events == expected);
}

TEST_CASE("harness: memory is read around the runs") {
  Log log;
  FakeClock clock(log);
  CountingDevice device(log, false);
  std::vector<char> grown;
  const Measurement m = measure([&] { grown.assign(64 << 20, 1); }, device, {.warmup = 0, .trials = 1}, clock);
  CHECK(m.rss_before_bytes > 0);
  CHECK(m.rss_after_bytes > 0);
  // 64 MiB touched during the runs must show in the peak, whether or not it was reset.
  CHECK(m.peak_rss_bytes >= m.rss_before_bytes + (60u << 20));
}

TEST_CASE("harness: returning a row's freed memory leaves the allocator as any program has it") {
#if defined(__GLIBC__) && !defined(CONVLAB_SANITIZED)
  // glibc maps a large block on its own and, once one is freed, raises its threshold so the next
  // ones come from the heap. A library that allocates per call (Eigen's packing blocks, cpu.01)
  // paid a map, page faults and an unmap every forward when the harness fixed the threshold.
  RowMemoryProbe probe;
  probe.start();
  constexpr std::size_t kBlock = 1536 * 1024;  // above glibc's first threshold (128 KiB)
  int mapped_after_warmup = -1;
  for (int call = 0; call < 3; ++call) {
    void* block = std::malloc(kBlock);
    REQUIRE(block != nullptr);
    std::memset(block, call, kBlock);
    if (call == 2) mapped_after_warmup = static_cast<int>(mallinfo2().hblks);
    std::free(block);
    probe.start();  // each "row" returns freed memory again
  }
  const int mapped_now = static_cast<int>(mallinfo2().hblks);
  CHECK(mapped_after_warmup == mapped_now);  // the third block came from the heap, not a new map
#else
  std::printf("SKIPPED: glibc's allocator only (ASan replaces it)\n");
#endif
}

TEST_CASE("harness: bad protocols are rejected") {
  Log log;
  FakeClock clock(log);
  CountingDevice device(log, false);
  CHECK_THROWS_WITH_AS(measure([] {}, device, {.warmup = 0, .trials = 0}, clock), "trials 0 must be at least 1",
                       InputError);
  CHECK_THROWS_WITH_AS(measure([] {}, device, {.warmup = -1, .trials = 1}, clock), "warmup -1 must not be negative",
                       InputError);
}

namespace {

// Workloads a, b, c: a's runs take 10 ms, b's 20, c's 30; the log records which ran, in order.
// `alone`: the one marked to be measured by itself.
std::vector<Workload> abc_workloads(Log& log, FakeClock& clock, CountingDevice& device, char alone = 0) {
  std::vector<Workload> workloads;
  for (const char* name : {"a", "b", "c"})
    workloads.push_back({[&log, &clock, name] {
                           log.events.emplace_back(name);
                           clock.advance_ms(10 * (name[0] - 'a' + 1));
                         },
                         &device, name[0] == alone});
  return workloads;
}

}  // namespace

TEST_CASE("harness: interleaved workloads are timed round by round, the order rotated each round") {
  Log log;
  FakeClock clock(log);
  CountingDevice device(log, false);
  const std::vector<Workload> workloads = abc_workloads(log, clock, device);
  const std::vector<Measurement> m = measure_interleaved(workloads, {.warmup = 1, .trials = 3}, clock);
  std::vector<std::string> runs;
  for (const std::string& e : log.events)
    if (e.size() == 1 && e[0] >= 'a' && e[0] <= 'c') runs.push_back(e);
  // Cold runs in order, one warmup round, then rounds abc, bca, cab (none always follows another),
  // each timed run right after an untimed one of its own.
  CHECK(runs == std::vector<std::string>{"a", "b", "c", "a", "b", "c", "a", "a", "b", "b", "c", "c", "b", "b", "c",
                                         "c", "a", "a", "c", "c", "a", "a", "b", "b"});
  REQUIRE(m.size() == 3);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(m[i].samples_ms.size() == 3);
    CHECK(m[i].cold_ms == doctest::Approx(1.0 + 10 * (i + 1)));  // each sample is its own workload's
    for (const double ms : m[i].samples_ms) CHECK(ms == doctest::Approx(1.0 + 10 * (i + 1)));
  }
  CHECK(m[0].peak_rss_bytes == m[2].peak_rss_bytes);  // the set's memory, shared
  CHECK_THROWS_WITH_AS(measure_interleaved(workloads, {.warmup = 0, .trials = 0}, clock),
                       "trials 0 must be at least 1", InputError);
}

TEST_CASE("harness: in the rounds, a timed run follows untimed runs of its own workload lasting settle_ms together") {
  Log log;
  FakeClock clock(log);
  CountingDevice device(log, false);
  // settle_ms 25: a (10 ms a run, 1 ms a clock read) settles with 3 runs (11, 22, 33 ms), b with
  // 2 (21, 42), c with one (31): a slow workload pays nothing more than the one run.
  const std::vector<Measurement> m =
      measure_interleaved(abc_workloads(log, clock, device), {.warmup = 0, .trials = 2, .settle_ms = 25}, clock);
  std::string runs;
  for (const std::string& e : log.events)
    if (e.size() == 1 && e[0] >= 'a' && e[0] <= 'c') runs += e;
  CHECK(runs == "abc" "aaaa" "bbb" "cc" "bbb" "cc" "aaaa");  // cold runs, round abc, round bca
  for (int i = 0; i < 3; ++i)
    for (const double ms : m[i].samples_ms) CHECK(ms == doctest::Approx(1.0 + 10 * (i + 1)));
  CHECK_THROWS_WITH_AS(measure_interleaved(abc_workloads(log, clock, device), {.warmup = 0, .trials = 1, .settle_ms = -1}, clock),
                       "settle_ms -1 must not be negative", InputError);
}

TEST_CASE("harness: a workload marked alone is measured after the rounds, by itself, in its place among the results") {
  Log log;
  FakeClock clock(log);
  CountingDevice device(log, false);
  const std::vector<Measurement> m = measure_interleaved(abc_workloads(log, clock, device, 'b'), {.warmup = 1, .trials = 2}, clock);
  std::string runs;
  for (const std::string& e : log.events)
    if (e.size() == 1 && e[0] >= 'a' && e[0] <= 'c') runs += e;
  // a and c in rounds (cold, warmup, then ac, ca with a run before each timed one), then b alone:
  // cold, warmup, two trials (one workload: no extra untimed run).
  CHECK(runs == "acacaaccccaabbbb");
  REQUIRE(m.size() == 3);
  for (int i = 0; i < 3; ++i)
    for (const double ms : m[i].samples_ms) CHECK(ms == doctest::Approx(1.0 + 10 * (i + 1)));
}

TEST_CASE("peak: the register tile's ceiling is measured, its work never optimised away") {
  for (const int threads : {1, 2}) {
    const convlab::TileRun run = convlab::register_tile_run(2, threads, 2000);
    CHECK(run.gflops > 0);
    // Every FMA's product lands in the sum: a dropped one would show here, on any machine and
    // under emulation, where a rate (noisy, and meaningless under qemu) could not.
    CHECK(run.expected_sum > 0);
    CHECK(run.sum == doctest::Approx(run.expected_sum).epsilon(1e-4));
  }
  CHECK_THROWS_AS(convlab::register_tile_run(3, 1, 10), InputError);
}

TEST_CASE("peak: the cost of a parallel region is measured on several threads and reported in the JSON") {
  const double us = convlab::parallel_region_us(2, 50);
  CHECK(us > 0);
  CHECK(us < 1e5);  // a median of 50 regions, not their sum
  const Peak measured{.threads = 2, .parallel_region_us = 3.0};
  CHECK(to_json(measured)["parallel_region_us"] == 3.0);
  CHECK_FALSE(to_json(Peak{.threads = 1}).contains("parallel_region_us"));  // one thread: no fork to measure
}

TEST_CASE("peak: a measurement that cannot be the machine's peak says why") {
  Peak quiet{.simd_lanes = 8, .threads = 2, .gflops_one = 57, .gflops_all = 112};
  quiet.tiles = {{.k_blocks = 2, .pixels = 6, .gflops_one = 50, .gflops_all = 98}};
  CHECK(peak_warnings(quiet, 0.02, 0.05).empty());
  // All threads no faster than one (117 on 2 against 114 on 1, as reported on a busy VM).
  Peak shared = quiet;
  shared.gflops_one = 114;
  shared.gflops_all = 117;
  shared.tiles.clear();
  const auto w = peak_warnings(shared, 0.0, 0.0);
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("2 threads were not faster than one") == 0);
  // A tile at 104% of the FMA peak: the FMA loop met a busier moment.
  Peak tile = quiet;
  tile.tiles[0].gflops_all = 1.04 * quiet.gflops_all;
  REQUIRE(peak_warnings(tile, 0.0, 0.0).size() == 1);
  CHECK(peak_warnings(tile, 0.0, 0.0)[0].find("ran above the FMA peak") != std::string::npos);
  // Other work around the measurement.
  REQUIRE(peak_warnings(quiet, 0.9, 0.0).size() == 1);
  CHECK(peak_warnings(quiet, 0.9, 0.0)[0].find("other work kept 0.90 cores busy") == 0);
}

TEST_CASE("peak: measured again after the rows, a peak well above or below the start's is said, with its bound") {
  CHECK(peak_drift_warning(105, 100, "GFLOP/s", "FP32 rows").empty());
  CHECK(peak_drift_warning(92, 100, "GFLOP/s", "FP32 rows").empty());
  CHECK(peak_drift_warning(50, 0, "GFLOP/s", "FP32 rows").empty());  // no start figure: nothing to compare
  const std::string above = peak_drift_warning(125, 100, "GFLOP/s", "FP32 rows");
  CHECK(above.find("25% above the 100.0 at the start") != std::string::npos);
  CHECK(above.find("FP32 rows above is up to 25% too high") != std::string::npos);
  // 1830 GOP/s at the start, 1464 after: 20% below; rows at the later speed read 1830 / 1464 = 1.25x low.
  const std::string below = peak_drift_warning(1464, 1830, "GOP/s int8", "int8 rows");
  CHECK(below.find("1464.0 GOP/s int8 measured again after the runs, 20% below the 1830.0") != std::string::npos);
  CHECK(below.find("int8 rows above may be\n          up to 25% too low") != std::string::npos);
}

TEST_CASE("peak: a figure measured on 1 and all threads is kept in both slots when all is one") {
  CHECK(peak_thread_counts(4) == std::vector<int>{1, 4});
  CHECK(peak_thread_counts(1) == std::vector<int>{1});
  double one = 0, all = 0;
  keep_best(10, 1, 4, one, all);
  keep_best(30, 4, 4, one, all);
  keep_best(8, 1, 4, one, all);  // a slower repetition changes nothing
  CHECK(one == 10);
  CHECK(all == 30);
  double single_one = 0, single_all = 0;
  keep_best(12, 1, 1, single_one, single_all);
  CHECK(single_one == 12);
  CHECK(single_all == 12);
}

TEST_CASE("peak: on one thread the all-threads figures are measured (they read 0 before)") {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Peak p = measure_peak(/*quick=*/false);
  omp_set_num_threads(threads);
  REQUIRE(p.threads == 1);
  CHECK(p.gflops_all == p.gflops_one);
  CHECK(p.gflops_all > 0);
  REQUIRE(!p.tiles.empty());
  CHECK(p.tiles.front().gflops_all == p.tiles.front().gflops_one);
  CHECK(p.int8_gops_all == p.int8_gops_one);  // 0 == 0 where this ISA has no int8 probe
  CHECK(p.int16_pair_gops_all == p.int16_pair_gops_one);
}

TEST_CASE("peak: every build measures its widest register tile (AVX2 builds measured none)") {
  const convlab::Peak p = convlab::measure_peak(/*quick=*/false);
  REQUIRE(!p.tiles.empty());
  CHECK(p.tiles.front().k_blocks >= 2);
  CHECK(p.tiles.front().gflops_one > 0);
  CHECK(p.tiles.front().gflops_all > 0);
}
