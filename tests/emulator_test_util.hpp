// The emulator's error for a call that should fail, as text ("(no EmulatorError)" when it did not).
#pragma once

#include <string>

#include "kernels/simt/emulator.hpp"

namespace convlab::test {

std::string emulator_error(auto&& f) {
  try {
    f();
  } catch (const simt::EmulatorError& e) {
    return e.what();
  }
  return "(no EmulatorError)";
}

}  // namespace convlab::test
