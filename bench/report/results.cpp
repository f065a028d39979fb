#include "bench/report/results.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "bench/harness/peak.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

std::string_view to_string(ResultStatus status) {
  switch (status) {
    case ResultStatus::ok: return "ok";
    case ResultStatus::out_of_memory: return "out_of_memory";
    case ResultStatus::invalid: return "invalid";
  }
  return "?";
}

std::vector<std::string> Result::flags() const {
  std::vector<std::string> f = latency.flags;
  if (measurement.peak_rss_is_process_lifetime) f.emplace_back("peak_rss_is_process_lifetime");
  if (!row_memory || !row_memory->own) f.emplace_back("memory_not_own");
  if (effective_flops) f.emplace_back("effective_flops");
  if (on_one_thread) f.emplace_back("on_1_thread");
  if (!mistrusted.empty()) f.emplace_back("mistrusted");
  return f;
}

namespace {
double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }
std::uint64_t plan_bytes(const MemoryAccount& m) { return m.weights_bytes + m.activations_bytes + m.workspace_bytes; }

nlohmann::json summary_json(const Summary& s) {
  return {{"p50", s.p50}, {"p90", s.p90}, {"p95", s.p95}, {"p99", s.p99}, {"mean", s.mean},
          {"std", s.std}, {"min", s.min}, {"max", s.max}};
}

std::string joined(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}
}  // namespace

std::string table_header() {
  return fmt::format("{:<24} {:>5} {:>10} {:>10} {:>9} {:>10} {:>11} {:>8} {:>6} {:>9} {:>8} {:>8}  {}\n", "kernel", "batch",
                     "p50 ms", "p95 ms", "layout ms", "ms/item", "items/s", "GFLOP/s", "%peak", "cold ms", "peak MiB",
                     "plan MiB", "flags");
}

namespace {
// The lines under an end-to-end or --fresh-process row: the stage breakdown, the cold starts.
std::string detail_lines(const Result& r) {
  std::string out;
  if (r.stages)
    out += fmt::format("{:<24}   stages p50 per batch: decode {:.3f} + preprocess {:.3f} + forward {:.3f} = {:.3f} ms"
                       "; images: {}\n", "", r.stages->decode_ms, r.stages->preprocess_ms, r.stages->forward_ms,
                       r.stages->sum_ms(), r.images);
  if (r.fresh && !r.fresh->total_ms.empty()) {
    const Summary total = summarize(r.fresh->total_ms, r.method), forward = summarize(r.fresh->forward_ms, r.method);
    out += fmt::format("{:<24}   {} fresh processes, start to first result: p50 {:.1f} ms, p95 {:.1f} ms, max {:.1f} ms"
                       " (the first forward alone: p50 {:.3f} ms)\n", "", total.n, total.p50, total.p95, total.max,
                       forward.p50);
  }
  return out;
}
}  // namespace

