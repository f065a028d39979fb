#include "kernels/common/read_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

std::string read_file(const std::string& path) {
  std::error_code ec;
  // A directory opens as a stream on Linux and reads as empty: say what it is instead.
  if (std::filesystem::is_directory(path, ec)) throw InputError(fmt::format("cannot read '{}': it is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read '{}'", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("cannot read '{}'", path));
  return std::move(bytes).str();
}

}  // namespace convlab
