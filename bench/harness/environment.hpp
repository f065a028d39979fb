// The machine and the build, written into every report: a number without its context is not
// a result.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace convlab {

struct Environment {
  std::string convlab_version, git_commit;
  bool git_dirty = false;
  std::string date_utc;  // ISO 8601
  std::string cpu_model;
  int logical_cpus = 0;
  int threads = 0;  // OpenMP threads in use for this run
  std::string isa;  // the instruction sets this build targets (compile-time)
  std::string cpu_isa;  // the ones this machine's CPU has, of those convlab cares about (run time)
  bool native_build = false;
  std::string compiler, cxx_flags, build_type;
  std::string os, kernel;
  std::vector<std::pair<std::string, std::string>> libraries;  // name, version
  std::string cuda;   // "device name (sm_90), runtime 13.0, driver 13.0" or why not
  std::string metal;  // available or why not
  double load_average = -1;  // 1-minute load average when the run started (includes convlab's own
                             // recent work); -1 when unknown
  // Cores kept busy by other processes, sampled over 100 ms while convlab sleeps (/proc/stat);
  // -1 when unknown.
  double other_busy_cores = -1;
  // True when other work competes for the cores: OpenMP barriers then wait for scheduler time
  // slices and multi-threaded timings inflate by whole milliseconds.
  bool busy() const { return other_busy_cores > 0.25; }
};

Environment collect_environment();
// One line naming this CPU (model, ISA, logical CPUs) and this build (commit, binary time): the
// key under which measured choices (cpu.auto's) may be reused.
std::string machine_and_build();
// Cores kept busy by other processes now, sampled over 100 ms while this thread sleeps; -1 when
// /proc/stat cannot tell. Over 0.25 the machine counts as busy (Environment::busy).
double other_busy_cores_now(int logical_cpus);
nlohmann::json to_json(const Environment& env);
// A few lines for the top of a human report.
std::string describe(const Environment& env);

}  // namespace convlab
