// The reference networks convlab knows, by name. Each is built by a function in models/.
#pragma once

#include <span>
#include <string_view>

#include "models/network.hpp"

namespace convlab {

struct ModelInfo {
  std::string_view name;     // what --model takes
  std::string_view summary;  // one line
  Network (*build)(WeightSource weights);
  // 3x224x224, ~2 GFLOP per item: the tests that run every kernel on every network leave these
  // to one check each of their own, so that CI stays short.
  bool imagenet_size = false;
};

std::span<const ModelInfo> all_models();
const ModelInfo* find_model(std::string_view name);  // nullptr when unknown
// Throws InputError "unknown model 'x' (choices: ...)" when unknown.
const ModelInfo& model_or_throw(std::string_view name);

// Builders (one file each).
Network build_lab_cnn(WeightSource weights);
Network build_lenet5(WeightSource weights);
Network build_resnet8(WeightSource weights);
Network build_mobilenet_tiny(WeightSource weights);
Network build_resnet18(WeightSource weights);
Network build_mobilenet_v2(WeightSource weights);

}  // namespace convlab
