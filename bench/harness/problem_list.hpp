// Problem files for `convlab conv --problems`: one benchdnn descriptor per line, then optionally
// its role as free text; '#' starts a comment, blank lines are skipped. Apart from the harness
// so that the reader can be fuzzed on its own (tests/fuzz).
#pragma once

#include <string>
#include <vector>

#include "kernels/common/problem.hpp"

namespace convlab {

struct NamedProblem {
  ConvProblem problem;
  std::string role;  // free text, e.g. "first layer (C = 3)"
};

// Parses the text of a problem file; `label` (the file name) prefixes errors. Throws InputError
// naming the label and line, or saying the text holds no problem.
std::vector<NamedProblem> parse_problem_list(const std::string& text, const std::string& label);

// Reads `path` and parses it. Throws InputError when it cannot be read or is malformed.
std::vector<NamedProblem> read_problems(const std::string& path);

}  // namespace convlab
