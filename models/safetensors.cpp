#include "models/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/common/error.hpp"
#include "kernels/common/read_file.hpp"

namespace convlab {

static_assert(std::endian::native == std::endian::little, "the safetensors reader assumes a little-endian host");

namespace {

using json = nlohmann::json;

// Bytes per element of every dtype the format defines; 0 for an unknown one.
std::size_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, std::size_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

template <typename T>
T read_le(const char* p) {  // the format and every machine convlab builds for are little-endian
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::vector<float> convert(const std::string& dtype, const char* data, std::size_t count) {
  std::vector<float> out(count);
  if (dtype == "F32") {
    if (count > 0) std::memcpy(out.data(), data, count * sizeof(float));  // an empty vector's data() may be null
  } else if (dtype == "F16") {
    for (std::size_t i = 0; i < count; ++i) {
      std::uint16_t h;
      std::memcpy(&h, data + 2 * i, 2);
      out[i] = half_to_float(h);
    }
  } else if (dtype == "F64") {
    for (std::size_t i = 0; i < count; ++i) {
      double d;
      std::memcpy(&d, data + 8 * i, 8);
      out[i] = static_cast<float>(d);
    }
  } else {
    out.clear();
  }
  return out;
}

// The integer dtypes' values, sign- or zero-extended.
std::vector<std::int64_t> convert_integers(const std::string& dtype, const char* data, std::size_t count) {
  std::vector<std::int64_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (dtype == "I8") out[i] = static_cast<std::int8_t>(data[i]);
    if (dtype == "U8") out[i] = static_cast<std::uint8_t>(data[i]);
    if (dtype == "I16") out[i] = read_le<std::int16_t>(data + 2 * i);
    if (dtype == "I32") out[i] = read_le<std::int32_t>(data + 4 * i);
    if (dtype == "I64") out[i] = read_le<std::int64_t>(data + 8 * i);
  }
  return out;
}

struct Extent {
  std::uint64_t begin, end;
  std::string name;
};

}  // namespace

std::int64_t StoredTensor::elems() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  float magnitude;
  if (exponent == 0) magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  else if (exponent == 31) magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) | sign);
}

TensorFile parse_safetensors(const std::string& bytes, const std::string& label) {
  auto fail = [&label](const std::string& why) { return InputError(fmt::format("{}: {}", label, why)); };
  if (bytes.size() < 8) throw fail(fmt::format("truncated: {} bytes, not even the 8-byte header length", bytes.size()));
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  if (header_len > bytes.size() - 8)
    throw fail(fmt::format("header length {} runs past the end of the file ({} bytes)", header_len, bytes.size()));
  json header;
  try {
    header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_len));
  } catch (const json::exception& e) {
    throw fail(fmt::format("the header is not valid JSON ({})", e.what()));
  }
  if (!header.is_object()) throw fail("the header is not a JSON object");
  const char* data = bytes.data() + 8 + header_len;
  const std::uint64_t data_len = bytes.size() - 8 - header_len;

  TensorFile file;
  std::vector<Extent> extents;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw fail("__metadata__ is not an object");
      for (const auto& [key, value] : entry.items())
        file.metadata[key] = value.is_string() ? value.get<std::string>() : value.dump();
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets") ||
        !entry["dtype"].is_string() || !entry["shape"].is_array() || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
      throw fail(fmt::format("tensor '{}' needs dtype (string), shape (array) and data_offsets ([begin, end])", name));
    StoredTensor t;
    t.dtype = entry["dtype"].get<std::string>();
    const std::size_t size = dtype_size(t.dtype);
    if (size == 0) throw fail(fmt::format("tensor '{}' has unknown dtype '{}'", name, t.dtype));
    std::uint64_t count = 1;
    for (const json& d : entry["shape"]) {
      if (!d.is_number_unsigned() || d.get<std::uint64_t>() > (std::uint64_t{1} << 40))
        throw fail(fmt::format("tensor '{}' has a bad shape {}", name, entry["shape"].dump()));
      t.shape.push_back(d.get<std::int64_t>());
      count *= d.get<std::uint64_t>();
      if (count > (std::uint64_t{1} << 40)) throw fail(fmt::format("tensor '{}' is impossibly large", name));
    }
    const json& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      throw fail(fmt::format("tensor '{}' has bad data_offsets {}", name, offsets.dump()));
    const std::uint64_t begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
    if (begin > end || end > data_len)
      throw fail(fmt::format("tensor '{}' data_offsets [{}, {}] lie outside the {} data bytes (truncated file?)", name,
                             begin, end, data_len));
    if (end - begin != count * size)
      throw fail(fmt::format("tensor '{}' holds {} bytes but {} {} of shape {} need {}", name, end - begin, count,
                             t.dtype, entry["shape"].dump(), count * size));
    t.values = convert(t.dtype, data + begin, count);
    if (t.is_integer()) t.integers = convert_integers(t.dtype, data + begin, count);
    extents.push_back({begin, end, name});
    file.tensors.emplace(name, std::move(t));
  }
  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < extents.size(); ++i)
    if (extents[i].begin < extents[i - 1].end)
      throw fail(fmt::format("tensors '{}' and '{}' overlap (bytes [{}, {}) and [{}, {}))", extents[i - 1].name,
                             extents[i].name, extents[i - 1].begin, extents[i - 1].end, extents[i].begin, extents[i].end));
  return file;
}

TensorFile read_safetensors(const std::string& path) {
  TensorFile file = parse_safetensors(read_file(path), path);
  file.path = path;
  return file;
}

std::string serialize_safetensors(const TensorFile& file) {
  json header = json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::string data;
  for (const auto& [name, t] : file.tensors) {
    const bool integers = t.dtype == "I8" || t.dtype == "I32" || t.dtype == "I64";
    const std::size_t count = integers ? t.integers.size() : t.values.size();
    if (count != static_cast<std::size_t>(t.elems()))
      throw InputError(fmt::format("tensor '{}': {} values for shape of {} elements", name, count, t.elems()));
    const std::size_t begin = data.size();
    if (!integers && !t.values.empty())  // an empty vector's data() may be null
      data.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
    for (const std::int64_t v : integers ? t.integers : std::vector<std::int64_t>{}) {
      if (t.dtype == "I8") data.push_back(static_cast<char>(static_cast<std::int8_t>(v)));
      if (t.dtype == "I32") {
        const auto narrow = static_cast<std::int32_t>(v);
        data.append(reinterpret_cast<const char*>(&narrow), 4);
      }
      if (t.dtype == "I64") data.append(reinterpret_cast<const char*>(&v), 8);
    }
    header[name] = {{"dtype", integers ? t.dtype : "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the format pads the header to 8 bytes with spaces
  const std::uint64_t length = text.size();
  std::string out(reinterpret_cast<const char*>(&length), 8);
  return out + text + data;
}

void write_safetensors(const std::string& path, const TensorFile& file) {
  const std::string bytes = serialize_safetensors(file);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !out.flush())
    throw InputError(fmt::format("cannot write '{}'", path));
}

}  // namespace convlab
