// The PyTorch golden references under tests/data (tools/make_golden_data.sh): weights, input and
// every layer's expected output, for each network at batch 1 and 3.
#pragma once

#include <string>

#include <fmt/format.h>

#include "models/safetensors.hpp"

namespace convlab::test {

struct Golden {
  TensorFile weights, input, expect;
};

inline Golden golden(const std::string& model, int batch) {
  const std::string dir = fmt::format("{}/{}/", CONVLAB_TEST_DATA, model);  // fmt: GCC 12 warns falsely on "b" + to_string
  return {read_safetensors(dir + "weights.safetensors"), read_safetensors(fmt::format("{}b{}/input.safetensors", dir, batch)),
          read_safetensors(fmt::format("{}b{}/expect.safetensors", dir, batch))};
}

}  // namespace convlab::test
