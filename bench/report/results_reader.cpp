#include "bench/report/results_reader.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

namespace {

using nlohmann::json;

// Every complaint about one file goes through here: one line, the file named first.
struct Reader {
  const std::string& path;
  std::string where;  // "results[3]" while reading a row

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("'{}': {}{}", path, where.empty() ? "" : where + ": ", what));
  }
  const json& field(const json& obj, const char* name) const {
    const auto it = obj.find(name);
    if (it == obj.end()) fail(fmt::format("missing field '{}'", name));
    return *it;
  }
  std::string text(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_string()) fail(fmt::format("field '{}' is not a string", name));
    return v.get<std::string>();
  }
  std::string text_or(const json& obj, const char* name, std::string fallback) const {
    return obj.contains(name) ? text(obj, name) : fallback;
  }
  double number(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(fmt::format("field '{}' is not a finite number", name));
    return v.get<double>();
  }
  std::int64_t integer(const json& obj, const char* name, std::int64_t min) const {
    const json& v = field(obj, name);
    if (!v.is_number_integer() || v.get<std::int64_t>() < min)
      fail(fmt::format("field '{}' is not an integer of at least {}", name, min));
    return v.get<std::int64_t>();
  }
  // A list of trial times: non-empty, finite, not negative.
  std::vector<double> samples(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_array() || v.empty()) fail(fmt::format("field '{}' is not a non-empty list of times", name));
    std::vector<double> out;
    for (const json& x : v) {
      if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0)
        fail(fmt::format("field '{}' holds {}, not a time in ms", name, x.dump()));
      out.push_back(x.get<double>());
    }
    return out;
  }
};

ResultStatus parse_status(const Reader& rd, const std::string& s) {
  for (ResultStatus st : {ResultStatus::ok, ResultStatus::out_of_memory, ResultStatus::invalid})
    if (to_string(st) == s) return st;
  rd.fail(fmt::format("status '{}' is not one of ok, out_of_memory, invalid", s));
}

LayerKind parse_kind(const Reader& rd, const std::string& s) {
  for (LayerKind k : {LayerKind::conv, LayerKind::max_pool, LayerKind::avg_pool, LayerKind::global_avg_pool,
                      LayerKind::linear, LayerKind::add, LayerKind::softmax})
    if (to_string(k) == s) return k;
  rd.fail(fmt::format("per_layer kind '{}' is unknown", s));
}

