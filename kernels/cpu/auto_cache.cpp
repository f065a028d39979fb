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
    "# convlab: the kernels cpu.auto chose, by measuring, on this machine. Delete this file (or a line) to "
    "measure again.\n"
    "# machine\tthreads\taccuracy\tproblem\tactivation\tkernel\texplanation\n";

// A field may hold no tab or newline (the machine string comes from /proc/cpuinfo).
std::string field(std::string text) {
  std::ranges::replace(text, '\t', ' ');
  std::ranges::replace(text, '\n', ' ');
  return text;
}

std::vector<std::string> key_fields(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e) {
  return {field(o.machine), std::to_string(threads), o.strict_accuracy ? "strict" : "default", to_string(p),
          std::string(to_string(e.activation))};
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    parts.push_back(line.substr(start, tab - start));
  parts.push_back(line.substr(start));
  return parts;
}

}  // namespace

void set_auto_options(AutoOptions o) {
  const std::lock_guard lock(options_mutex);
  options = std::move(o);
}

const AutoOptions& auto_options() { return options; }

std::optional<AutoChoice> cached_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e) {
  if (o.cache_file.empty()) return std::nullopt;
  std::ifstream file(o.cache_file);
  const std::vector<std::string> key = key_fields(o, threads, p, e);
  std::optional<AutoChoice> found;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> parts = split_tabs(line);
    if (parts.size() == key.size() + 2 && std::equal(key.begin(), key.end(), parts.begin()))
      found = AutoChoice{parts[key.size()], parts[key.size() + 1]};
  }
  return found;
}

void remember_choice(const AutoOptions& o, int threads, const ConvProblem& p, Epilogue e, const AutoChoice& choice) {
  if (o.cache_file.empty()) return;
  const std::lock_guard lock(options_mutex);
  const std::filesystem::path path(o.cache_file);
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const bool is_new = !std::filesystem::exists(path, ec);
  std::string text = is_new ? std::string(kHeader) : std::string();
  for (const std::string& f : key_fields(o, threads, p, e)) text += f + '\t';
  text += field(choice.kernel) + '\t' + field(choice.explanation) + '\n';
  std::ofstream file(path, std::ios::app);
  file << text;  // one write: lines of two processes appending at once stay whole
  file.flush();
  static std::atomic<bool> warned = false;
  if (!file && !warned.exchange(true))
    fmt::print(stderr, "convlab: warning: cpu.auto cannot write its cache '{}'; its choices will be measured again\n",
               o.cache_file);
}

}  // namespace convlab::cpu
