#include "models/weight_file.hpp"

#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/common/error.hpp"
#include "models/onnx_model.hpp"

namespace convlab {

namespace {
bool ignored(const std::string& name) {  // a training counter, not a parameter
  const std::string_view suffix = "num_batches_tracked";
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What the builder asked for and what went wrong, gathered so one error can list every problem.
// At most `most` entries, then how many more: one readable line even for a wholly wrong state_dict.
std::string listed(const std::vector<std::string>& items, std::size_t most = 8) {
  if (items.size() <= most) return fmt::format("{}", fmt::join(items, ", "));
  return fmt::format("{}, … ({} more)", fmt::join(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(most), ", "),
                     items.size() - most);
}

struct Audit {
  std::set<std::string> used;
  std::vector<std::string> missing, mismatched;
};
}  // namespace

Network build_from_file(const ModelInfo& model, const TensorFile& file, const std::string& label) {
  auto audit = std::make_shared<Audit>();
  WeightSource source = [&file, audit](const std::string& name, const std::vector<std::int64_t>& shape,
                                       std::int64_t) {
    std::int64_t count = 1;
    for (std::int64_t d : shape) count *= d;
    std::vector<float> zeros(static_cast<std::size_t>(count));  // stands in until the error is thrown
    const auto it = file.tensors.find(name);
    if (it == file.tensors.end()) {
      audit->missing.push_back(fmt::format("'{}' {}", name, shape));
      return zeros;
    }
    audit->used.insert(name);
    const StoredTensor& t = it->second;
    if (t.shape != shape) {
      audit->mismatched.push_back(fmt::format("'{}' has shape {}, the network needs {}", name, t.shape, shape));
      return zeros;
    }
    if (!t.is_float()) {
      audit->mismatched.push_back(fmt::format("'{}' has dtype {} (need F32, F16 or F64)", name, t.dtype));
      return zeros;
    }
    return t.values;
  };
  Network net = model.build(source);
  std::vector<std::string> extra;
  for (const auto& [name, t] : file.tensors)
    if (!audit->used.contains(name) && !ignored(name)) extra.push_back("'" + name + "'");
  std::vector<std::string> problems;
  if (!audit->missing.empty()) problems.push_back("missing " + listed(audit->missing));
  if (!extra.empty()) problems.push_back("extra " + listed(extra));
  if (!audit->mismatched.empty()) problems.push_back(listed(audit->mismatched, 4));
  if (!problems.empty())
    throw InputError(fmt::format("{}: not a {} state_dict: {}", label, model.name, fmt::join(problems, "; ")));
  return net;
}

Network load_network(const ModelInfo& model, const std::string& weights_path) {
  return build_from_file(model, read_safetensors(weights_path), weights_path);
}

Network load_model(const std::string& model, const std::string& weights_path, std::uint64_t seed) {
  if (is_onnx_model(model)) {
    if (!weights_path.empty())
      throw InputError(fmt::format("--weights: {} is an ONNX model, which carries its own weights", model));
    return load_onnx(model);
  }
  const ModelInfo& info = model_or_throw(model);
  return weights_path.empty() ? info.build(seeded_weights(seed)) : load_network(info, weights_path);
}

}  // namespace convlab
