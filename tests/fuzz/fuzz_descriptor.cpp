// libFuzzer target: the benchdnn descriptor parser (kernels/common/problem.cpp). Bad text must end
// in InputError; an accepted problem must be valid and print back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kernels/common/error.hpp"
#include "kernels/common/problem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  convlab::ConvProblem p;
  try {
    p = convlab::parse_problem(text);
  } catch (const convlab::InputError&) {
    return 0;
  }
  p.validate();  // throws (an uncaught exception: a finding) if the parser let a bad one through
  (void)p.flops();
  (void)p.bytes();
  if (p.name.find('"') != std::string::npos) return 0;  // a quote in a bare name cannot print back
  if (!(convlab::parse_problem(convlab::to_string(p)) == p)) std::abort();
  return 0;
}
