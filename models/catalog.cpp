#include "models/catalog.hpp"

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

namespace {
const ModelInfo kModels[] = {
    {"lab-cnn", "3x32x32 -> three 3x3 convs (16, 32, 64) with ReLU and max-pool, global average pool, fc 10",
     &build_lab_cnn},
    {"lenet5", "1x28x28 -> conv 5x5 6, conv 5x5 16 (ReLU, max-pool), fc 120, 84, 10", &build_lenet5},
    {"resnet8", "3x32x32 -> conv 16 + three BasicBlocks (16, 32 s2, 64 s2), BN folded, avg pool, fc 10",
     &build_resnet8},
    {"mobilenet-tiny", "3x32x32 -> conv 16 + five depthwise-separable blocks to 128, ReLU6, BN folded, fc 10",
     &build_mobilenet_tiny},
    {"resnet18", "3x224x224 -> torchvision's resnet18: conv 7x7 64 s2, max-pool, eight BasicBlocks (64..512), fc 1000",
     &build_resnet18, true},
    {"mobilenet-v2", "3x224x224 -> torchvision's mobilenet_v2: 17 inverted residual blocks, ReLU6, 1280, fc 1000",
     &build_mobilenet_v2, true},
};
}  // namespace

std::span<const ModelInfo> all_models() { return kModels; }

const ModelInfo* find_model(std::string_view name) {
  for (const ModelInfo& m : kModels)
    if (m.name == name) return &m;
  return nullptr;
}

const ModelInfo& model_or_throw(std::string_view name) {
  if (const ModelInfo* m = find_model(name)) return *m;
  std::string choices;
  for (const ModelInfo& info : kModels) choices += (choices.empty() ? "" : ", ") + std::string(info.name);
  throw InputError(fmt::format("unknown model '{}' (choices: {})", name, choices));
}

}  // namespace convlab
