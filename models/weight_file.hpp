// A network's weights from a PyTorch state_dict saved as safetensors. Every name the network asks
// for must be in the file with its exact shape and a float dtype, and every tensor in the file must
// be used (BatchNorm's num_batches_tracked excepted): a state_dict of another architecture, or one
// that lost a tensor, is rejected with every offending name listed, never silently half-loaded.
#pragma once

#include <string>

#include "models/catalog.hpp"
#include "models/safetensors.hpp"

namespace convlab {

// Builds `model` from the tensors of `file`; `label` (the file name) prefixes errors.
// Throws InputError listing the missing, extra, misshapen and non-float tensors.
Network build_from_file(const ModelInfo& model, const TensorFile& file, const std::string& label);

// read_safetensors(path) then build_from_file.
Network load_network(const ModelInfo& model, const std::string& weights_path);

// The network a --model names: an ONNX file (`*.onnx`, models/onnx_model.hpp), which carries its
// weights (weights_path must then be empty); or a built-in network with the state_dict at
// weights_path, or seeded weights from `seed` when it is empty.
Network load_model(const std::string& model, const std::string& weights_path, std::uint64_t seed);

}  // namespace convlab
