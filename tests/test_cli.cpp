// The convlab command as a user meets it: every bad input exits 2 with one line naming the bad
// value (and the choices), partial success exits 3, and a good run writes its files.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "kernels/common/backends.hpp"
#include "tests/cli_test_util.hpp"

using namespace convlab::test;

TEST_CASE("cli: bad input exits 2 with one line naming the value and the choices") {
  const std::string quick = "run --warmup 0 --trials 1 --batch 1 ";
  check_usage_error(quick + "--model lenet-9", "unknown model 'lenet-9' (choices: lab-cnn, lenet5, resnet8, mobilenet-tiny, resnet18, mobilenet-v2)");
  check_usage_error(quick + "--backend tpu", "unknown backend 'tpu' (choices: cpu, cuda, metal)");
  check_usage_error(quick + "--kernel cpu.99_magic", "unknown kernel 'cpu.99_magic' (choices: cpu.00_reference");
  check_usage_error("run --batch 0", "--batch: '0' is not a positive integer");
  check_usage_error("run --batch 1,-3", "--batch: '-3' is not a positive integer");
  check_usage_error("run --batch 1,x", "--batch: 'x' is not a positive integer");
  check_usage_error("run --batch 1,,2", "--batch: '' is not a positive integer");
  check_usage_error("run --warmup -1", "--warmup: -1 must be 0 or more");
  check_usage_error("run --trials 0", "--trials: 0 must be at least 1");
  check_usage_error("run --trials many", "many");
  check_usage_error("run --settle-ms 2", "--settle-ms applies to --interleave runs only");
  check_usage_error("conv --problem mb1ic3ih8oc4kh3 --interleave --settle-ms -1", "--settle-ms: -1 must be 0 or more");
  check_usage_error("run --threads -2", "--threads: '-2' is not a positive integer");
  // More threads than CPUs runs, but says loudly that the cores are oversubscribed.
  const std::string too_many = std::to_string(std::thread::hardware_concurrency() + 1);
  const Outcome over = run_convlab("run --kernel cpu.02_direct_xsimd --batch 1 --warmup 0 --trials 1 --threads " + too_many);
  CHECK(over.code == 0);
  CHECK(over.err.find("convlab: warning: --threads " + too_many + " is more than the") == 0);
  CHECK(over.err.find("oversubscribed") != std::string::npos);
  // 0 is refused too, not silently "every core": leaving --threads out means that.
  for (const std::string command : {"--threads 0", "run --threads 0", "conv --problem mb1ic3ih8oc4kh3 --threads 0",
                                    "peak --threads 0", "sweep --threads 0", "policy --rate 10 --slo-p99-ms 5 --threads 0"})
    check_usage_error(command, "--threads: '0' is not a positive integer (leave --threads out to use every core)");
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
  // Columns line up whatever the longest id (cuda.07_tensorcore_tf32_pipelined is 33 characters).
  std::istringstream rows(kernels.out);
  std::string header, row;
  std::getline(rows, header);
  const std::size_t backend_column = header.find("backend");
  std::size_t checked = 0;
  while (std::getline(rows, row)) {
    const convlab::KernelInfo* k = convlab::find_kernel(row.substr(0, row.find(' ')));
    if (k == nullptr) continue;  // the backends' status lines after the table
    const std::string backend(convlab::to_string(k->backend));
    CHECK_MESSAGE(row.compare(backend_column, backend.size(), backend) == 0, row);
    ++checked;
  }
  CHECK(checked == convlab::all_kernels().size());
  for (const convlab::AbsentKernel& a : convlab::absent_kernels())  // e.g. oneDNN in a cross build
    CHECK(kernels.out.find(std::string(a.id) + " ") != std::string::npos);
  const Outcome models = run_convlab("models");
  CHECK(models.code == 0);
  CHECK(models.out.find("lab-cnn") != std::string::npos);
  CHECK(run_convlab("--help").code == 0);
  const Outcome env = run_convlab("env --json");
  CHECK(env.code == 0);
  const nlohmann::json env_json = nlohmann::json::parse(env.out);
  CHECK(env_json.contains("cpu_model"));
  // The ISA the build targets and the one the machine has, named (ARM64: NEON, by both).
  const std::string build_isa = env_json.value("build_isa", ""), cpu_isa = env_json.value("cpu_isa", "");
#if defined(__aarch64__)
  CHECK(build_isa.find("neon") != std::string::npos);
  CHECK(cpu_isa.find("neon") != std::string::npos);
#elif defined(__AVX2__)
  CHECK(build_isa.find("avx2") != std::string::npos);
  CHECK(cpu_isa.find("avx2") != std::string::npos);
#endif
  const Outcome overhead = run_convlab("overhead --trials 1000");
  CHECK(overhead.code == 0);
  CHECK(overhead.out.find("p50") != std::string::npos);
}

