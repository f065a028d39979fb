// `convlab report`, `compare` and `policy` as a user meets them: files in, pages and tables out,
// and every bad file or value one line on stderr with exit 2.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.hpp"
#include "tests/results_test_util.hpp"

using namespace convlab::test;

namespace {
std::string file_a() {
  return write_results(scratch() / "a.json", {stored_result("cpu.auto", 1, spread_samples(1.0, 0.02, 40)),
                                              stored_result("cpu.auto", 8, spread_samples(4.0, 0.02, 40)),
                                              stored_result("cpu.auto", 32, spread_samples(12.0, 0.02, 40)),
                                              stored_result("cpu.00_reference", 1, spread_samples(3.0, 0.02, 40))});
}
std::string file_b() {  // batch 1 10% faster, batch 8 the same, batch 32 missing, one new row
  auto same = spread_samples(4.0, 0.02, 40);
  std::rotate(same.begin(), same.begin() + 3, same.end());
  return write_results(scratch() / "b.json", {stored_result("cpu.auto", 1, spread_samples(0.9, 0.02, 40)),
                                              stored_result("cpu.auto", 8, same),
                                              stored_result("cpu.auto", 64, spread_samples(20.0, 0.02, 40))});
}
std::string write_text(const std::string& name, const std::string& text) {
  const fs::path p = scratch() / name;
  std::ofstream(p) << text;
  return p.string();
}
}  // namespace

TEST_CASE("cli report: HTML, Markdown and Google Benchmark JSON from a results file") {
  const std::string a = file_a(), html = (scratch() / "r.html").string(), gb = (scratch() / "gb.json").string();
  const Outcome o = run_convlab("report " + a + " -o " + html + " --gbench-json " + gb);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(slurp(html).find("<svg") != std::string::npos);
  CHECK(nlohmann::json::parse(slurp(gb))["benchmarks"].size() == 4 * 43);
  const Outcome md = run_convlab("report " + a + " --format markdown");
  CHECK(md.code == 0);
  CHECK(md.out.find("| lab-cnn cpu.auto | 32 | 40 |") != std::string::npos);
}

TEST_CASE("cli report and compare: bad files and values exit 2 with one line naming the file") {
  const std::string a = file_a();
  const std::string other = write_text("other.json", "{\"schema\": \"convlab-validate/1\", \"kernels\": []}");
  const std::string broken = write_text("broken.json", "{\"schema\": \"convlab/1\", \"results\": [ {");
  const std::string missing = write_text("missing.json", "{\"schema\": \"convlab/1\", \"results\": [{\"backend\": \"cpu\"}]}");
  for (const char* cmd : {"report --format markdown ", "compare " }) {
    const std::string prefix = std::string(cmd) + (std::string(cmd) == "compare " ? a + " " : "");
    check_usage_error(prefix + other, "'" + other + "': schema \"convlab-validate/1\" is not convlab/1");
    check_usage_error(prefix + broken, "'" + broken + "': malformed JSON");
    check_usage_error(prefix + missing, "'" + missing + "': results[0]: missing field 'kernel'");
    check_usage_error(prefix + "/nonexistent/x.json", "cannot read '/nonexistent/x.json'");
  }
  check_usage_error("report " + a, "-o FILE is required");
  check_usage_error("report " + a + " --format pdf", "--format: 'pdf' is not one of html, markdown");
  check_usage_error("report " + a + " -o /nonexistent-dir/r.html", "cannot write '/nonexistent-dir/r.html'");
  check_usage_error("compare " + a, "compare needs two results files");
  check_usage_error("compare " + a + " " + a + " --resamples 5", "--resamples: 5 must be at least 100");
}

TEST_CASE("cli compare: matched rows get a ratio, p and verdict; unmatched rows are listed") {
  const Outcome o = run_convlab("compare " + file_a() + " " + file_b());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  const auto line_of = [&o](const std::string& row) {
    const auto at = o.out.find(row);
    REQUIRE_MESSAGE(at != std::string::npos, o.out);
    return o.out.substr(at, o.out.find('\n', at) - at);
  };
  CHECK(line_of("lab-cnn cpu.auto batch 1 ").find("faster") != std::string::npos);
  CHECK(line_of("lab-cnn cpu.auto batch 1 ").find("0.900") != std::string::npos);
  CHECK(line_of("lab-cnn cpu.auto batch 8 ").find("no significant difference") != std::string::npos);
  CHECK(o.out.find("only in A (unmatched):\n  lab-cnn cpu.00_reference batch 1\n  lab-cnn cpu.auto batch 32") != std::string::npos);
  CHECK(o.out.find("only in B (unmatched):\n  lab-cnn cpu.auto batch 64") != std::string::npos);
  CHECK(o.out.find("normal approximation") != std::string::npos);
}

