// `convlab report`'s outputs from results in memory: the HTML is self-contained and has every
// section, the Markdown table has a row per result, and the Google Benchmark JSON has the
// layout its tools/compare.py reads.
#include <doctest/doctest.h>

#include "bench/report/report_formats.hpp"
#include "bench/report/svg_plot.hpp"
#include "tests/results_test_util.hpp"

using namespace convlab;

namespace {
std::vector<ResultsFile> sample_files() {
  std::vector<Result> rows;
  for (const char* kernel : {"cpu.00_reference", "cpu.02_direct_xsimd"})
    for (std::int64_t batch : {1, 8, 32}) {
      Result r = test::stored_result(kernel, batch, test::spread_samples(0.1 * static_cast<double>(batch), 0.05, 30));
      r.peak_gflops = 200;
      rows.push_back(r);
    }
  rows.back().layer_times = {{"conv1", LayerKind::conv, "cpu.02_direct_xsimd", 0.3, 0.4},
                             {"fc", LayerKind::linear, "", 0.45, 0.6}};
  rows.push_back(test::stored_result("cuda.auto", 1, test::spread_samples(0.2, 0.05, 30), "graph"));
  rows.back().measurement.device_samples_ms = test::spread_samples(0.15, 0.05, 30);
  rows.back().device_latency = summarize(rows.back().measurement.device_samples_ms);
  Result oom{.model = "lab-cnn", .backend = "cpu", .kernel = "cpu.00_reference", .batch = 4096,
             .status = ResultStatus::out_of_memory, .error = "out of memory at batch 4096"};
  rows.push_back(oom);
  return {parse_results(test::results_text(rows), "run.json")};
}
std::size_t occurrences(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("report_formats: the HTML page is self-contained, with every section and a chart each") {
  const std::string html = html_report(sample_files());
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // the SVG namespace only
  CHECK(html.find("https://") == std::string::npos);
  for (const char* section : {"Summary", "Latency distributions per batch", "p50, p95 and p99 vs batch",
                              "Throughput vs latency", "Per-layer breakdown", "Kernel comparison", "Environment"})
    CHECK_MESSAGE(html.find(std::string("<h2>") + section) != std::string::npos, section);
  CHECK(html.find("out of memory at batch 4096") != std::string::npos);
  CHECK(html.find("device p50 ms") != std::string::npos);
  CHECK(html.find("% of peak") != std::string::npos);
  CHECK(html.find("batch 1 device") != std::string::npos);  // the device clock's CDF
  CHECK(occurrences(html, "<svg") == occurrences(html, "</svg>"));
  CHECK(occurrences(html, "<svg") >= 10);
}

TEST_CASE("report_formats: Markdown has a row per measured result and the per-layer table") {
  const std::string md = markdown_report(sample_files());
  CHECK(occurrences(md, "| lab-cnn cpu.") == 6);
  CHECK(md.find("| lab-cnn cuda.auto graph | 1 |") != std::string::npos);
  CHECK(md.find("### Per layer: lab-cnn cpu.02_direct_xsimd at batch 32") != std::string::npos);
  CHECK(md.find("| conv1 | conv | cpu.02_direct_xsimd |") != std::string::npos);
  CHECK(md.find("out_of_memory") != std::string::npos);
}

TEST_CASE("report_formats: Google Benchmark JSON: iterations per trial and mean/median/stddev aggregates") {
  const auto files = sample_files();
  const nlohmann::json doc = gbench_json(files);
  REQUIRE(doc.contains("context"));
  CHECK(doc["context"].contains("date"));
  CHECK(doc["context"].contains("num_cpus"));
  const auto& rows = doc["benchmarks"];
  // 7 measured results x (30 trials + 3 aggregates).
  CHECK(rows.size() == 7 * 33);
  std::size_t aggregates = 0;
  for (const auto& row : rows) {
    for (const char* key : {"name", "run_name", "run_type", "repetitions", "real_time", "cpu_time", "time_unit",
                            "family_index", "per_family_instance_index", "threads", "iterations"})
      CHECK_MESSAGE(row.contains(key), key);
    CHECK(row["time_unit"] == "ms");
    if (row["run_type"] == "aggregate") {
      ++aggregates;
      CHECK(row["name"] == row["run_name"].get<std::string>() + "_" + row["aggregate_name"].get<std::string>());
    } else {
      CHECK(row["run_type"] == "iteration");
      CHECK(row["name"] == row["run_name"]);
      CHECK(row.contains("repetition_index"));
    }
  }
  CHECK(aggregates == 7 * 3);
  const Result& r = files[0].results[4];  // cpu.02_direct_xsimd at batch 8
  bool found = false;
  for (const auto& row : rows)
    if (row["name"] == "lab-cnn/cpu.02_direct_xsimd/batch:8_median") {
      found = true;
      CHECK(row["real_time"].get<double>() == r.latency.p50);
      CHECK(row["repetitions"] == 30);
    }
  CHECK(found);
  CHECK(rows.back()["name"] == "lab-cnn/cuda.auto/mode:graph/batch:1_stddev");
}

TEST_CASE("svg: text is escaped, and log axes cope with a single value") {
  CHECK(svg::escape("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;");
  svg::LineChart c{.title = "<t>", .x = {"x", true}, .y = {"y", true}};
  c.series.push_back({.name = "one", .x = {5}, .y = {5}});
  const std::string s = svg::line_chart(c);
  CHECK(s.find("&lt;t&gt;") != std::string::npos);
  CHECK(s.find("nan") == std::string::npos);
  CHECK(s.find("inf") == std::string::npos);
}

TEST_CASE("report_formats: context figures read as a person writes them, text as it is") {
  const nlohmann::json context = {{"cpu_model", "AMD EPYC"}, {"peak", {{"fma_gflops_all_threads", 117.54892132028255}}},
                                  {"threads", 2}};
  const auto lines = context_lines(context);
  const auto value = [&](const std::string& key) {
    for (const auto& [k, v] : lines)
      if (k == key) return v;
    return std::string("missing");
  };
  CHECK(value("cpu_model") == "AMD EPYC");
  CHECK(value("peak.fma_gflops_all_threads") == "117.5");
  CHECK(value("threads") == "2");
}

TEST_CASE("report_formats: with two files, each series is named in full and a kernel keeps its colour") {
  auto files = sample_files();
  files.push_back(files.front());
  files.back().path = "rerun.json";
  const std::string html = html_report(files);
  // The legend is where "[2]" tells the files apart: never cut short.
  CHECK(html.find(">cpu.02_direct_xsimd [2]</text>") != std::string::npos);
  CHECK(html.find("…") == std::string::npos);
  // The same kernel in both files: one colour, the second file's line dashed.
  const std::size_t first = html.find(">cpu.02_direct_xsimd [1]</text>"), second = html.find(">cpu.02_direct_xsimd [2]</text>");
  REQUIRE(first != std::string::npos);
  const auto stroke_before = [&](std::size_t at) {
    const std::size_t s = html.rfind("stroke=\"", at);
    return html.substr(s, 17);
  };
  CHECK(stroke_before(first) == stroke_before(second));
  CHECK(html.rfind("stroke-dasharray", second) > html.rfind("<line", second));
}

TEST_CASE("svg: point labels that would cover one another are drawn once") {
  svg::LineChart c{.title = "t", .x = {"x", false}, .y = {"y", false}};
  for (const char* name : {"a [1]", "a [2]"})  // two files that measured the same thing
    c.series.push_back({.name = name, .x = {1, 2, 3}, .y = {10, 20, 30}, .point_labels = {"b1", "b8", "b32"}});
  const std::string s = svg::line_chart(c);
  for (const char* label : {">b1</text>", ">b8</text>", ">b32</text>"}) CHECK(occurrences(s, label) == 1);
}

TEST_CASE("svg: each violin has its own scale, and its median and p99 are marked and written") {
  // Batch 1 near 0.1 ms and batch 128 near 12 ms: on one axis the first would be a flat line.
  const std::vector<svg::Violin> groups = {{"batch 1", test::spread_samples(0.1, 0.05, 200), 0.1, 0.12},
                                           {"batch 128", test::spread_samples(12, 0.05, 200), 12, 14}};
  const std::string s = svg::violins("t", groups);
  CHECK(occurrences(s, "fill=\"none\" stroke=\"#888\"") == 2);  // one panel each
  CHECK(s.find("p50 0.1 · ") != std::string::npos);
  CHECK(s.find("p99 0.12<") != std::string::npos);
  CHECK(s.find("p50 12 · ") != std::string::npos);
  CHECK(s.find("p99 14<") != std::string::npos);
  // Each panel's ticks are its own: batch 1's stay under 1 ms, batch 128's above 10.
  CHECK(s.find(">0.1<") != std::string::npos);
  CHECK(s.find(">12<") != std::string::npos);
}

TEST_CASE("svg: charts shrink with the page rather than make it scroll sideways") {
  const std::string html = html_report(sample_files());
  CHECK(occurrences(html, "<svg") == occurrences(html, "style=\"max-width:100%;height:auto\""));
}
