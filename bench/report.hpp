// Results and their reports: a human table, JSON (schema "convlab/1", documented in the
// README) and CSV. One Result per model x backend x kernel x batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/environment.hpp"
#include "bench/harness.hpp"
#include "bench/per_layer.hpp"
#include "bench/stats.hpp"
#include "models/network.hpp"

namespace convlab {

inline constexpr const char* kSchema = "convlab/1";

enum class ResultStatus { ok, out_of_memory };
std::string_view to_string(ResultStatus status);

struct Result {
  std::string model, backend, kernel;
  std::int64_t batch = 0;
  int threads = 0;
  ResultStatus status = ResultStatus::ok;
  std::string error;  // why the status is not ok
  Protocol protocol;
  PercentileMethod method = PercentileMethod::linear;
  Measurement measurement;
  Summary latency;                        // over measurement.samples_ms
  std::optional<Summary> device_latency;  // over measurement.device_samples_ms
  MemoryAccount model_memory;
  double flops_per_item = 0;
  std::vector<LayerTime> layer_times;     // with --per-layer: each layer's median and share

  double per_item_ms() const { return latency.p50 / static_cast<double>(batch); }
  double throughput_items_per_s() const { return static_cast<double>(batch) * 1e3 / latency.p50; }
  std::vector<std::string> flags() const;  // the summary's flags plus the harness's
};

// Human table: one row per result, with the columns the batch 1 vs batch 32 lesson needs.
std::string table_header();
std::string table_row(const Result& r);

nlohmann::json to_json(const Result& r);
nlohmann::json results_document(const Environment& env, const std::vector<Result>& results);
std::string csv_header();
std::string csv_row(const Result& r);

// Writes atomically (temporary file + rename): a reader never sees half a file. Throws
// InputError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace convlab
