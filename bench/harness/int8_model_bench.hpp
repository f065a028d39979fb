// `run --precision int8` (bench/harness/model_bench.hpp): a network quantised with convlab's own
// calibration, run by an int8 kernel, timed by the same harness as FP32 rows, its output checked
// byte for byte against the int8 oracle's plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/harness/clock.hpp"
#include "bench/harness/device.hpp"
#include "bench/check/quantization_effect.hpp"
#include "bench/harness/model_bench.hpp"
#include "models/quantized_network.hpp"

namespace convlab {

// The network quantised as `run` does: from config.quantized, the interchange file, when given;
// else calibration by config.observer on config.calibration_inputs seeded inputs (apart from the
// timed input and the evaluation set).
QuantizedNetwork quantize_for_run(const ModelBenchConfig& config, const Network& net);

// The run options that make quantize_for_run's quantisation again, the defaults left out:
// {"--quantized", FILE}, or --calibration N, --observer histogram, --reduce-range. A --fresh-process
// child is started with them, and an int8 row names them (Result::quantization_options) for the
// commands that repeat its run (`policy`'s check).
std::vector<std::string> quantization_arguments(const ModelBenchConfig& config);
// The same as one string, space-separated: what an int8 row's quantization_options holds.
std::string quantization_options(const ModelBenchConfig& config);

// The prediction change `run` reports: on config.eval_inputs seeded inputs, apart from the
// calibration set and the timed input.
QuantizationEffect quantization_effect_for_run(const ModelBenchConfig& config, const QuantizedNetwork& q);

// One int8 kernel at one batch, planned (the check comes in its finish). The row's precision is
// int8, its rate counts GOP/s (no % of the FP32 peak).
PlannedModelRow plan_int8_row(const ModelBenchConfig& config, const QuantizedNetwork& q, const std::string& id,
                              std::int64_t batch);

}  // namespace convlab
