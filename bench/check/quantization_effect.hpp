// What int8 changes in a network's predictions, measured against the FP32 network with the same
// weights on the same inputs: "a faster operation that changes outputs beyond tolerance is a
// different model". Top-1 agreement, the logits' normalised error, and each layer's SQNR.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/quantized_network.hpp"

namespace convlab {

// SQNR = 10 log10(sum fp32^2 / sum (int8 - fp32)^2), the standard quantisation metric. Below
// 20 dB the error's RMS exceeds a tenth of the signal's: such a layer is flagged, since later
// layers add their own error to it.
inline constexpr double kLowSqnrDb = 20;

struct QuantizationEffect {
  std::string source;  // where the activations' quantisation came from
  std::size_t fp32_parameter_bytes = 0, int8_parameter_bytes = 0;
  std::int64_t inputs = 0, top1_agreements = 0;  // inputs whose FP32 and int8 argmax agree
  double logits_normalised_error = 0;            // ||int8 - fp32|| / ||fp32|| over every output
  struct LayerSqnr {
    std::string layer;
    double db = 0;
  };
  std::vector<LayerSqnr> layers;  // conv, linear and add layers, in order
};

// `inputs`: whole FP32 input items. The FP32 side runs cpu.01_im2col_eigen, the int8 side
// `int8_kernel` (cpu.20_int8_reference where it does not support a layer).
QuantizationEffect measure_quantization_effect(const QuantizedNetwork& q, std::span<const float> inputs,
                                               const std::string& int8_kernel);
// Distinct seeded inputs in [-1, 1), `count` items of net's input shape; `stream` keeps
// calibration and evaluation sets apart.
std::vector<float> seeded_inputs(const Network& net, std::int64_t count, std::uint64_t seed, std::uint64_t stream);

std::string describe(const QuantizationEffect& e);  // the lines `run` prints
nlohmann::json to_json(const QuantizationEffect& e);

}  // namespace convlab