TEST_CASE("cli policy: from a results file, a recommendation, or none when the rate exceeds capacity") {
  const std::string a = file_a();  // cpu.auto: 1 ms at batch 1, 4 ms at 8, 12 ms at 32 (2667/s)
  const Outcome ok = run_convlab("policy --model lab-cnn --kernel cpu.auto --rate 400 --slo-p99-ms 40 --from " + a);
  REQUIRE_MESSAGE(ok.code == 0, ok.err);
  CHECK(ok.out.find("recommended: max batch") != std::string::npos);
  const Outcome again = run_convlab("policy --model lab-cnn --kernel cpu.auto --rate 400 --slo-p99-ms 40 --from " + a);
  CHECK(again.out == ok.out);  // deterministic for a seed
  const Outcome none = run_convlab("policy --model lab-cnn --kernel cpu.auto --rate 5000 --slo-p99-ms 40 --from " + a);
  CHECK(none.code == 0);
  CHECK(none.out.find("none can: 5000/s exceeds the capacity with batches up to 32") != std::string::npos);
  check_usage_error("policy --model lab-cnn --rate 400 --slo-p99-ms 40 --from " + a,
                    "2 kernels measured lab-cnn (cpu.00_reference, cpu.auto): choose one with --kernel");
  check_usage_error("policy --rate 0 --slo-p99-ms 40 --from " + a, "--rate: 0 must be above 0");
  check_usage_error("policy --rate 10 --slo-p99-ms 40 --max-wait-ms 1,x --from " + a, "--max-wait-ms: 'x'");
  check_usage_error("policy --rate 10 --slo-p99-ms 40 --model lenet5 --from " + a, "no measured rows for lenet5 on cpu");
}

TEST_CASE("cli policy: measures now when no file is given") {
  // A rate and SLO that any build meets: under ASan at -O1 a batch of 1 takes ~40 ms.
  const Outcome o = run_convlab("policy --model lab-cnn --kernel cpu.02_direct_xsimd --batch 1,4 --warmup 1 --trials 5 "
                                "--threads 1 --rate 2 --slo-p99-ms 2000 --requests 2000");
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("measured now with cpu.02_direct_xsimd") != std::string::npos);
  CHECK(o.out.find("recommended:") != std::string::npos);
}

TEST_CASE("cli compare: rows measured with different thread counts are not compared; other builds are warned about") {
  std::vector<convlab::Result> one, two;
  for (const std::int64_t batch : {1, 8}) {
    one.push_back(stored_result("cpu.auto", batch, spread_samples(1.0, 0.02, 40)));
    one.back().threads = 1;
    two.push_back(stored_result("cpu.auto", batch, spread_samples(0.64, 0.02, 40)));
    two.back().threads = batch == 1 ? 2 : 1;
  }
  const std::string a = write_results(scratch() / "threads1.json", one), b = write_results(scratch() / "threads2.json", two);
  const Outcome o = run_convlab("compare " + a + " " + b);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("not compared (measured with different thread counts):\n  lab-cnn cpu.auto batch 1 (A 1 thread, B 2 threads)") !=
        std::string::npos);
  CHECK(o.out.find("lab-cnn cpu.auto batch 1  ") == std::string::npos);  // no verdict line for it
  CHECK(o.out.find("lab-cnn cpu.auto batch 8 ") != std::string::npos);   // same threads: compared
  CHECK(o.out.find("WARNING") == std::string::npos);                     // the same build and machine
  // A different machine is said loudly before any verdict.
  nlohmann::json doc = nlohmann::json::parse(slurp(b));
  doc["context"]["cpu_model"] = "Other CPU";
  std::ofstream(b) << doc.dump(1);
  CHECK(run_convlab("compare " + a + " " + b).out.find("WARNING: A and B were measured with different CPUs") !=
        std::string::npos);
}

TEST_CASE("cli policy: the printed check command carries the measurement's threads and kernel; another build is named") {
  std::vector<convlab::Result> rows;
  for (const std::int64_t batch : {1, 8, 32}) {
    rows.push_back(stored_result("cpu.auto", batch, spread_samples(0.1 * static_cast<double>(batch), 0.02, 40)));
    rows.back().threads = 1;
  }
  const std::string one_thread = write_results(scratch() / "policy1.json", rows);
  const Outcome o = run_convlab("policy --model lab-cnn --rate 100 --slo-p99-ms 40 --from " + one_thread);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("check it against a real run: convlab run --model lab-cnn --backend cpu --kernel cpu.auto --batch ") !=
        std::string::npos);
  CHECK(o.out.find(" --threads 1 --trials 200") != std::string::npos);
  // The test file has no commit or flags of its own build, so it is not said to come from another.
  CHECK(o.out.find("was measured by build") == std::string::npos);
  nlohmann::json doc = nlohmann::json::parse(slurp(one_thread));
  doc["context"]["git_commit"] = "0123456789abcdef";
  std::ofstream(one_thread) << doc.dump(1);
  CHECK(run_convlab("policy --model lab-cnn --rate 100 --slo-p99-ms 40 --from " + one_thread)
            .out.find("was measured by build 0123456789ab") != std::string::npos);
}