TEST_CASE("cli: a backend named but unavailable exits 4 with its reason, so a script knows nothing ran") {
  for (const convlab::Backend backend : {convlab::Backend::cuda, convlab::Backend::metal}) {
    const std::string name(convlab::to_string(backend));
    CAPTURE(name);
    for (const std::string command : {"run --warmup 0 --trials 1 --batch 1 --backend ",
                                      "conv --problem mb1ic3ih8oc8oh8kh3ph1 --warmup 0 --trials 1 --backend ",
                                      "sweep --warmup 0 --trials 1 --batch 1 --mode model-only --backend "}) {
      CAPTURE(command);
      const Outcome o = run_convlab(command + name);
      if (convlab::backend_status(backend).available) {  // a GPU machine: it runs
        CHECK(o.code == 0);
        CHECK(o.out.find(name + ".") != std::string::npos);
      } else {
        CHECK(o.code == 4);
        CHECK(lines(o.err) == 1);
        CHECK(o.err.find("convlab: skipping backend " + name) == 0);
      }
    }
  }
  if (!convlab::backend_status(convlab::Backend::cuda).available)
    CHECK(run_convlab("run --backend cuda").err.find("no CUDA device") != std::string::npos);
  check_usage_error("run --cuda-graph --backend cpu", "--cuda-graph applies to --backend cuda only");
  check_usage_error("run --no-fuse", "--no-fuse applies to the GPU backends (cuda, metal) only");
}

