// Reports: the JSON schema's fields, CSV columns, and atomic writes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/harness/model_bench.hpp"
#include "kernels/common/error.hpp"

using namespace convlab;

namespace {
std::size_t count(const std::string& s, char c) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), c)); }
}  // namespace

TEST_CASE("report: a lab run produces the documented JSON") {
  ModelBenchConfig config;
  config.kernels = {"cpu.00_reference"};
  config.batches = {1, 2};
  config.protocol = {.warmup = 1, .trials = 7};
  const auto results = run_model_bench(config);
  REQUIRE(results.size() == 2);
  const nlohmann::json doc = results_document(collect_environment(), nullptr, results);
  CHECK(doc["schema"] == "convlab/1");
  for (const char* key : {"cpu_model", "build_isa", "threads", "compiler", "cxx_flags", "build_type", "os", "kernel",
                          "libraries", "git_commit", "git_dirty", "date_utc"})
    CHECK_MESSAGE(doc["context"].contains(key), key);
  const auto& r = doc["results"][1];
  CHECK(r["model"] == "lab-cnn");
  CHECK(r["backend"] == "cpu");
  CHECK(r["kernel"] == "cpu.00_reference");
  CHECK(r["batch"] == 2);
  CHECK(r["status"] == "ok");
  CHECK(r["warmup"] == 1);
  CHECK(r["trials"] == 7);
  CHECK(r["percentile_method"] == "linear");
  CHECK(r["samples_ms"].size() == 7);
  for (const char* key : {"p50", "p90", "p95", "p99", "mean", "std", "min", "max"}) CHECK(r["latency_ms"].contains(key));
  for (const char* key : {"rss_before_bytes", "rss_after_bytes", "peak_rss_bytes", "weights_bytes", "activations_bytes",
                          "workspace_bytes"})
    CHECK(r["memory"].contains(key));
  CHECK(r["cold_ms"].get<double>() > 0);
  CHECK(r["throughput_items_per_s"].get<double>() == doctest::Approx(2e3 / r["latency_ms"]["p50"].get<double>()));
  CHECK(r["flags"].size() >= 1);  // 7 trials: p99 rests on too few
  // The percentiles are those of the samples written beside them.
  const Summary again = summarize(r["samples_ms"].get<std::vector<double>>());
  CHECK(r["latency_ms"]["p95"].get<double>() == again.p95);
}

TEST_CASE("report: CSV rows have as many columns as the header, out-of-memory rows too") {
  Result ok{.model = "lab-cnn", .backend = "cpu", .kernel = "k", .batch = 4};
  ok.measurement.samples_ms = {1, 2, 3};
  ok.latency = summarize(ok.measurement.samples_ms);
  Result oom{.model = "lab-cnn", .backend = "cpu", .kernel = "k", .batch = 1 << 30, .status = ResultStatus::out_of_memory,
             .error = "out of memory at batch 1073741824"};
  CHECK(count(csv_row(ok), ',') == count(csv_header(), ','));
  CHECK(count(csv_row(oom), ',') == count(csv_header(), ','));
  CHECK(table_row(oom).find("out of memory at batch 1073741824") != std::string::npos);
  CHECK(to_json(oom)["status"] == "out_of_memory");
  CHECK(!to_json(oom).contains("samples_ms"));
}

TEST_CASE("report: files are written whole, and unwritable paths are named") {
  const auto dir = std::filesystem::temp_directory_path() / "convlab_report_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  CHECK(content.str() == "second");
  CHECK(!std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
  CHECK_THROWS_WITH_AS(write_file_atomically("/nonexistent-dir/x.json", "x"),
                       "cannot write '/nonexistent-dir/x.json': the folder does not exist or is not writable",
                       InputError);
}