std::string table_row(const Result& r) {
  const std::string kernel = r.mode.empty() ? r.kernel : fmt::format("{} {}", r.kernel, r.mode);
  if (r.status != ResultStatus::ok)
    return fmt::format("{:<24} {:>5} {}\n", kernel, r.batch, r.error);
  std::string device;  // GPUs: the device's own clock, and what the host adds to it
  if (r.device_latency)
    device = fmt::format("{:<24}   device p50 {:.4f} ms; host - device gap {:.4f} ms (launches, synchronize){}\n", "",
                         r.device_latency->p50, r.latency.p50 - r.device_latency->p50,
                         r.measurement.device_memory.peak_bytes
                             ? fmt::format("; device memory {:.2f} MiB", mib(*r.measurement.device_memory.peak_bytes))
                             : std::string());
  // End-to-end rows: no GFLOP/s or %peak, since their time includes decoding and preprocessing.
  return fmt::format("{:<24} {:>5} {:>10.3f} {:>10.3f} {:>9} {:>10.4f} {:>11.1f} {:>8} {:>6} {:>9.3f} {:>8.1f} {:>8.1f}  {}\n{}",
                     kernel, r.batch, r.latency.p50, r.latency.p95,
                     r.layout_ms ? fmt::format("{:.3f}", *r.layout_ms) : std::string("-"), r.per_item_ms(), r.throughput_items_per_s(),
                     r.stages ? std::string("-") : fmt::format("{:.2f}", r.gflops()),
                     r.peak_gflops > 0 && !r.stages ? fmt::format("{:.1f}", r.percent_of_peak()) : std::string("-"),
                     r.measurement.cold_ms, mib(r.shown_peak_bytes()), mib(plan_bytes(r.model_memory)),
                     joined(r.flags(), ","), device) + detail_lines(r) +
         (r.mistrusted.empty() ? "" : fmt::format("{:<24} {:>5} mistrusted: {}\n", "", "", r.mistrusted));
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json j = {{"backend", r.backend}};
  if (!r.model.empty()) j["model"] = r.model;
  if (!r.problem.empty()) j["problem"] = r.problem;
  if (!r.role.empty()) j["role"] = r.role;
  if (!r.mode.empty()) j["mode"] = r.mode;
  j.update({
      {"kernel", r.kernel},
      {"precision", to_string(r.precision)},
      {"batch", r.batch},
      {"threads", r.threads},
      {"status", to_string(r.status)},
  });
  if (r.status != ResultStatus::ok) {
    j["error"] = r.error;
    return j;
  }
  const Measurement& m = r.measurement;
  j["warmup"] = r.protocol.warmup;
  j["trials"] = r.protocol.trials;
  if (r.interleaved) {
    j["interleaved"] = true;
    j["settle_ms"] = r.protocol.settle_ms;
  }
  j["percentile_method"] = to_string(r.method);
  j["latency_ms"] = summary_json(r.latency);
  j["samples_ms"] = m.samples_ms;
  j["cold_ms"] = m.cold_ms;
  if (r.device_latency) {
    j["device_latency_ms"] = summary_json(*r.device_latency);
    j["device_samples_ms"] = m.device_samples_ms;
    j["cold_device_ms"] = m.cold_device_ms;
  }
  j["per_item_ms"] = r.per_item_ms();
  j["throughput_items_per_s"] = r.throughput_items_per_s();
  j["flops_per_item"] = r.flops_per_item;
  j["gflops"] = r.gflops();
  if (r.peak_gflops > 0) j["percent_of_peak"] = r.percent_of_peak();
  if (!r.choices.empty()) j["kernel_choices"] = r.choices;
  if (r.quantization) j["quantization"] = to_json(*r.quantization);
  if (r.precision == Precision::int8 && !r.model.empty()) j["quantization_options"] = r.quantization_options;
  if (r.layout_ms) j["layout_change_ms"] = *r.layout_ms;
  if (r.accuracy)
    j["error_vs_reference"] = {{"max_abs", r.accuracy->max_abs},   {"max_rel", r.accuracy->max_rel},
                               {"normalised", r.accuracy->normalised}, {"reference_peak", r.accuracy->peak},
                               {"checked_outputs", r.accuracy->checked},
                               {"sampled", r.accuracy->sampled}};
  j["memory"] = {
      {"rss_before_bytes", m.rss_before_bytes},
      {"rss_after_bytes", m.rss_after_bytes},
      {"peak_rss_bytes", m.peak_rss_bytes},
      {"row_baseline_rss_bytes", r.row_memory ? r.row_memory->baseline_bytes : 0},
      {"row_peak_bytes", r.shown_peak_bytes()},
      {"row_memory_is_own", r.row_memory && r.row_memory->own},
      {"weights_bytes", r.model_memory.weights_bytes},
      {"activations_bytes", r.model_memory.activations_bytes},
      {"workspace_bytes", r.model_memory.workspace_bytes},
  };
  if (m.device_memory.peak_bytes) j["memory"]["device_peak_bytes"] = *m.device_memory.peak_bytes;
  if (m.device_memory.in_use_bytes) j["memory"]["device_in_use_bytes"] = *m.device_memory.in_use_bytes;
  if (m.device_memory_before.in_use_bytes)
    j["memory"]["device_in_use_before_bytes"] = *m.device_memory_before.in_use_bytes;
  j["flags"] = r.flags();
  if (!r.mistrusted.empty()) j["mistrusted"] = r.mistrusted;
  if (r.effective_flops) j["effective_flops"] = true;
  if (r.stages)
    j["stages_ms"] = {{"decode", r.stages->decode_ms}, {"preprocess", r.stages->preprocess_ms},
                      {"forward", r.stages->forward_ms}, {"sum", r.stages->sum_ms()}, {"images", r.images}};
  if (r.fresh && !r.fresh->total_ms.empty()) {
    const Summary total = summarize(r.fresh->total_ms, r.method), forward = summarize(r.fresh->forward_ms, r.method);
    j["fresh_process"] = {{"runs", total.n},
                          {"start_to_result_ms", {{"p50", total.p50}, {"p95", total.p95}, {"max", total.max}}},
                          {"samples_ms", r.fresh->total_ms},
                          {"first_forward_ms", {{"p50", forward.p50}, {"p95", forward.p95}, {"max", forward.max}}},
                          {"first_forward_samples_ms", r.fresh->forward_ms}};
  }
  for (const LayerTime& t : r.layer_times)  // only with --per-layer
    j["per_layer"].push_back({{"layer", t.layer}, {"kind", to_string(t.kind)}, {"kernel", t.kernel},
                              {"p50_ms", t.median_ms}, {"share", t.share}, {"flops", t.flops}, {"bytes", t.bytes}});
  return j;
}

