// cpu.auto's settings and the file that remembers its choices (kernels/cpu/cpu.auto.cpp).
// The command line sets them once, before anything is planned; the library's default measures at
// every plan and remembers nothing, so tests and embedders never touch a user's files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernels/common/kernel.hpp"

namespace convlab::cpu {

struct AutoOptions {
  // Leave out the kernels whose accuracy bound is looser than Winograd F(2x2)'s (error_scale 8):
  // today cpu.04's F(4x4), 436. By default cpu.auto considers every kernel of ours.
  bool strict_accuracy = false;
  // The file choices are remembered in across runs; empty: none (measure at every plan).
  std::string cache_file;
  // Identifies the machine and the build in that file (CPU model, ISA, commit): a choice measured
  // on another CPU, or with other kernels, is not reused.
  std::string machine;
};

void set_auto_options(AutoOptions options);
const AutoOptions& auto_options();

// A choice's explanation, then the chosen plan's own where it has one (the register tile cpu.02 or
// cpu.23 measured): "chose cpu.02_direct_xsimd, ...; cpu.02_direct_xsimd: register tile 2 x 14 (...)".
inline std::string with_plan_explanation(std::string why, std::string_view kernel, const std::string& plan_why) {
  if (!plan_why.empty()) why.append("; ").append(kernel).append(": ").append(plan_why);
  return why;
}

// One remembered choice: which kernel, and the explanation of the measurement that chose it.
struct AutoChoice {
  std::string kernel, explanation;
};

// The cache is a tab-separated text file, one line per (machine, threads, accuracy mode, problem,
// activation); the last line for a key wins. Lines that do not parse are ignored (and replaced on
// the next measurement): deleting the file, or any line of it, only costs a new measurement.
std::optional<AutoChoice> cached_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e);
// Appends a choice. A file that cannot be written is reported once on stderr, and the run goes on.
void remember_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e, const AutoChoice& choice);
// cpu.auto_int8's choice for a layer: keyed as a layer's, its problem named "int8 <problem>", with
// " (split at 128)" where it measures inputs under 128 apart (cpu.auto_int8.cpp).
std::optional<AutoChoice> cached_int8_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e,
                                             bool split_at_128);
void remember_int8_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e, bool split_at_128,
                          const AutoChoice& choice);
// The same for a choice that is not one layer's kernel: `what` names it in the problem's place
// (cpu.auto's threads for a network's whole forward, bench/harness/forward_threads.hpp; cpu.02's
// register tile for a layer), "-" as activation.
std::optional<AutoChoice> cached_choice(const AutoOptions& o, int threads, const std::string& what);
void remember_choice(const AutoOptions& o, int threads, const std::string& what, const AutoChoice& choice);

}  // namespace convlab::cpu
