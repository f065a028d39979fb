// The teaching lab's commands as a user meets them: `run --end-to-end` (generated images or a
// folder, bad images exit 2), `run --fresh-process N`, and `sweep` (both modes, out of memory,
// no progress line when piped).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/pipeline/image.hpp"
#include "tests/cli_test_util.hpp"

using namespace convlab::test;

namespace {

const std::string kQuick = "--warmup 1 --trials 3 --threads 1 --kernel cpu.02_direct_xsimd ";

fs::path small_images() {  // three 40x30 images: PNG, JPEG, PPM
  const fs::path dir = scratch() / "images";
  fs::create_directories(dir);
  std::vector<std::uint8_t> rgb(40 * 30 * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i * 13);
  convlab::write_png(dir / "a.png", 40, 30, rgb);
  convlab::write_jpeg(dir / "b.jpg", 40, 30, rgb, 90);
  std::ofstream ppm(dir / "c.ppm", std::ios::binary);
  ppm << "P6\n40 30\n255\n";
  ppm.write(reinterpret_cast<const char*>(rgb.data()), static_cast<std::streamsize>(rgb.size()));
  return dir;
}

}  // namespace

TEST_CASE("cli lab: run --end-to-end on a folder reports the stages, their sum and the images") {
  const fs::path dir = small_images();
  const std::string json = (scratch() / "e2e.json").string(), csv = (scratch() / "e2e.csv").string();
  const Outcome o = run_convlab("run --end-to-end --images " + dir.string() + " --batch 1,4 " + kQuick + "--json " +
                                json + " --csv " + csv);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.err.empty());
  CHECK(o.out.find("cpu.02_direct_xsimd end-to-end") != std::string::npos);
  CHECK(o.out.find("stages p50 per batch: decode ") != std::string::npos);
  // GFLOP/s and %peak would divide the forward's FLOPs by decode + preprocess + forward: shown as -.
  const std::string row = o.out.substr(o.out.find("cpu.02_direct_xsimd end-to-end"));
  CHECK(row.substr(0, row.find('\n')).find("       -      -") != std::string::npos);
  CHECK(o.out.find("end-to-end rows show no GFLOP/s or %peak") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  REQUIRE(doc["results"].size() == 2);
  for (const auto& r : doc["results"]) {
    CHECK(r["mode"] == "end-to-end");
    const auto& s = r["stages_ms"];
    CHECK(s["decode"].get<double>() > 0);
    CHECK(s["preprocess"].get<double>() > 0);
    CHECK(s["sum"].get<double>() == doctest::Approx(s["decode"].get<double>() + s["preprocess"].get<double>() +
                                                    s["forward"].get<double>()));
    CHECK(s["images"].get<std::string>().find("(3 files)") != std::string::npos);
    CHECK(r["latency_ms"]["p50"].get<double>() >= s["forward"].get<double>());
  }
  CHECK(slurp(csv).find("decode_ms,preprocess_ms,forward_ms") != std::string::npos);
}

TEST_CASE("cli lab: run --end-to-end --precision int8 decodes and preprocesses into the int8 forward") {
  const fs::path dir = small_images();
  const std::string json = (scratch() / "e2e-int8.json").string();
  const Outcome o = run_convlab("run --end-to-end --images " + dir.string() + " --precision fp32,int8 --kernel "
                                "cpu.02_direct_xsimd,cpu.21_int8_direct_madd --batch 2 --calibration 4 --eval-inputs 4 --warmup 1 "
                                "--trials 3 --threads 1 --json " + json);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  const auto doc = nlohmann::json::parse(slurp(json));
  REQUIRE(doc["results"].size() == 2);
  for (const auto& r : doc["results"]) {
    CAPTURE(r["kernel"]);
    CHECK(r["mode"] == "end-to-end");
    CHECK(r["stages_ms"]["forward"].get<double>() > 0);
    CHECK(r["stages_ms"]["images"].get<std::string>().find("(3 files)") != std::string::npos);
  }
  CHECK(doc["results"][1]["precision"] == "int8");
}

