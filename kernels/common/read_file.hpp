// Reading a whole input file (weights, problem lists) with one clear error for each way it fails.
#pragma once

#include <string>

namespace convlab {

// The bytes of `path`. Throws InputError "cannot read 'PATH'" (with why: missing, a directory,
// unreadable) instead of returning an empty string a parser would then misreport.
std::string read_file(const std::string& path);

}  // namespace convlab
