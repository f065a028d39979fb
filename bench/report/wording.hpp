// Small helpers for text a person reads: "1 thread", "2 threads", never "1 threads".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace convlab {

// "<n> <noun>", with an s after the noun unless n is 1 (every noun convlab counts is regular).
inline std::string count_of(std::int64_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace convlab
