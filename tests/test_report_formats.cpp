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
  // conv1: 60 MFLOP over 1.5 MB (40 FLOP/B) in 0.3 ms = 200 GFLOP/s, under the 400 GFLOP/s roof
  // (10 GB/s x 40 = 400 = the compute roof: the ridge); fc: 9 MFLOP over 4.5 MB (2 FLOP/B) in 0.45 ms
  // = 20 GFLOP/s, memory-bound under 10 x 2 = 20 GFLOP/s
  rows.back().layer_times = {{"conv1", LayerKind::conv, "cpu.02_direct_xsimd", 0.3, 0.4, 60e6, 1.5e6},
                             {"fc", LayerKind::linear, "", 0.45, 0.6, 9e6, 4.5e6},
                             {"pool", LayerKind::max_pool, "", 0.01, 0.0, 0, 1e6}};
  rows.push_back(test::stored_result("cuda.auto", 1, test::spread_samples(0.2, 0.05, 30), "graph"));
  rows.back().measurement.device_samples_ms = test::spread_samples(0.15, 0.05, 30);
  rows.back().device_latency = summarize(rows.back().measurement.device_samples_ms);
  Result oom{.model = "lab-cnn", .backend = "cpu", .kernel = "cpu.00_reference", .batch = 4096,
             .status = ResultStatus::out_of_memory, .error = "out of memory at batch 4096"};
  rows.push_back(oom);
  Peak peak{.threads = 2, .gflops_all = 400, .read_gbs = 10};
  return {parse_results(test::results_text(rows, &peak), "run.json")};
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
  CHECK(html.find("<h2>Per-layer roofline</h2>") != std::string::npos);
  CHECK(html.find("lab-cnn fp32: per-layer roofline") != std::string::npos);
  CHECK(html.find("roof: 10.0 GB/s read x intensity, up to 400.0 GFLOP/s (FMA peak)") != std::string::npos);
}

TEST_CASE("report_formats: the roofline bound is the lower roof, and needs FLOPs and both roofs") {
  const LayerTime conv{.layer = "c", .kind = LayerKind::conv, .median_ms = 1, .flops = 100e6, .bytes = 1e6};
  const auto compute = roofline_point(conv, 50, 10);  // 100 FLOP/B x 10 GB/s = 1000 > 50: compute-bound
  REQUIRE(compute);
  CHECK_FALSE(compute->memory_bound);
  CHECK(compute->roof_gflops == doctest::Approx(50));
  CHECK(compute->percent_of_roof == doctest::Approx(200));  // 100 GFLOP/s: Winograd's effective rate can pass it
  const auto memory = roofline_point(conv, 5000, 10);
  REQUIRE(memory);
  CHECK(memory->memory_bound);
  CHECK(memory->roof_gflops == doctest::Approx(1000));
  CHECK(memory->percent_of_roof == doctest::Approx(10));
  CHECK_FALSE(roofline_point(conv, 50, 0));  // no bandwidth measured
  CHECK_FALSE(roofline_point({.layer = "p", .kind = LayerKind::max_pool, .median_ms = 1, .bytes = 1e6}, 50, 10));

  std::vector<ResultsFile> files = sample_files();  // a file without the bandwidth: no roofline, said so
  files[0].context["peak"].erase("read_gbs");
  CHECK(html_report(files).find("No roofline: it needs") != std::string::npos);
  CHECK(markdown_report(files).find("| conv1 | conv | cpu.02_direct_xsimd | 0.3000 | 40.0% | 40.00 | 200.0 | - | - |") !=
        std::string::npos);
}

TEST_CASE("report_formats: Markdown has a row per measured result and the per-layer table") {
  const std::string md = markdown_report(sample_files());
  CHECK(occurrences(md, "| lab-cnn cpu.") == 6);
  CHECK(md.find("| lab-cnn cuda.auto graph | 1 |") != std::string::npos);
  CHECK(md.find("### Per layer: lab-cnn cpu.02_direct_xsimd at batch 32") != std::string::npos);
  CHECK(md.find("| conv1 | conv | cpu.02_direct_xsimd | 0.3000 | 40.0% | 40.00 | 200.0 | compute | 50.0% |") !=
        std::string::npos);
  CHECK(md.find("| fc | linear | - | 0.4500 | 60.0% | 2.00 | 20.0 | memory | 100.0% |") != std::string::npos);
  CHECK(md.find("| pool | max_pool | - | 0.0100 | 0.0% | - | - | - | - |") != std::string::npos);
  CHECK(md.find("the roof is min(400.0 GFLOP/s, 10.0 GB/s x intensity)") != std::string::npos);
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
