// convlab/1 results files for the report, compare and policy tests, written by the real writer
// (results_document) so the reader is tested against what `convlab run --json` produces.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "bench/harness/peak.hpp"
#include "bench/report/results.hpp"

namespace convlab::test {

inline Result stored_result(const std::string& kernel, std::int64_t batch, std::vector<double> samples,
                            const std::string& mode = "") {
  Result r{.model = "lab-cnn", .backend = mode.empty() ? "cpu" : "cuda", .kernel = kernel, .mode = mode, .batch = batch};
  r.protocol = {.warmup = 1, .trials = static_cast<int>(samples.size())};
  r.measurement.samples_ms = std::move(samples);
  r.latency = summarize(r.measurement.samples_ms);
  r.flops_per_item = 5.6e6;
  return r;
}

// `count` (up to 101) distinct samples spread evenly over center x (1 +- spread), in a scrambled order.
inline std::vector<double> spread_samples(double center, double spread, int count) {
  std::vector<double> v;
  for (int i = 0; i < count; ++i) v.push_back(center * (1 + spread * ((i * 37 % 101) / 50.0 - 1)));
  return v;
}

// `peak`: the measured peak the document carries (none by default).
inline std::string results_text(const std::vector<Result>& results, const Peak* peak = nullptr) {
  Environment env;
  env.cpu_model = "Test CPU";
  env.threads = 2;
  return results_document(env, peak, results).dump(1);
}

inline std::string write_results(const std::filesystem::path& path, const std::vector<Result>& results) {
  write_file_atomically(path.string(), results_text(results));
  return path.string();
}

}  // namespace convlab::test
