// safetensors, the tensor file format PyTorch users exchange weights in
// (https://github.com/huggingface/safetensors): an 8-byte little-endian header length N, N bytes
// of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then
// the raw little-endian data, offsets relative to its start.
//
// The reader checks everything a hostile or damaged file could get wrong (header length past the
// end, bad JSON, unknown dtype, a byte count that disagrees with the shape, offsets outside the
// data or overlapping) and throws InputError naming the file and the problem: it never crashes.
// F32 is read as is; F16 and F64 are converted to float on load. The integer dtypes I8, U8, I16,
// I32 and I64 (an int8 model's weights and zero points) are read into `integers`. Other dtypes
// are listed but carry no values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace convlab {

struct StoredTensor {
  std::string dtype;                // as in the file: "F32", "F16", "F64", "I64", ...
  std::vector<std::int64_t> shape;  // PyTorch order, e.g. OIHW
  std::vector<float> values;        // converted to float; empty for non-float dtypes
  std::vector<std::int64_t> integers;  // I8, U8, I16, I32, I64: the values; empty for the others
  bool is_float() const { return dtype == "F32" || dtype == "F16" || dtype == "F64"; }
  bool is_integer() const { return dtype == "I8" || dtype == "U8" || dtype == "I16" || dtype == "I32" || dtype == "I64"; }
  std::int64_t elems() const;
};

struct TensorFile {
  std::string path;  // where it was read from (read_safetensors), for messages; empty otherwise
  std::map<std::string, StoredTensor> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__": string to string
};

// Parses a whole file held in memory; `label` names it in errors.
TensorFile parse_safetensors(const std::string& bytes, const std::string& label);
// Reads and parses `path`. Throws InputError when it cannot be read or is malformed.
TensorFile read_safetensors(const std::string& path);

// Writes F32 tensors, and I8, I32 and I64 ones from `integers` (names in map order, packed back to
// back). Throws InputError when the file cannot be written or a tensor's values disagree with its
// shape.
std::string serialize_safetensors(const TensorFile& file);
void write_safetensors(const std::string& path, const TensorFile& file);

// IEEE half to float (every value: subnormals, infinities, NaN).
float half_to_float(std::uint16_t half);

}  // namespace convlab
