#include "models/catalog.hpp"

namespace convlab {

namespace {
const ModelInfo kModels[] = {
    {"lab-cnn", "3x32x32 -> three 3x3 convs (16, 32, 64) with ReLU and max-pool, global average pool, fc 10",
     &build_lab_cnn},
};
}  // namespace

std::span<const ModelInfo> all_models() { return kModels; }

const ModelInfo* find_model(std::string_view name) {
  for (const ModelInfo& m : kModels)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace convlab