nlohmann::json results_document(const Environment& env, const Peak* peak, const std::vector<Result>& results) {
  nlohmann::json doc = {{"schema", kSchema}, {"context", to_json(env)}, {"results", nlohmann::json::array()}};
  if (peak != nullptr) doc["context"]["peak"] = to_json(*peak);
  for (const Result& r : results) doc["results"].push_back(to_json(r));
  return doc;
}

std::string csv_header() {
  return "model,problem,backend,kernel,precision,mode,batch,threads,status,warmup,trials,percentile_method,p50_ms,p90_ms,p95_ms,p99_ms,"
         "mean_ms,std_ms,min_ms,max_ms,cold_ms,per_item_ms,throughput_items_per_s,rss_before_bytes,"
         "rss_after_bytes,peak_rss_bytes,weights_bytes,activations_bytes,workspace_bytes,gflops,percent_of_peak,"
         "max_abs_error,normalised_error,flags,decode_ms,preprocess_ms,forward_ms,fresh_p50_ms,fresh_p95_ms,"
         "fresh_max_ms\n";
}

std::string csv_row(const Result& r) {
  const Measurement& m = r.measurement;
  std::string row = fmt::format("{},{},{},{},{},{},{},{},{}", r.model, r.problem, r.backend, r.kernel,
                                to_string(r.precision), r.mode, r.batch, r.threads, to_string(r.status));
  if (r.status != ResultStatus::ok) return row + std::string(31, ',') + "\n";
  const Summary& s = r.latency;
  row += fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", r.protocol.warmup,
                     r.protocol.trials, to_string(r.method), s.p50, s.p90, s.p95, s.p99, s.mean, s.std, s.min,
                     s.max, m.cold_ms, r.per_item_ms(), r.throughput_items_per_s(), m.rss_before_bytes,
                     m.rss_after_bytes, m.peak_rss_bytes, r.model_memory.weights_bytes,
                     r.model_memory.activations_bytes, r.model_memory.workspace_bytes, r.gflops(),
                     r.percent_of_peak());
  row += r.accuracy ? fmt::format("{},{},", r.accuracy->max_abs, r.accuracy->normalised) : std::string(",,");
  row += joined(r.flags(), ";");
  row += r.stages ? fmt::format(",{},{},{}", r.stages->decode_ms, r.stages->preprocess_ms, r.stages->forward_ms)
                  : std::string(",,,");
  if (r.fresh && !r.fresh->total_ms.empty()) {
    const Summary total = summarize(r.fresh->total_ms, r.method);
    row += fmt::format(",{},{},{}", total.p50, total.p95, total.max);
  } else {
    row += ",,,";
  }
  return row + "\n";
}

void check_writable(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw InputError(fmt::format("cannot write '{}': it is a folder", path));
  const std::string probe = fmt::format("{}.{}.check.tmp", path, ::getpid());  // beside it, never the file itself
  if (!std::ofstream(probe, std::ios::binary | std::ios::trunc))
    throw InputError(fmt::format("cannot write '{}': the folder does not exist or is not writable", path));
  std::remove(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("cannot write '{}': the folder does not exist or is not writable", path));
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(fmt::format("cannot write '{}': write failed (disk full?)", path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InputError(fmt::format("cannot write '{}': rename failed", path));
  }
}

}  // namespace convlab