TEST_CASE("cli: a run writes JSON and CSV with every trial") {
  const fs::path dir = scratch();
  const std::string json = (dir / "r.json").string(), csv = (dir / "r.csv").string();
  // One kernel, so the result count is batches, whatever other kernels the list holds.
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
  const std::string table = slurp(csv);
  CHECK(lines(table) == 3);
  CHECK(table.starts_with("model,problem,backend,kernel,precision,mode,batch,"));
  CHECK(table.find("lab-cnn,,cpu,cpu.00_reference,fp32,") != std::string::npos);
  // Every row has the header's columns, an int8 row says so.
  const Outcome int8 = run_convlab("run --model lenet5 --precision int8 --kernel cpu.21_int8_direct_madd --batch 1 "
                                   "--warmup 1 --trials 3 --threads 1 --calibration 2 --eval-inputs 2 --csv " + csv);
  REQUIRE_MESSAGE(int8.code == 0, int8.err);
  const std::string rows = slurp(csv);
  CHECK(rows.find(",cpu.21_int8_direct_madd,int8,") != std::string::npos);
  const auto columns = [](std::string_view line) { return std::ranges::count(line, ',') + 1; };
  const std::string_view header(rows.data(), rows.find('\n'));
  const std::string_view row(rows.data() + header.size() + 1, rows.find('\n', header.size() + 1) - header.size() - 1);
  CHECK(columns(row) == columns(header));
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

TEST_CASE("cli: conv times single convolutions, checked against the oracle") {
  const fs::path dir = scratch();
  const std::string json = (dir / "conv.json").string();
  const Outcome o = run_convlab("conv --problem mb2ic8ih9oc8oh9kh3ph1 --batch 1,2 --warmup 1 --trials 3 --json " + json);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("mb1ic8ih9oc8oh9kh3ph1") != std::string::npos);
  CHECK(o.out.find("vs onednn") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  CHECK(doc["context"].contains("peak"));
  // The peak is measured again after the runs, so a busy start shows (and is warned about).
  CHECK(doc["context"]["peak"]["fma_gflops_all_threads_after"].get<double>() > 0);
  REQUIRE(doc["results"].size() >= 2);
  const auto& r = doc["results"][0];
  CHECK(r["problem"] == "mb1ic8ih9oc8oh9kh3ph1");
  CHECK(r["samples_ms"].size() == 3);
  CHECK(r["error_vs_reference"]["sampled"] == false);
  CHECK(r["error_vs_reference"]["max_abs"].get<double>() < 1e-4);
  CHECK(r["percent_of_peak"].get<double>() > 0);
  CHECK_FALSE(r.contains("interleaved"));
  CHECK_FALSE(r.contains("settle_ms"));

  // --interleave: the same rows, each marked, and the protocol line says so, with the untimed
  // runs before each trial (harness.hpp: settle_ms, 1 ms unless --settle-ms says otherwise).
  for (const std::string settle : {"", " --settle-ms 0.5"}) {
    const Outcome i = run_convlab("conv --problem mb1ic8ih9oc8oh9kh3ph1 --kernel cpu.01_im2col_eigen,cpu.02_direct_xsimd "
                                  "--interleave --warmup 1 --trials 3 --json " + json + settle);
    REQUIRE(i.code == 0);
    CHECK(i.out.find("kernels interleaved trial by trial (each trial after " + std::string(settle.empty() ? "1" : "0.5") +
                     " ms or more of its own untimed runs)") != std::string::npos);
    const auto interleaved = nlohmann::json::parse(slurp(json));
    REQUIRE(interleaved["results"].size() == 2);
    for (const auto& row : interleaved["results"]) {
      CHECK(row["interleaved"] == true);
      CHECK(row["settle_ms"] == (settle.empty() ? 1.0 : 0.5));
      CHECK(row["samples_ms"].size() == 3);
    }
  }
}

TEST_CASE("cli: every flag a row shows is explained under the table") {
  // Over 2 GFLOP: the oracle checks a sample of the outputs, and the row and the legend say so.
  const Outcome o = run_convlab("conv --problem mb16ic64ih56oc64oh56kh3ph1 --kernel cpu.02_direct_xsimd --warmup 0 --trials 1");
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("sampled-check,") != std::string::npos);
  CHECK(o.out.find("sampled-check = the outputs were checked against the oracle on an even sample of 4096") !=
        std::string::npos);
  CHECK(run_convlab("conv --problem mb1ic4ih8oc4oh8kh3ph1 --warmup 0 --trials 1").out.find("sampled-check") ==
        std::string::npos);
  // Winograd's rate counts the direct convolution's FLOPs: flagged effective, and explained.
  const Outcome winograd = run_convlab("conv --problem mb1ic8ih8oc8oh8kh3ph1 --kernel cpu.04_winograd_f4x3,cpu.02_direct_xsimd "
                                       "--warmup 0 --trials 1 --json " + (scratch() / "winograd.json").string());
  REQUIRE_MESSAGE(winograd.code == 0, winograd.err);
  const auto row_of = [&winograd](const std::string& kernel) {
    const auto at = winograd.out.find("  " + kernel + " ");
    return winograd.out.substr(at, winograd.out.find('\n', at) - at);
  };
  CHECK(row_of("cpu.04_winograd_f4x3").find("effective_flops") != std::string::npos);
  CHECK(row_of("cpu.02_direct_xsimd").find("effective_flops") == std::string::npos);
  CHECK(winograd.out.find("effective_flops = GFLOP/s and %peak count the direct convolution's FLOPs") != std::string::npos);
  CHECK(slurp(scratch() / "winograd.json").find("\"effective_flops\": true") != std::string::npos);
}

