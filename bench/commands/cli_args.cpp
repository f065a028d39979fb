#include "bench/commands/cli_args.hpp"

#include <omp.h>

#include <charconv>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/harness/environment.hpp"
#include "bench/harness/harness.hpp"
#include "kernels/common/error.hpp"
#include "models/onnx_model.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/auto_select.hpp"

namespace convlab {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

std::vector<std::int64_t> parse_batches(const std::string& list) {
  std::vector<std::int64_t> batches;
  for (const std::string& item : split(list, ',')) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    const bool digits_only = !item.empty() && end == item.data() + item.size();
    // Beyond a descriptor's limit, tensor sizes (batch x item) could overflow int64.
    if (digits_only && (ec == std::errc::result_out_of_range || (ec == std::errc() && v > kMaxBatch)))
      throw InputError(fmt::format("--batch: {} is too large (at most {})", item, kMaxBatch));
    if (!digits_only || ec != std::errc() || v < 1)
      throw InputError(fmt::format("--batch: '{}' is not a positive integer (e.g. --batch 1,32)", item));
    batches.push_back(v);
  }
  return batches;
}

Backend parse_backend(const std::string& name) {
  for (Backend b : {Backend::cpu, Backend::cuda, Backend::metal})
    if (to_string(b) == name) return b;
  throw InputError(fmt::format("--backend: unknown backend '{}' (choices: cpu, cuda, metal)", name));
}

std::string parse_model(const std::string& name) {
  if (is_onnx_model(name)) return name;  // read (and checked) when the run builds it
  try {
    return std::string(model_or_throw(name).name);
  } catch (const InputError& e) {
    throw InputError(std::string("--model: ") + e.what() + ", or a .onnx file");
  }
}

Precision parse_precision(const std::string& text) {
  if (text == "fp32") return Precision::fp32;
  if (text == "int8") return Precision::int8;
  throw InputError(fmt::format("--precision: '{}' is not one of fp32, int8", text));
}

Observer parse_observer(const std::string& text) {
  if (text == "minmax") return Observer::minmax;
  if (text == "histogram") return Observer::histogram;
  throw InputError(fmt::format("--observer: '{}' is not one of minmax, histogram", text));
}

std::vector<std::string> parse_kernel_ids(const std::string& list, Backend backend, Precision precision) {
  std::vector<std::string> ids = split(list, ',');
  if (precision == Precision::int8) {
    for (std::string& id : ids) {
      if (id == "cpu.auto" && backend == Backend::cpu) id = kAutoInt8Id;
      if (id == "cuda.auto" && backend == Backend::cuda) id = kCudaAutoInt8Id;
      const Int8KernelInfo* k = find_int8_kernel(id);
      if (k != nullptr && k->backend == backend) continue;
      for (const AbsentKernel& a : absent_kernels())
        if (a.id == id) throw InputError(fmt::format("--kernel: {} is not built into this binary: {}", id, a.why));
      std::string choices;
      for (const Int8KernelInfo& info : all_int8_kernels())
        if (info.backend == backend) choices += (choices.empty() ? "" : ", ") + std::string(info.id);
      throw InputError(fmt::format("--kernel: '{}' is not an int8 kernel of {} (choices: {})", id, to_string(backend),
                                   choices.empty() ? "none built" : choices + ", all"));
    }
    return ids;
  }
  for (const std::string& id : ids) {
    const KernelInfo* k = find_kernel(id);
    if (k != nullptr && k->backend == backend) continue;
    for (const AbsentKernel& a : absent_kernels())
      if (a.id == id) throw InputError(fmt::format("--kernel: {} is not built into this binary: {}", id, a.why));
    std::string choices;
    for (const KernelInfo& info : all_kernels())
      if (info.backend == backend) choices += (choices.empty() ? "" : ", ") + std::string(info.id);
    throw InputError(fmt::format("--kernel: unknown kernel '{}' (choices: {})", id,
                                 choices.empty() ? "none built" : choices + ", all"));
  }
  return ids;
}

void add_threads_option(CLI::App& cmd, int& threads, const std::string& help) {
  cmd.add_option("--threads", threads, help)
      ->check(CLI::Validator(
          [](const std::string& text) {
            int v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 1)
              return fmt::format("'{}' is not a positive integer (leave --threads out to use every core)", text);
            return std::string();
          },
          "N", ""));
}

void add_settle_option(CLI::App& cmd, std::optional<double>& settle_ms) {
  cmd.add_option("--settle-ms", settle_ms,
                 fmt::format("With --interleave: before each trial, untimed runs of the same kernel for at least this many "
                             "ms, one at least (default {}; 0: one run)", Protocol{}.settle_ms));
}

double settle_ms_for(const std::optional<double>& settle_ms, bool interleave) {
  if (!settle_ms) return Protocol{}.settle_ms;
  if (!interleave) throw InputError("--settle-ms applies to --interleave runs only");
  if (!(*settle_ms >= 0)) throw InputError(fmt::format("--settle-ms: {} must be 0 or more", *settle_ms));
  return *settle_ms;
}

void set_threads(int threads) {
  if (threads < 0) throw InputError(fmt::format("--threads: {} is not a positive integer", threads));
  if (threads == 0) return;
  if (const int cpus = omp_get_num_procs(); threads > cpus)  // allowed (it can be the lesson), never silent
    fmt::print(stderr,
               "convlab: warning: --threads {} is more than the {} CPUs here: threads will take turns on the cores "
               "(oversubscribed), and every time measured will be longer than with --threads {}\n",
               threads, cpus, cpus);
  omp_set_num_threads(threads);
}

void set_auto_options_from_environment() {
  const auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
  };
  std::string cache = env("CONVLAB_AUTO_CACHE");
  if (cache.empty() && !env("XDG_CACHE_HOME").empty()) cache = env("XDG_CACHE_HOME") + "/convlab/cpu-auto.tsv";
  if (cache.empty() && !env("HOME").empty()) cache = env("HOME") + "/.cache/convlab/cpu-auto.tsv";
  if (cache == "off") cache.clear();
  cpu::set_auto_options({.strict_accuracy = env("CONVLAB_AUTO_STRICT") == "1",
                         .cache_file = std::move(cache),
                         .machine = machine_and_build()});
}

void add_auto_options(CLI::App& cmd) {
  cmd.add_flag_callback(
      "--auto-strict",
      [] {
        setenv("CONVLAB_AUTO_STRICT", "1", 1);
        set_auto_options_from_environment();
      },
      "cpu.auto: leave out Winograd F(4x4) (cpu.04), whose accuracy bound is 50x looser than F(2x2)'s");
  cmd.add_option_function<std::string>(
         "--auto-cache",
         [](const std::string& file) {
           if (file.empty()) throw InputError("--auto-cache: give a file, or off");
           setenv("CONVLAB_AUTO_CACHE", file.c_str(), 1);
           set_auto_options_from_environment();
         },
         "cpu.auto: the file its choices are remembered in, or off (default: ~/.cache/convlab/cpu-auto.tsv)")
      ->type_name("FILE|off");
}

}  // namespace convlab
