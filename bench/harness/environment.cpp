#include "bench/harness/environment.hpp"

#include <omp.h>
#include <sys/utsname.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <Eigen/Core>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <xsimd/config/xsimd_config.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "bench/harness/build_info.hpp"
#include "kernels/common/backends.hpp"
#include "bench/report/wording.hpp"

namespace convlab {

namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& s : names) out += (out.empty() ? "" : " ") + s;
  return out.empty() ? "unknown" : out;
}

// What this binary was compiled to use; the machine may support more (machine_isa).
std::string build_isa() {
  std::vector<std::string> isa;
#if defined(__x86_64__)
  isa.emplace_back("x86-64");
#endif
#if defined(__SSE4_2__)
  isa.emplace_back("sse4.2");
#endif
#if defined(__AVX__)
  isa.emplace_back("avx");
#endif
#if defined(__AVX2__)
  isa.emplace_back("avx2");
#endif
#if defined(__FMA__)
  isa.emplace_back("fma");
#endif
#if defined(__AVX512F__)
  isa.emplace_back("avx512f");
#endif
#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
  isa.emplace_back("avx512bw/vl/dq");
#endif
#if defined(__aarch64__)
  isa.emplace_back("aarch64");
#endif
#if defined(__ARM_NEON)
  isa.emplace_back("neon");
#endif
#if defined(__ARM_FEATURE_SVE)
  isa.emplace_back("sve");
#endif
  return joined(isa);
}

// What this machine's CPU offers, asked at run time, of the instruction sets that matter to
// convlab's kernels: a portable or AVX2 build on an AVX-512 machine says so.
std::string machine_isa() {
  std::vector<std::string> isa;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) isa.emplace_back("avx2");
  if (__builtin_cpu_supports("fma")) isa.emplace_back("fma");
  if (__builtin_cpu_supports("avx512f")) isa.emplace_back("avx512f");
  if (__builtin_cpu_supports("avx512vnni")) isa.emplace_back("avx512vnni");
#elif defined(__aarch64__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  if (hwcap & HWCAP_ASIMD) isa.emplace_back("neon");
  if (hwcap & HWCAP_ASIMDDP) isa.emplace_back("dotprod");
  if (hwcap & HWCAP_SVE) isa.emplace_back("sve");
#endif
  return joined(isa);
}

std::string openmp_version() {
  switch (_OPENMP) {
    case 201511: return "4.5";
    case 201811: return "5.0";
    case 202011: return "5.1";
    default: return fmt::format("{}", _OPENMP);
  }
}

// Total and idle jiffies of all CPUs, from the first line of /proc/stat; {0, 0} when unknown.
std::pair<double, double> cpu_jiffies() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") return {0, 0};
  return {user + nice + system + idle + iowait + irq + softirq + steal, idle + iowait};
}

}  // namespace

// This process sleeps while it samples, so whatever kept the cores busy was someone else.
double other_busy_cores_now(int logical_cpus) {
  const auto [total0, idle0] = cpu_jiffies();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto [total1, idle1] = cpu_jiffies();
  if (total1 <= total0) return -1;
  return (1.0 - (idle1 - idle0) / (total1 - total0)) * logical_cpus;
}

std::string machine_and_build() {
  std::error_code ec;  // the binary's time: a rebuild from the same (or a dirty) commit is another build
  const auto built = std::filesystem::last_write_time("/proc/self/exe", ec);
  return fmt::format("{}; {}; {} CPUs; convlab {}{} built {}", cpu_model_name(), machine_isa(),
                     std::thread::hardware_concurrency(), build::git_commit, build::git_dirty ? "+dirty" : "",
                     ec ? 0 : built.time_since_epoch().count());
}