TEST_CASE("cli: conv's bad input exits 2 with the file and line") {
  const fs::path dir = scratch();
  const fs::path bad = dir / "bad.txt";
  std::ofstream(bad) << "# a comment\n\nmb1ic3ih8oc4kh3  a role\nmb1ic3ih8oc4kq3\n";
  check_usage_error("conv --problems " + bad.string(), bad.string() + ":4: bad problem descriptor 'mb1ic3ih8oc4kq3'");
  check_usage_error("conv", "conv needs exactly one of --problem DESCRIPTOR or --problems FILE");
  check_usage_error("conv --problem mb1ic3ih8oc4kh3 --problems " + bad.string(), "exactly one of");
  check_usage_error("conv --problems /nonexistent/problems.txt", "--problems: cannot read '/nonexistent/problems.txt'");
  check_usage_error("conv --problem mb1ic3ih8oc4kh3 --kernel cpu.77_x", "unknown kernel 'cpu.77_x'");
  // A kernel that runs none of the problems is an error, not an empty table.
  check_usage_error("conv --problem g2mb1ic8ih9oc8oh9kh3ph1 --kernel cpu.02_direct_xsimd",
                    "--kernel: cpu.02_direct_xsimd runs none of the problems (g2mb1ic8ih9oc8oh9kh3ph1: groups = 2");
  check_usage_error("conv --precision int8 --problem g2mb1ic8ih9oc8oh9kh3ph1 --kernel cpu.auto",
                    "--kernel: cpu.auto_int8 runs none of the problems (g2mb1ic8ih9oc8oh9kh3ph1: no other int8 CPU kernel");
  check_usage_error("conv --problem ic3ih8oc4kh9", "larger than the padded input");
  const fs::path empty = dir / "empty.txt";
  std::ofstream(empty) << "# nothing\n";
  check_usage_error("conv --problems " + empty.string(), "holds no problem");
}

TEST_CASE("cli: a row's memory is its own: the same row reports the same memory after a small row or a large one") {
#ifdef CONVLAB_SANITIZED
  std::printf("SKIPPED: ASan keeps freed memory in quarantine, so rows' resident memory is not their own\n");
#else
  const fs::path dir = scratch();
  const std::string alone = (dir / "alone.json").string(), after = (dir / "after.json").string();
  const std::string quick = " --warmup 0 --trials 2 --json ";
  // After a small row, not first: a process's first row also holds its one-time setup (0.4-0.6 MiB
  // of a 0.7-0.9 MiB row here), which left the 0.5 MiB margin below to chance on a busy machine.
  REQUIRE(run_convlab("run --kernel cpu.02_direct_xsimd --batch 2,1" + quick + alone).code == 0);
  REQUIRE(run_convlab("run --kernel cpu.01_im2col_eigen,cpu.02_direct_xsimd --batch 128,1" + quick + after).code == 0);
  const auto row = [](const std::string& path, const std::string& kernel, int batch) {
    const nlohmann::json doc = nlohmann::json::parse(slurp(path));
    for (const auto& r : doc["results"])
      if (r["kernel"] == kernel && r["batch"] == batch) return r["memory"];
    FAIL("no row " << kernel << " batch " << batch << " in " << path);
    return nlohmann::json();
  };
  const auto first = row(alone, "cpu.02_direct_xsimd", 1), later = row(after, "cpu.02_direct_xsimd", 1);
  const auto large = row(after, "cpu.01_im2col_eigen", 128);
  CHECK(first["row_memory_is_own"] == true);
  CHECK(later["row_memory_is_own"] == true);
  const auto mib = [](const nlohmann::json& m) { return m["row_peak_bytes"].get<double>() / (1 << 20); };
  CAPTURE(mib(first));
  CAPTURE(mib(later));
  CAPTURE(mib(large));
  CHECK(mib(large) > 10 * mib(first));                  // batch 128 of im2col holds far more...
  CHECK(std::abs(mib(later) - mib(first)) < 0.5);       // ...and none of it shows in the next row
  // The plan's accounted bytes are beside it, and the row's peak holds them.
  const double plan = (first["weights_bytes"].get<double>() + first["activations_bytes"].get<double>() +
                       first["workspace_bytes"].get<double>()) / (1 << 20);
  CHECK(mib(first) + 0.1 >= plan);
#endif
}

TEST_CASE("cli: the default lab runs the CPU kernels at batch 1 and 32 and says what batching bought") {
  const Outcome lab = run_convlab("--warmup 1 --trials 3");
  REQUIRE(lab.code == 0);
  // Every kernel that runs lab-cnn's layers; cpu.05 (depthwise) and cpu.06 (1x1) do not.
  for (const char* id : {"cpu.00_reference", "cpu.01_im2col_eigen", "cpu.02_direct_xsimd", "cpu.03_winograd_f2x3",
                         "cpu.04_winograd_f4x3", "cpu.auto"})
    CHECK_MESSAGE(lab.out.find(std::string(id) + ": batch 32 takes") != std::string::npos, id);
  CHECK(lab.out.find("p99_few_trials") != std::string::npos);
  CHECK(run_convlab("--trials 0").code == 2);
}