Result parse_row(const Reader& rd, const json& row, double peak_gflops) {
  if (!row.is_object()) rd.fail("not a JSON object");
  Result r;
  r.backend = rd.text(row, "backend");
  r.kernel = rd.text(row, "kernel");
  r.model = rd.text_or(row, "model", "");
  r.problem = rd.text_or(row, "problem", "");
  if (r.model.empty() && r.problem.empty()) rd.fail("missing field 'model' (or 'problem' for a convolution)");
  r.role = rd.text_or(row, "role", "");
  r.mode = rd.text_or(row, "mode", "");
  if (const std::string precision = rd.text_or(row, "precision", "fp32"); precision == "int8")
    r.precision = Precision::int8;
  else if (precision != "fp32")
    rd.fail(fmt::format("precision '{}' is not fp32 or int8", precision));
  r.quantization_options = rd.text_or(row, "quantization_options", "");
  r.batch = rd.integer(row, "batch", 1);
  if (row.contains("threads")) r.threads = static_cast<int>(rd.integer(row, "threads", 0));
  r.status = parse_status(rd, rd.text(row, "status"));
  if (r.status != ResultStatus::ok) {
    r.error = rd.text_or(row, "error", "");
    return r;
  }
  try {
    r.method = parse_percentile_method(rd.text_or(row, "percentile_method", "linear"));
  } catch (const InputError& e) {
    rd.fail(e.what());
  }
  r.measurement.samples_ms = rd.samples(row, "samples_ms");
  r.latency = summarize(r.measurement.samples_ms, r.method);
  if (row.contains("device_samples_ms")) {
    r.measurement.device_samples_ms = rd.samples(row, "device_samples_ms");
    r.device_latency = summarize(r.measurement.device_samples_ms, r.method);
  }
  r.protocol.trials = static_cast<int>(r.measurement.samples_ms.size());
  if (row.contains("warmup")) r.protocol.warmup = static_cast<int>(rd.integer(row, "warmup", 0));
  r.interleaved = row.contains("interleaved") && row["interleaved"] == true;
  if (row.contains("settle_ms")) r.protocol.settle_ms = rd.number(row, "settle_ms");
  if (row.contains("cold_ms")) r.measurement.cold_ms = rd.number(row, "cold_ms");
  r.flops_per_item = rd.number(row, "flops_per_item");
  // The context's peak is the CPU's FMA peak: it belongs to the rows measured against it, those
  // that carry percent_of_peak (not GPU rows). Without it, the row's own % still gives the peak.
  if (row.contains("percent_of_peak") && rd.number(row, "percent_of_peak") > 0)
    r.peak_gflops = peak_gflops > 0 ? peak_gflops : 100 * r.gflops() / rd.number(row, "percent_of_peak");
  r.mistrusted = rd.text_or(row, "mistrusted", "");
  r.effective_flops = row.value("effective_flops", false);
  if (row.contains("memory") && row["memory"].contains("peak_rss_bytes"))
    r.measurement.peak_rss_bytes = static_cast<std::uint64_t>(rd.integer(row["memory"], "peak_rss_bytes", 0));
  if (row.contains("memory") && row["memory"].contains("row_peak_bytes"))  // files from before it: absent
    r.row_memory = RowMemory{
        .baseline_bytes = static_cast<std::uint64_t>(rd.integer(row["memory"], "row_baseline_rss_bytes", 0)),
        .peak_bytes = static_cast<std::uint64_t>(rd.integer(row["memory"], "row_peak_bytes", 0)),
        .own = row["memory"].value("row_memory_is_own", false)};
  if (row.contains("per_layer")) {
    if (!row["per_layer"].is_array()) rd.fail("field 'per_layer' is not a list");
    for (const json& l : row["per_layer"]) {
      if (!l.is_object()) rd.fail("a per_layer entry is not a JSON object");
      r.layer_times.push_back({.layer = rd.text(l, "layer"), .kind = parse_kind(rd, rd.text(l, "kind")),
                               .kernel = rd.text_or(l, "kernel", ""), .median_ms = rd.number(l, "p50_ms"),
                               .share = rd.number(l, "share"),  // flops and bytes: absent from older files
                               .flops = l.contains("flops") ? rd.number(l, "flops") : 0,
                               .bytes = l.contains("bytes") ? rd.number(l, "bytes") : 0});
    }
  }
  return r;
}

}  // namespace

ResultsFile parse_results(const std::string& text, const std::string& path) {
  Reader rd{path, ""};
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    rd.fail(fmt::format("malformed JSON ({})", e.what()));
  }
  if (!doc.is_object() || !doc.contains("schema"))
    rd.fail("not a convlab results file (no \"schema\": \"convlab/1\"; write one with `convlab run --json`)");
  if (doc["schema"] != kSchema)
    rd.fail(fmt::format("schema {} is not {} (this convlab reads only {} results)", doc["schema"].dump(), kSchema, kSchema));
  ResultsFile file;
  file.path = path;
  file.context = doc.value("context", json::object());
  if (!file.context.is_object()) rd.fail("field 'context' is not a JSON object");
  if (doc.contains("complete") && doc["complete"].is_boolean()) file.complete = doc["complete"].get<bool>();
  const json& rows = rd.field(doc, "results");
  if (!rows.is_array()) rd.fail("field 'results' is not a list");
  double peak = 0;  // for % of peak; a context without a measured peak leaves it unknown
  if (const json& p = file.context.value("peak", json::object()); p.is_object() && p.contains("fma_gflops_all_threads"))
    peak = rd.number(p, "fma_gflops_all_threads");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rd.where = fmt::format("results[{}]", i);
    file.results.push_back(parse_row(rd, rows[i], peak));
  }
  return file;
}

ResultsFile read_results_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read '{}': no such file or not readable", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_results(text.str(), path);
}

std::string row_label(const Result& r) {
  std::string label = r.model.empty() ? r.problem : r.model;
  label += " " + r.kernel;
  if (!r.mode.empty()) label += " " + r.mode;
  return label + fmt::format(" batch {}", r.batch);
}

}  // namespace convlab
