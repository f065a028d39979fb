// The progress line: drawn (with \r) only when enabled and only after its delay; cleared at the end.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "bench/harness/progress.hpp"

using namespace convlab;
using namespace std::chrono_literals;

namespace {
std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}
}  // namespace

TEST_CASE("progress: a terminal gets the line rewritten in place, then cleared") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    Progress p(f, true, 0ms);
    p.set("sweep: lab-cnn batch 32 (3/8)");
    std::this_thread::sleep_for(500ms);
  }
  const std::string s = read_all(f);
  CHECK(s.find("\rsweep: lab-cnn batch 32 (3/8)") != std::string::npos);
  CHECK(s.substr(s.size() - 4) == "\r\033[K");  // nothing left on the terminal's line
  std::fclose(f);
}

TEST_CASE("progress: nothing when not a terminal, nor before the delay") {
  for (const bool enabled : {false, true}) {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    {
      Progress p(f, enabled, 60s);
      p.set("run: lab-cnn cpu.00_reference batch 1 (1/2)");
      p.above([] {});
      std::this_thread::sleep_for(300ms);
    }
    CHECK(read_all(f).empty());
    std::fclose(f);
  }
}
