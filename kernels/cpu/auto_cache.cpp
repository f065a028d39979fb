// cpu.auto's choices remembered across runs (auto_select.hpp).
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "kernels/cpu/auto_select.hpp"

namespace convlab::cpu {

namespace {

std::mutex options_mutex;
AutoOptions options;

constexpr std::string_view kHeader =
    "# convlab: the kernels cpu.auto and cpu.auto_int8 chose, by measuring, on this machine, and the threads of its "
    "whole forwards. "
    "Delete this file (or a line) to measure again.\n"
    "# machine\tthreads\taccuracy\tproblem (or forward)\tactivation\tkernel (or threads)\texplanation\n";

// A field may hold no tab or newline (the machine string comes from /proc/cpuinfo).
std::string field(std::string text) {
  std::ranges::replace(text, '\t', ' ');
  std::ranges::replace(text, '\n', ' ');
  return text;
}

// `what`: the problem (or another choice's name), `activation`: its epilogue's ("-" for others).
std::vector<std::string> key_fields(const AutoOptions& o, int threads, const std::string& what,
                                    const std::string& activation) {
  return {field(o.machine), std::to_string(threads), o.strict_accuracy ? "strict" : "default", field(what), activation};
}
std::vector<std::string> key_fields(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e) {
  return key_fields(o, threads, to_string(p), std::string(to_string(e.activation)));
}
std::vector<std::string> int8_key_fields(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e,
                                         bool split_at_128) {
  return key_fields(o, threads, fmt::format("int8 {}{}", to_string(p), split_at_128 ? " (split at 128)" : ""),
                    std::string(to_string(e.activation)));
}
constexpr std::string_view kNoActivation = "-";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    parts.push_back(line.substr(start, tab - start));
  parts.push_back(line.substr(start));
  return parts;
}

// The last line of `key`, if any.
std::optional<AutoChoice> find_choice(const AutoOptions& o, const std::vector<std::string>& key) {
  if (o.cache_file.empty()) return std::nullopt;
  std::ifstream file(o.cache_file);
  std::optional<AutoChoice> found;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> parts = split_tabs(line);
    if (parts.size() == key.size() + 2 && std::equal(key.begin(), key.end(), parts.begin()))
      found = AutoChoice{parts[key.size()], parts[key.size() + 1]};
  }
  return found;
}

void append_choice(const AutoOptions& o, const std::vector<std::string>& key, const AutoChoice& choice) {
  if (o.cache_file.empty()) return;
  const std::lock_guard lock(options_mutex);
  const std::filesystem::path path(o.cache_file);
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const bool is_new = !std::filesystem::exists(path, ec);
  std::string text = is_new ? std::string(kHeader) : std::string();
  for (const std::string& f : key) text += f + '\t';
  text += field(choice.kernel) + '\t' + field(choice.explanation) + '\n';
  std::ofstream file(path, std::ios::app);
  file << text;  // one write: lines of two processes appending at once stay whole
  file.flush();
  static std::atomic<bool> warned = false;
  if (!file && !warned.exchange(true))
    fmt::print(stderr, "convlab: warning: cpu.auto cannot write its cache '{}'; its choices will be measured again\n",
               o.cache_file);
}

}  // namespace

void set_auto_options(AutoOptions o) {
  const std::lock_guard lock(options_mutex);
  options = std::move(o);
}

const AutoOptions& auto_options() { return options; }

std::optional<AutoChoice> cached_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e) {
  return find_choice(o, key_fields(o, threads, p, e));
}
void remember_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e, const AutoChoice& choice) {
  append_choice(o, key_fields(o, threads, p, e), choice);
}
std::optional<AutoChoice> cached_int8_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e,
                                             bool split_at_128) {
  return find_choice(o, int8_key_fields(o, threads, p, e, split_at_128));
}
void remember_int8_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e, bool split_at_128,
                          const AutoChoice& choice) {
  append_choice(o, int8_key_fields(o, threads, p, e, split_at_128), choice);
}
std::optional<AutoChoice> cached_choice(const AutoOptions& o, int threads, const std::string& what) {
  return find_choice(o, key_fields(o, threads, what, std::string(kNoActivation)));
}
void remember_choice(const AutoOptions& o, int threads, const std::string& what, const AutoChoice& choice) {
  append_choice(o, key_fields(o, threads, what, std::string(kNoActivation)), choice);
}

}  // namespace convlab::cpu