Environment collect_environment() {
  Environment env;
  env.convlab_version = build::kVersion;
  env.git_commit = build::git_commit;
  env.git_dirty = build::git_dirty;
  env.date_utc = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
  env.cpu_model = cpu_model_name();
  env.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  env.threads = omp_get_max_threads();
  env.isa = build_isa();
  env.cpu_isa = machine_isa();
  env.native_build = build::kNative;
  env.compiler = fmt::format("{} {}", build::kCompilerId, build::kCompilerVersion);
  env.cxx_flags = build::kCxxFlags;
  env.build_type = build::kBuildType;
  utsname u{};
  if (uname(&u) == 0) {
    env.os = u.sysname;
    env.kernel = fmt::format("{} {}", u.release, u.machine);
  }
  std::ifstream os_release("/etc/os-release");
  for (std::string line; std::getline(os_release, line);)
    if (line.rfind("PRETTY_NAME=", 0) == 0) env.os = line.substr(13, line.size() - 14);
  env.libraries = {
      {"eigen", fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)},
      {"xsimd", fmt::format("{}.{}.{}", XSIMD_VERSION_MAJOR, XSIMD_VERSION_MINOR, XSIMD_VERSION_PATCH)},
      {"fmt", fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
      {"nlohmann_json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                                    NLOHMANN_JSON_VERSION_PATCH)},
      {"openmp", openmp_version()},
  };
  env.cuda = backend_status(Backend::cuda).detail;
#ifdef CONVLAB_WITH_CUDA
  env.libraries.emplace_back("cuda_architectures", build::kCudaArchitectures);
#endif
  env.metal = backend_status(Backend::metal).detail;
  std::ifstream loadavg("/proc/loadavg");
  loadavg >> env.load_average;
  if (!loadavg) env.load_average = -1;
  env.other_busy_cores = other_busy_cores_now(env.logical_cpus);
  return env;
}

nlohmann::json to_json(const Environment& env) {
  nlohmann::json libs = nlohmann::json::object();
  for (const auto& [name, version] : env.libraries) libs[name] = version;
  return {
      {"convlab_version", env.convlab_version},
      {"git_commit", env.git_commit},
      {"git_dirty", env.git_dirty},
      {"date_utc", env.date_utc},
      {"cpu_model", env.cpu_model},
      {"logical_cpus", env.logical_cpus},
      {"threads", env.threads},
      {"build_isa", env.isa},
      {"cpu_isa", env.cpu_isa},
      {"native_build", env.native_build},
      {"compiler", env.compiler},
      {"cxx_flags", env.cxx_flags},
      {"build_type", env.build_type},
      {"os", env.os},
      {"kernel", env.kernel},
      {"libraries", libs},
      {"cuda", env.cuda},
      {"metal", env.metal},
      {"load_average", env.load_average},
      {"other_busy_cores", env.other_busy_cores},
      {"machine_busy", env.busy()},
  };
}

std::string describe(const Environment& env) {
  std::string libs;
  for (const auto& [name, version] : env.libraries) libs += fmt::format("{}{} {}", libs.empty() ? "" : ", ", name, version);
  return fmt::format(
      "convlab {} ({}{}) {}\n"
      "cpu:      {} ({}; {}), {} in use\n"
      "build:    {} {} [{}], targets {}{}\n"
      "system:   {}, kernel {}\n"
      "libs:     {}\n"
      "cuda:     {}\n"
      "metal:    {}\n"
      "load:     {:.2f} cores busy with other work just before the run; 1-minute load average {:.2f}{}\n",
      env.convlab_version, env.git_commit.substr(0, 12), env.git_dirty ? ", dirty" : "", env.date_utc, env.cpu_model,
      count_of(env.logical_cpus, "logical CPU"), env.cpu_isa, count_of(env.threads, "thread"), env.compiler, env.build_type,
      env.cxx_flags, env.isa, env.native_build ? " (native)" : "", env.os, env.kernel, libs, env.cuda, env.metal,
      env.other_busy_cores, env.load_average,
      env.busy() ? " -- WARNING: other work is using the cores; multi-threaded timings are not trustworthy" : "");
}

}  // namespace convlab
