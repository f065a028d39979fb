// The `convlab compare A.json B.json` subcommand: rows matched by model (or conv problem),
// backend, kernel, mode and batch; each pair judged from its stored trials (bench/analysis/ab_test.hpp).
#include "bench/commands/commands.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "bench/analysis/ab_test.hpp"
#include "bench/commands/cli.hpp"
#include "bench/report/results_reader.hpp"
#include "kernels/common/error.hpp"
#include "bench/report/wording.hpp"

namespace convlab {

namespace {

struct CompareOptions {
  std::string a, b;
  std::uint64_t seed = 1;
  int resamples = 2000;
  double noise_percent = 5;
  double min_effect_percent = 2;
};

}  // namespace

namespace {
using Key = std::tuple<std::string, std::string, std::string, std::string, std::string, std::int64_t>;
Key key_of(const Result& r) { return {r.model, r.problem, r.backend, r.kernel, r.mode, r.batch}; }

std::map<Key, const Result*> index_rows(const ResultsFile& f) {
  std::map<Key, const Result*> rows;
  for (const Result& r : f.results)
    if (!rows.try_emplace(key_of(r), &r).second)
      throw InputError(fmt::format("'{}': {} appears twice; compare needs one row per series and batch", f.path, row_label(r)));
  return rows;
}

// Differences between the two runs' machines or builds, said loudly before any verdict: a ratio
// across them measures the machine or the compiler as much as the kernel. (Different commits are
// what an A/B is for, and are not warned about.)
void warn_about_context(const ResultsFile& a, const ResultsFile& b) {
  for (const auto& [key, what] : {std::pair{"cpu_model", "CPUs"}, std::pair{"compiler", "compilers"},
                                  std::pair{"cxx_flags", "compiler flags"}, std::pair{"build_isa", "target ISAs"},
                                  std::pair{"build_type", "build types"}, std::pair{"logical_cpus", "CPU counts"}}) {
    const std::string va = a.context.contains(key) ? a.context[key].dump() : "?";
    const std::string vb = b.context.contains(key) ? b.context[key].dump() : "?";
    if (va != vb)
      fmt::print("WARNING: A and B were measured with different {} ({} vs {}): the ratios compare those as much as "
                 "the kernels\n",
                 what, va, vb);
  }
}

std::string describe_file(const char* name, const ResultsFile& f) {
  return fmt::format("{}: {} ({}, {}, commit {}){}\n", name, f.path, f.context.value("cpu_model", "?"),
                     count_of(f.context.value("threads", 0), "thread"), f.context.value("git_commit", "?").substr(0, 12),
                     f.complete ? "" : " INCOMPLETE");
}
}  // namespace

CLI::App* add_compare_options(CLI::App& app, CompareOptions& o) {
  CLI::App* cmd = app.add_subcommand("compare", "A/B: is B faster than A? Ratio of medians, Mann-Whitney U, bootstrap "
                                                "interval and a verdict per matched row");
  // Not ->required(): CLI11 would say "b is required"; run_compare says what compare needs.
  cmd->add_option("a", o.a, "Baseline results file (convlab/1)");
  cmd->add_option("b", o.b, "Candidate results file (convlab/1)");
  cmd->add_option("--seed", o.seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--resamples", o.resamples, "Bootstrap resamples")->capture_default_str();
  cmd->add_option("--noise", o.noise_percent, "Changes within +- this % count as no difference")->capture_default_str();
  cmd->add_option("--min-effect", o.min_effect_percent,
                  "Certain differences under this % are 'no meaningful difference'")->capture_default_str();
  return cmd;
}

// Exit 0 once compared (whatever the verdicts); throws InputError (exit 2) for a bad file.
int run_compare(const CompareOptions& o) {
  if (o.b.empty())
    throw InputError("compare needs two results files: convlab compare A.json B.json (B is judged against A)");
  if (o.resamples < 100) throw InputError(fmt::format("--resamples: {} must be at least 100", o.resamples));
  if (!(o.noise_percent > 0 && o.noise_percent < 100)) throw InputError(fmt::format("--noise: {} must be in (0, 100)", o.noise_percent));
  if (!(o.min_effect_percent >= 0 && o.min_effect_percent < 100))
    throw InputError(fmt::format("--min-effect: {} must be in [0, 100)", o.min_effect_percent));
  const ResultsFile fa = read_results_file(o.a), fb = read_results_file(o.b);
  const auto rows_a = index_rows(fa), rows_b = index_rows(fb);
  const AbRules rules{.noise = o.noise_percent / 100, .min_effect = o.min_effect_percent / 100,
                      .resamples = o.resamples, .seed = o.seed};
  fmt::print("{}{}", describe_file("A", fa), describe_file("B", fb));
  warn_about_context(fa, fb);
  fmt::print("ratio = median(B) / median(A), below 1: B is faster. p: Mann-Whitney U, two-sided, normal approximation "
             "with tie and continuity corrections (rough under {} trials a side, marked ~). interval: 95% percentile "
             "bootstrap of the ratio, {} resamples, seed {}.\n"
             "verdict: faster/slower when p < {} and the interval excludes 1 and B/A is at least {}% from 1; no "
             "meaningful difference when it is certain but smaller (--min-effect); too noisy when not certain and the "
             "interval reaches past 1 +- {}% (or a side has under {} trials); otherwise no significant difference. "
             "Rows measured with different thread counts are not compared.\n\n",
             kMinSamplesForNormalApprox, rules.resamples, rules.seed, rules.alpha, o.min_effect_percent,
             o.noise_percent, kMinSamples);
  fmt::print("{:<44} {:>5} {:>5} {:>11} {:>11} {:>7} {:>17} {:>9}  {}\n", "row", "n A", "n B", "median A", "median B",
             "B/A", "95% interval", "p", "verdict");
  std::vector<std::string> only_a, only_b, not_ok, other_threads;
  for (const auto& [key, ra] : rows_a) {
    const auto it = rows_b.find(key);
    if (it == rows_b.end()) {
      only_a.push_back(row_label(*ra));
      continue;
    }
    const Result& rb = *it->second;
    if (ra->status != ResultStatus::ok || rb.status != ResultStatus::ok) {
      not_ok.push_back(fmt::format("{} (A {}, B {})", row_label(*ra), to_string(ra->status), to_string(rb.status)));
      continue;
    }
    if (ra->threads != rb.threads) {  // 1 thread against 2 is a different experiment, not a faster kernel
      other_threads.push_back(fmt::format("{} (A {}, B {})", row_label(*ra), count_of(ra->threads, "thread"),
                                          count_of(rb.threads, "thread")));
      continue;
    }
    const auto& sa = ra->measurement.samples_ms;
    const auto& sb = rb.measurement.samples_ms;
    const AbComparison c = compare_samples(sa, sb, rules);
    const bool rough = std::min(sa.size(), sb.size()) < kMinSamplesForNormalApprox;
    fmt::print("{:<44} {:>5} {:>5} {:>8.4f} ms {:>8.4f} ms {:>7.3f} {:>17} {:>9}  {}\n", row_label(*ra), sa.size(),
               sb.size(), c.median_a, c.median_b, c.ratio, fmt::format("[{:.3f}, {:.3f}]", c.interval.lo, c.interval.hi),
               fmt::format("{}{:.2g}", rough ? "~" : "", c.test.p), to_string(c.verdict));
  }
  for (const auto& [key, rb] : rows_b)
    if (!rows_a.contains(key)) only_b.push_back(row_label(*rb));
  for (const auto& [title, list] : {std::pair{"only in A (unmatched)", &only_a}, std::pair{"only in B (unmatched)", &only_b},
                                    std::pair{"not compared (a side was not measured)", &not_ok},
                                    std::pair{"not compared (measured with different thread counts)", &other_threads}})
    if (!list->empty()) {
      fmt::print("\n{}:\n", title);
      for (const std::string& row : *list) fmt::print("  {}\n", row);
    }
  return kExitOk;
}

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  return {add_compare_options(app, *o), [o] { return run_compare(*o); }};
}

}  // namespace convlab
