// Errors a user can act on. The CLI prints what() as one line and exits 2; library code throws
// these instead of asserting, so that bad input never crashes the program.
#pragma once

#include <stdexcept>

namespace convlab {

// Bad input: a malformed descriptor, an unknown name, a shape a kernel does not support.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace convlab