TEST_CASE("cli lab: run --end-to-end without a folder generates 640x480 JPEGs and removes them") {
  const fs::path tmp = scratch() / "tmpdir";  // its own TMPDIR: other tests write to /tmp meanwhile
  fs::create_directories(tmp);
  const Outcome o = run_convlab_with("TMPDIR=" + tmp.string() + " " + CONVLAB_BINARY + " run --end-to-end --batch 2 " + kQuick);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("generated: 16 640x480 JPEGs") != std::string::npos);
  CHECK(fs::is_empty(tmp));  // the temporary folder is gone
}

TEST_CASE("cli lab: bad images and misused options exit 2 with one line") {
  const fs::path dir = small_images();
  std::ofstream(dir / "notes.txt") << "not an image";
  check_usage_error("run --end-to-end --images " + dir.string() + " --batch 1 " + kQuick, "notes.txt' is not an image");
  const fs::path empty = scratch() / "no_images";
  fs::create_directories(empty);
  check_usage_error("run --end-to-end --images " + empty.string(), "holds no image files");
  check_usage_error("run --end-to-end --images /nonexistent-dir", "'/nonexistent-dir' is not a folder");
  check_usage_error("run --images " + empty.string(), "--images: applies to --end-to-end runs only");
  check_usage_error("run --fresh-process -1", "--fresh-process: -1 must be 0 or more");
  check_usage_error("sweep --mode fast", "--mode: unknown mode 'fast' (choices: model-only, end-to-end)");
  check_usage_error("sweep --batch 0", "--batch: '0' is not a positive integer");
}

TEST_CASE("cli lab: run --fresh-process N times N new processes' first forward, as a distribution") {
  const std::string json = (scratch() / "fresh.json").string();
  const Outcome o = run_convlab("run --fresh-process 3 --batch 2 " + kQuick + "--json " + json);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.err.empty());
  CHECK(o.out.find("3 fresh processes, start to first result: p50 ") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  const auto& f = doc["results"][0]["fresh_process"];
  CHECK(f["runs"] == 3);
  REQUIRE(f["samples_ms"].size() == 3);
  for (std::size_t i = 0; i < 3; ++i)  // from process start: more than the forward alone
    CHECK(f["samples_ms"][i].get<double>() > f["first_forward_samples_ms"][i].get<double>());
  CHECK(f["start_to_result_ms"]["max"].get<double>() >= f["start_to_result_ms"]["p50"].get<double>());
  CHECK(doc["results"][0]["cold_ms"].get<double>() > 0);
}

TEST_CASE("cli lab: sweep measures every batch model-only and end-to-end, with no progress line when piped") {
  const std::string json = (scratch() / "sweep.json").string();
  const Outcome o = run_convlab("sweep --batch 1,3 " + kQuick + "--json " + json);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.err.empty());  // stderr is a pipe here: no \r progress line
  CHECK(o.out.find("model-only cpu.02_direct_xsimd: batch 1 -> 3: latency x") != std::string::npos);
  CHECK(o.out.find("end-to-end cpu.02_direct_xsimd: batch 1 -> 3") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  REQUIRE(doc["results"].size() == 4);
  CHECK_FALSE(doc["results"][0].contains("mode"));  // model-only CPU rows keep the old shape
  CHECK(doc["results"][3]["mode"] == "end-to-end");
  CHECK(doc["results"][3]["batch"] == 3);
  CHECK(doc["results"][3]["memory"]["peak_rss_bytes"].get<double>() > 0);
}

#ifdef CONVLAB_SANITIZED
constexpr bool kSanitized = true;  // ASan cannot start under ulimit -v (see test_cli_faults.cpp)
#else
constexpr bool kSanitized = false;
#endif

TEST_CASE("cli lab: sweep says where memory runs out, goes on with the smaller batches, exit 3" *
          doctest::skip(kSanitized)) {
  const std::string cmd = "ulimit -v 600000; exec " + std::string(CONVLAB_BINARY) + " sweep --mode model-only"
                          " --batch 100000,2 --warmup 0 --trials 2 --threads 1 --kernel cpu.02_direct_xsimd";
  const Outcome o = run_convlab_with("sh -c '" + cmd + "'");
  CHECK_MESSAGE(o.code == 3, o.err);
  CHECK(o.out.find("out of memory at batch 100000 (largest batch that fit: 2)") != std::string::npos);
}
