// What `convlab report` writes from results files (bench/report/results_reader.hpp): a self-contained
// HTML page with inline SVG charts, Markdown tables for lab reports, and Google Benchmark's JSON
// layout for its tools/compare.py and dashboards.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/report/results_reader.hpp"

namespace convlab {

// The ok rows of one series, by batch: one file's model (or conv problem) x backend x kernel x mode.
struct RowGroup {
  std::string label;  // "lab-cnn cpu.auto" (+ mode, + "[file]" when several files are read)
  std::string subject;  // the model or the conv problem: charts that compare kernels group on it
  std::string series;   // the kernel (+ mode), without subject or file: one colour per series in a chart
  std::size_t file = 0;  // which of the files read, from 0
  std::vector<const Result*> rows;  // ascending batch
};
std::vector<RowGroup> group_rows(const std::vector<ResultsFile>& files);

// The summary table, shared by the HTML and Markdown reports; `device`: add the device-clock p50.
std::vector<std::string> summary_header(bool device);
std::vector<std::string> summary_cells(const RowGroup& group, const Result& r, bool device);
// The roofs a CPU row's per-layer roofline sits under, from its file's measured peak: the compute
// roof (all-threads FMA, or the int8 dot product for int8 rows) and the read bandwidth; 0 where not
// measured, and for GPU rows (the peak is the host's).
struct Roofs {
  double compute_gflops = 0, read_gbs = 0;
  bool known() const { return compute_gflops > 0 && read_gbs > 0; }
};
Roofs roofs_of(const ResultsFile& file, const Result& r);

// A file's context flattened to (key, value) lines: "libraries.eigen" -> "3.4.0".
std::vector<std::pair<std::string, std::string>> context_lines(const nlohmann::json& context);

std::string html_report(const std::vector<ResultsFile>& files);
std::string markdown_report(const std::vector<ResultsFile>& files);

// Google Benchmark's layout: every trial an "iteration" row (repetitions = trials) and the
// aggregates mean, median and stddev; names "<model>/<kernel>[/mode:M]/batch:N", times in ms.
// cpu_time repeats real_time: convlab measures wall time only (said in the context).
nlohmann::json gbench_json(const std::vector<ResultsFile>& files);

}  // namespace convlab
