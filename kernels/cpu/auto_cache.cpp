// cpu.auto's choices remembered across runs (auto_select.hpp).
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "kernels/cpu/auto_select.hpp"

namespace convlab::cpu {

namespace {

std::mutex options_mutex;
AutoOptions options;

constexpr std::string_view kHeader =
    "# convlab: what cpu.auto and cpu.auto_int8 chose by measuring on this machine (kernels, the threads of whole "
    "forwards, cpu.02's register tiles). Delete this file (or a line) to measure again.\n"
    "# machine\tthreads\taccuracy\tproblem (or what was chosen)\tactivation\tkernel (or the choice)\texplanation\n";

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

std::string joined(const std::vector<std::string>& key) {
  std::string out;
  for (const std::string& f : key) out += f + '\t';
  return out;
}

// The file as this process last read it: the last choice of each of this machine's keys, from the
// file's first `parsed` bytes, which ended with `tail`. Each plan asks for one key; reading the whole
// file each time, every line split, had cost a resnet8 process 30 ms at start with a development
// machine's file (3.7 MB of a week's builds). Now one pass keeps only this machine's lines (storing
// every line, 3.7 MB of new memory, took 44 ms there), and later lookups read only what was
// appended since, by this process or another. A file that no longer
// holds the same bytes before that point (replaced, or shorter) is read from the start.
struct ReadCache {
  std::string path, machine, tail;
  std::uintmax_t parsed = 0;
  std::unordered_map<std::string, AutoChoice> choices;  // the key's fields, each followed by a tab
};
std::mutex read_mutex;
ReadCache read_cache;

constexpr std::size_t kTailBytes = 256;
constexpr std::size_t kLineFields = 7;  // the key's five, the kernel and the explanation

std::string read_bytes(std::ifstream& file, std::uintmax_t from, std::size_t count) {
  std::string bytes(count, '\0');
  file.clear();
  file.seekg(static_cast<std::streamoff>(from));
  file.read(bytes.data(), static_cast<std::streamsize>(count));
  bytes.resize(static_cast<std::size_t>(file.gcount()));
  return bytes;
}

void read_new_lines(ReadCache& c) {
  std::ifstream file(c.path, std::ios::binary);
  if (c.parsed > 0 && read_bytes(file, c.parsed - c.tail.size(), c.tail.size()) != c.tail)
    c = ReadCache{.path = c.path, .machine = c.machine};
  file.clear();
  file.seekg(static_cast<std::streamoff>(c.parsed));
  const std::string prefix = c.machine + '\t';
  std::string line;
  // A line without its newline is one another process is still writing: it waits for the next read.
  while (std::getline(file, line) && !file.eof()) {
    c.parsed += line.size() + 1;
    if (line.rfind(prefix, 0) != 0) continue;
    std::vector<std::string> parts = split_tabs(line);
    if (parts.size() != kLineFields) continue;
    AutoChoice choice{parts[5], parts[6]};
    parts.resize(kLineFields - 2);
    c.choices[joined(parts)] = std::move(choice);
  }
  const std::size_t tail = static_cast<std::size_t>(std::min<std::uintmax_t>(kTailBytes, c.parsed));
  c.tail = read_bytes(file, c.parsed - tail, tail);
}

// The last line of `key`, if any.
std::optional<AutoChoice> find_choice(const AutoOptions& o, const std::vector<std::string>& key) {
  if (o.cache_file.empty()) return std::nullopt;
  const std::lock_guard lock(read_mutex);
  if (read_cache.path != o.cache_file || read_cache.machine != key[0])
    read_cache = ReadCache{.path = o.cache_file, .machine = key[0]};
  read_new_lines(read_cache);  // a missing, shorter or replaced file fails its tail check: read anew
  const auto found = read_cache.choices.find(joined(key));
  if (found == read_cache.choices.end()) return std::nullopt;
  return found->second;
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
