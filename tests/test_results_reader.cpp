// Reading convlab/1 results (issue 8): what the writer writes reads back, and every bad file is
// one InputError naming the file: another schema, malformed JSON, a missing or mistyped field.
#include <doctest/doctest.h>

#include "bench/report/results_reader.hpp"
#include "kernels/common/error.hpp"
#include "tests/results_test_util.hpp"

using namespace convlab;

namespace {
void check_rejected(const std::string& text, const std::string& message) {
  CAPTURE(text);
  try {
    parse_results(text, "bad.json");
    FAIL("accepted");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.rfind("'bad.json': ", 0) == 0, what);
    CHECK_MESSAGE(what.find(message) != std::string::npos, what);
    CHECK(what.find('\n') == std::string::npos);
  }
}

nlohmann::json good_doc() {
  return nlohmann::json::parse(test::results_text({test::stored_result("cpu.auto", 4, {1.0, 2.0, 3.0, 4.0})}));
}
}  // namespace

TEST_CASE("results_reader: what results_document writes reads back, the figures recomputed from the samples") {
  Result r = test::stored_result("cpu.auto", 8, test::spread_samples(3.0, 0.1, 40), "eager");
  r.measurement.device_samples_ms = test::spread_samples(2.5, 0.1, 40);
  r.device_latency = summarize(r.measurement.device_samples_ms);
  r.layer_times = {{"conv1", LayerKind::conv, "cpu.auto", 0.5, 0.25, 3e6, 2e5}, {"fc", LayerKind::linear, "", 1.5, 0.75}};
  const ResultsFile f = parse_results(test::results_text({r}), "x.json");
  REQUIRE(f.results.size() == 1);
  const Result& back = f.results[0];
  CHECK(back.mode == "eager");
  CHECK(back.batch == 8);
  CHECK(back.latency.p99 == r.latency.p99);
  CHECK(back.device_latency->p50 == r.device_latency->p50);
  CHECK(back.gflops() == doctest::Approx(r.gflops()));
  REQUIRE(back.layer_times.size() == 2);
  CHECK(back.layer_times[1].kind == LayerKind::linear);
  CHECK(back.layer_times[0].flops == 3e6);
  CHECK(back.layer_times[0].bytes == 2e5);
  CHECK(f.context["cpu_model"] == "Test CPU");
  CHECK(row_label(back) == "lab-cnn cpu.auto eager batch 8");
}

TEST_CASE("results_reader: rows that were not measured keep their status and error") {
  Result oom{.model = "lab-cnn", .backend = "cpu", .kernel = "k", .batch = 512, .status = ResultStatus::out_of_memory,
             .error = "out of memory at batch 512"};
  const ResultsFile f = parse_results(test::results_text({oom}), "x.json");
  CHECK(f.results[0].status == ResultStatus::out_of_memory);
  CHECK(f.results[0].error == "out of memory at batch 512");
}

TEST_CASE("results_reader: another schema, malformed JSON and missing fields are rejected, naming the file") {
  check_rejected("{\"schema\": \"convlab/2\", \"results\": []}", "schema \"convlab/2\" is not convlab/1");
  check_rejected("{\"schema\": \"convlab-validate/1\"}", "is not convlab/1");
  check_rejected("{\"results\": []}", "not a convlab results file");
  check_rejected("[1, 2]", "not a convlab results file");
  check_rejected("{\"schema\": \"convlab/1\", \"results\": [", "malformed JSON");
  check_rejected("", "malformed JSON");
  check_rejected("{\"schema\": \"convlab/1\"}", "missing field 'results'");
  check_rejected("{\"schema\": \"convlab/1\", \"results\": {}}", "field 'results' is not a list");
  for (const char* field : {"kernel", "backend", "batch", "status", "samples_ms", "flops_per_item"}) {
    nlohmann::json doc = good_doc();
    doc["results"][0].erase(field);
    check_rejected(doc.dump(), std::string("results[0]: missing field '") + field + "'");
  }
  nlohmann::json doc = good_doc();
  doc["results"][0].erase("model");
  check_rejected(doc.dump(), "missing field 'model'");
}

TEST_CASE("results_reader: mistyped values are rejected, naming the row and field") {
  const auto with = [](const char* field, nlohmann::json value) {
    nlohmann::json doc = good_doc();
    doc["results"][0][field] = std::move(value);
    return doc.dump();
  };
  check_rejected(with("batch", 0), "field 'batch' is not an integer of at least 1");
  check_rejected(with("batch", "32"), "field 'batch' is not an integer");
  check_rejected(with("samples_ms", nlohmann::json::array()), "field 'samples_ms' is not a non-empty list");
  check_rejected(with("samples_ms", {1.0, "x"}), "field 'samples_ms' holds \"x\"");
  check_rejected(with("samples_ms", {1.0, -2.0}), "holds -2.0");
  check_rejected(with("status", "great"), "status 'great' is not one of");
  check_rejected(with("percentile_method", "median"), "unknown percentile method 'median'");
  check_rejected(with("per_layer", {{{"layer", "conv1"}}}), "results[0]: missing field 'kind'");
  check_rejected(with("kernel", 7), "field 'kernel' is not a string");
  nlohmann::json doc = good_doc();
  doc["context"] = "nope";
  check_rejected(doc.dump(), "field 'context' is not a JSON object");
}

TEST_CASE("results_reader: a missing file is one line naming it") {
  CHECK_THROWS_WITH_AS(read_results_file("/nonexistent/r.json"), doctest::Contains("cannot read '/nonexistent/r.json'"),
                       InputError);
}

TEST_CASE("results_reader: the context's CPU peak applies to the rows measured against it, not to GPU rows") {
  Result cpu = test::stored_result("cpu.auto", 4, {1.0, 2.0, 3.0});
  cpu.peak_gflops = 300;  // the writer then stores percent_of_peak
  const Result gpu = test::stored_result("cuda.auto", 4, {1.0, 2.0, 3.0}, "graph");  // no peak measured
  nlohmann::json doc = nlohmann::json::parse(test::results_text({cpu, gpu}));
  doc["context"]["peak"] = {{"fma_gflops_all_threads", 300.0}};
  const ResultsFile f = parse_results(doc.dump(), "mixed.json");
  REQUIRE(f.results.size() == 2);
  CHECK(f.results[0].peak_gflops == 300);
  CHECK(f.results[1].peak_gflops == 0);  // a % of the CPU's FMA peak means nothing for a GPU row
}
