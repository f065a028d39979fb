#include "bench/harness/problem_list.hpp"

#include <sstream>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/read_file.hpp"

namespace convlab {

std::vector<NamedProblem> parse_problem_list(const std::string& text, const std::string& label) {
  std::istringstream in(text);
  std::vector<NamedProblem> problems;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos) continue;
    // The descriptor ends at the first blank outside a quoted name (n"resnet-like 56x56").
    auto end = std::string::npos;
    for (std::size_t i = start, quotes = 0; i < line.size() && end == std::string::npos; ++i) {
      if (line[i] == '"') ++quotes;
      if (quotes % 2 == 0 && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) end = i;
    }
    NamedProblem np;
    try {
      np.problem = parse_problem(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}:{}: {}", label, number, e.what()));
    }
    if (end != std::string::npos) {
      const auto role_start = line.find_first_not_of(" \t\r", end);
      const auto role_end = line.find_last_not_of(" \t\r");
      if (role_start != std::string::npos) np.role = line.substr(role_start, role_end - role_start + 1);
    }
    problems.push_back(std::move(np));
  }
  if (problems.empty()) throw InputError(fmt::format("--problems: '{}' holds no problem", label));
  return problems;
}

std::vector<NamedProblem> read_problems(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const InputError& e) {
    throw InputError(std::string("--problems: ") + e.what());
  }
  return parse_problem_list(text, path);
}

}  // namespace convlab
