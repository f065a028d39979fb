// Reading convlab/1 results files (written by `convlab run|conv --json`) back into Results: the one
// place `report`, `compare` and `policy --from` read them, so every reader rejects the same bad
// files the same way. A file of another schema, malformed JSON or a row missing a field is an
// InputError whose one line names the file (and the row), never a crash or a silent default.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/report/results.hpp"

namespace convlab {

struct ResultsFile {
  std::string path;
  nlohmann::json context;  // the environment (and measured peak) as written
  bool complete = true;    // false: the run was interrupted; the rows are what was finished
  // Each row as a Result: samples_ms in measurement.samples_ms, latency (and device_latency)
  // recomputed from the samples with the row's percentile method, so every figure a reader
  // shows comes from the stored samples. Rows that are not ok keep only status and error.
  std::vector<Result> results;
};

ResultsFile read_results_file(const std::string& path);
// The same from text already read (tests; `path` only names it in errors).
ResultsFile parse_results(const std::string& text, const std::string& path);

// "lab-cnn cpu.02_direct_xsimd eager batch 32": how reports name a row.
std::string row_label(const Result& r);

}  // namespace convlab
