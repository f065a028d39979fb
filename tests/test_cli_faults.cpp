// Faults a real run meets: a batch the address space cannot hold (ulimit -v) and Ctrl-C in the
// middle of a long run. Both must leave a report that says what happened, never a crash or half a file.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.hpp"

using namespace convlab::test;

#ifdef CONVLAB_SANITIZED
// ASan reserves terabytes of shadow address space, so it cannot start under ulimit -v, and it
// aborts on a failed allocation rather than throwing std::bad_alloc.
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

TEST_CASE("faults: under ulimit -v the batch that cannot be allocated is reported, the run goes on, exit 3" *
          doctest::skip(kSanitized)) {
  const fs::path dir = scratch();
  const std::string json = (dir / "ulimit.json").string(), csv = (dir / "ulimit.csv").string();
  // 600 MB of address space: the process, its OpenMP threads and batches 1 and 2 fit; batch 100000
  // (about 6 GB of activations) does not, so its allocation fails for real, as on a small machine.
  const std::string cmd = "ulimit -v 600000; exec " + std::string(CONVLAB_BINARY) +
                          " run --kernel cpu.02_direct_xsimd,cpu.00_reference --batch 1,100000,2 --warmup 0"
                          " --trials 2 --json " + json + " --csv " + csv;
  const Outcome o = run_convlab_with("sh -c '" + cmd + "'");
  CHECK_MESSAGE(o.code == 3, o.err);
  CHECK(o.out.find("cpu.02_direct_xsimd      100000 out of memory at batch 100000") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  REQUIRE(doc["results"].size() == 6);
  for (int i : {0, 2, 3, 5}) CHECK(doc["results"][i]["status"] == "ok");
  for (int i : {1, 4}) CHECK(doc["results"][i]["error"] == "out of memory at batch 100000");
  CHECK(doc["complete"] == true);
  CHECK(lines(slurp(csv)) == 7);
}

namespace {
// Waits up to `seconds` for `pred`; false when it never held.
template <class Pred>
bool wait_for(Pred pred, int seconds) {
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds); std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(std::chrono::milliseconds(50)))
    if (pred()) return true;
  return pred();
}

// Starts `convlab run` with cpu.02 at batch 1, then 64 (quick, then `trials` trials long enough
// to stop it midway), its stdout into `out`; returns its pid.
pid_t start_run(const fs::path& out, const char* trials, const fs::path& json, const fs::path& csv) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::execl(CONVLAB_BINARY, CONVLAB_BINARY, "run", "--kernel", "cpu.02_direct_xsimd", "--batch", "1,64", "--warmup", "0",
            "--trials", trials, "--threads", "1", "--json", json.c_str(), "--csv", csv.c_str(), nullptr);
    ::_exit(127);
  }
  return pid;
}
}  // namespace

TEST_CASE("faults: SIGINT mid-run writes the finished results, marked incomplete, and exits 130") {
  const fs::path dir = scratch();
  const fs::path out = dir / "sigint.out", json = dir / "sigint.json", csv = dir / "sigint.csv";
  fs::remove(json);
  const pid_t pid = start_run(out, "1000", json, csv);
  const bool first_result = wait_for([&] { return slurp(out).find("cpu.02_direct_xsimd          1 ") != std::string::npos; }, 300);
  ::kill(pid, SIGINT);
  int status = 0;
  const bool ended = wait_for([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 60);
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  REQUIRE(first_result);
  REQUIRE(ended);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto doc = nlohmann::json::parse(slurp(json));
  CHECK(doc["complete"] == false);
  CHECK(doc["note"].get<std::string>().find("interrupted by SIGINT") != std::string::npos);
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["batch"] == 1);
  CHECK(doc["results"][0]["samples_ms"].size() == 1000);
  const std::string rows = slurp(csv);
  CHECK(lines(rows) == 3);  // header, batch 1, the incomplete note
  CHECK(rows.find("# incomplete: interrupted by SIGINT") != std::string::npos);
  CHECK_FALSE(fs::exists(json.string() + ".tmp"));
}

TEST_CASE("faults: a run killed mid-way leaves the previous results files as they were") {
  const fs::path dir = scratch();
  const fs::path out = dir / "killed.out", json = dir / "keep.json", csv = dir / "keep.csv";
  const std::string previous_json = "{\"schema\": \"convlab/1\", \"results\": []}\n", previous_csv = "kept,row\n";
  std::ofstream(json) << previous_json;
  std::ofstream(csv) << previous_csv;
  const pid_t pid = start_run(out, "2000", json, csv);
  // Killed (not interrupted: nothing can be written) while it measures batch 64.
  const bool measuring =
      wait_for([&] { return slurp(out).find("cpu.02_direct_xsimd          1 ") != std::string::npos; }, 300);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(measuring);
  CHECK(slurp(json) == previous_json);
  CHECK(slurp(csv) == previous_csv);
  for (const auto& entry : fs::directory_iterator(dir))  // no probe or temporary file left beside them
    CHECK_MESSAGE(entry.path().extension() != ".tmp", entry.path().string());
}
