// The convlab command as a user meets it: every bad input exits 2 with one line naming the bad
// value (and the choices), partial success exits 3, and a good run writes its files.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/common/backends.hpp"

namespace {
namespace fs = std::filesystem;

struct Outcome {
  int code;
  std::string out, err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / ("convlab_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

Outcome run_convlab(const std::string& args) {
  const fs::path dir = scratch();
  const std::string cmd = std::string(CONVLAB_BINARY) + " " + args + " >" + (dir / "out").string() + " 2>" +
                          (dir / "err").string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

void check_usage_error(const std::string& args, const std::string& message) {
  CAPTURE(args);
  const Outcome o = run_convlab(args);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK_MESSAGE(o.err.find(message) != std::string::npos, o.err);
  CHECK(o.err.rfind("convlab: error: ", 0) == 0);
}
}  // namespace

TEST_CASE("cli: bad input exits 2 with one line naming the value and the choices") {
  const std::string quick = "run --warmup 0 --trials 1 --batch 1 ";
  check_usage_error(quick + "--model lenet-9", "unknown model 'lenet-9' (choices: lab-cnn)");
  check_usage_error(quick + "--backend tpu", "unknown backend 'tpu' (choices: cpu, cuda, metal)");
  check_usage_error(quick + "--kernel cpu.99_magic", "unknown kernel 'cpu.99_magic' (choices: cpu.00_reference");
  check_usage_error("run --batch 0", "--batch: '0' is not a positive integer");
  check_usage_error("run --batch 1,-3", "--batch: '-3' is not a positive integer");
  check_usage_error("run --batch 1,x", "--batch: 'x' is not a positive integer");
  check_usage_error("run --batch 1,,2", "--batch: '' is not a positive integer");
  check_usage_error("run --warmup -1", "--warmup: -1 must be 0 or more");
  check_usage_error("run --trials 0", "--trials: 0 must be at least 1");
  check_usage_error("run --trials many", "many");
  check_usage_error("run --threads -2", "--threads: -2 is not a positive integer");
  check_usage_error("run --percentile median", "unknown percentile method 'median' (choices: linear, nearest-rank)");
  check_usage_error("run --frobnicate", "--frobnicate");
  check_usage_error("dance", "dance");
  check_usage_error("overhead --trials 0", "--trials: 0 must be at least 1");
  check_usage_error(quick + "--json /nonexistent-dir/out.json", "cannot write '/nonexistent-dir/out.json'");
}

TEST_CASE("cli: listings and help") {
  const Outcome kernels = run_convlab("kernels");
  CHECK(kernels.code == 0);
  CHECK(kernels.out.find("cpu.00_reference") != std::string::npos);
  CHECK(kernels.out.find("metal") != std::string::npos);
  const Outcome models = run_convlab("models");
  CHECK(models.code == 0);
  CHECK(models.out.find("lab-cnn") != std::string::npos);
  CHECK(run_convlab("--help").code == 0);
  const Outcome env = run_convlab("env --json");
  CHECK(env.code == 0);
  CHECK(nlohmann::json::parse(env.out).contains("cpu_model"));
  const Outcome overhead = run_convlab("overhead --trials 1000");
  CHECK(overhead.code == 0);
  CHECK(overhead.out.find("p50") != std::string::npos);
}

TEST_CASE("cli: an unavailable backend is skipped with its reason, not crashed on") {
  for (const char* backend : {"cuda", "metal"}) {
    CAPTURE(backend);
    const Outcome o = run_convlab(std::string("run --warmup 0 --trials 1 --batch 1 --backend ") + backend);
    CHECK(o.code == 0);
    CHECK(o.err.find(std::string("skipping backend ") + backend) != std::string::npos);
  }
  if (!convlab::backend_status(convlab::Backend::cuda).available)
    CHECK(run_convlab("run --backend cuda").err.find("no CUDA device") != std::string::npos);
}

TEST_CASE("cli: a run writes JSON and CSV with every trial") {
  const fs::path dir = scratch();
  const std::string json = (dir / "r.json").string(), csv = (dir / "r.csv").string();
  const Outcome o = run_convlab("run --model lab-cnn --kernel cpu.00_reference --batch 1,3 --warmup 2 --trials 9 "
                                "--threads 1 --json " + json + " --csv " + csv);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("cpu.00_reference") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  CHECK(doc["schema"] == "convlab/1");
  CHECK(doc["context"]["threads"] == 1);
  REQUIRE(doc["results"].size() == 2);
  CHECK(doc["results"][1]["batch"] == 3);
  CHECK(doc["results"][1]["samples_ms"].size() == 9);
  CHECK(doc["results"][1]["threads"] == 1);
  CHECK(lines(slurp(csv)) == 3);
}

TEST_CASE("cli: a batch that does not fit is reported, the others are measured, exit 3") {
  const fs::path dir = scratch();
  const std::string json = (dir / "oom.json").string();
  const Outcome o =
      run_convlab("run --kernel cpu.00_reference --batch 1,100000000000,2 --warmup 0 --trials 2 --json " + json);
  CHECK(o.code == 3);
  CHECK(o.out.find("out of memory at batch 100000000000") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  REQUIRE(doc["results"].size() == 3);
  CHECK(doc["results"][0]["status"] == "ok");
  CHECK(doc["results"][1]["status"] == "out_of_memory");
  CHECK(doc["results"][2]["status"] == "ok");
}
