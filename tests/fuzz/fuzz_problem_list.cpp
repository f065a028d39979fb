// libFuzzer target: problem files for `convlab conv --problems` (bench/harness/problem_list.cpp), which
// split lines into descriptor and role before the descriptor parser sees them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bench/harness/problem_list.hpp"
#include "kernels/common/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    for (const convlab::NamedProblem& np : convlab::parse_problem_list(std::string(reinterpret_cast<const char*>(data), size), "fuzz"))
      np.problem.validate();
  } catch (const convlab::InputError&) {
  }
  return 0;
}
