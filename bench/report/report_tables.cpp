#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "bench/report/report_formats.hpp"

namespace convlab {

std::vector<RowGroup> group_rows(const std::vector<ResultsFile>& files) {
  std::vector<RowGroup> groups;
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::size_t> index;
    for (const Result& r : files[f].results) {
      if (r.status != ResultStatus::ok) continue;
      const std::string subject = r.model.empty() ? r.problem : r.model;
      const auto [it, fresh] = index.try_emplace({subject, r.backend, r.kernel, r.mode}, groups.size());
      if (fresh) {
        std::string label = subject + " " + r.kernel + (r.mode.empty() ? "" : " " + r.mode);
        if (files.size() > 1) label += fmt::format(" [{}]", f + 1);
        groups.push_back({label, subject, r.kernel + (r.mode.empty() ? "" : " " + r.mode), f, {}});
      }
      groups[it->second].rows.push_back(&r);
    }
  }
  for (RowGroup& g : groups)
    std::stable_sort(g.rows.begin(), g.rows.end(), [](const Result* a, const Result* b) { return a->batch < b->batch; });
  return groups;
}

std::vector<std::string> summary_header(bool device) {
  std::vector<std::string> h = {"series", "batch", "trials", "p50 ms", "p95 ms", "p99 ms", "ms/item", "items/s",
                                "GFLOP/s", "% peak", "cold ms"};
  if (device) h.emplace_back("device p50 ms");
  h.emplace_back("flags");
  return h;
}

std::vector<std::string> summary_cells(const RowGroup& g, const Result& r, bool device) {
  std::string flags;
  for (const std::string& f : r.flags()) flags += (flags.empty() ? "" : ", ") + f;
  std::vector<std::string> c = {g.label,
                                fmt::format("{}", r.batch),
                                fmt::format("{}", r.latency.n),
                                fmt::format("{:.3f}", r.latency.p50),
                                fmt::format("{:.3f}", r.latency.p95),
                                fmt::format("{:.3f}", r.latency.p99),
                                fmt::format("{:.4f}", r.per_item_ms()),
                                fmt::format("{:.1f}", r.throughput_items_per_s()),
                                fmt::format("{:.2f}", r.gflops()),
                                r.peak_gflops > 0 ? fmt::format("{:.1f}", r.percent_of_peak()) : "-",
                                fmt::format("{:.3f}", r.measurement.cold_ms)};
  if (device) c.push_back(r.device_latency ? fmt::format("{:.4f}", r.device_latency->p50) : "-");
  c.push_back(flags);
  return c;
}

Roofs roofs_of(const ResultsFile& file, const Result& r) {
  if (r.backend != "cpu" || !file.context.contains("peak") || !file.context["peak"].is_object()) return {};
  const nlohmann::json& peak = file.context["peak"];
  const auto number = [&peak](const char* name) {
    return peak.contains(name) && peak[name].is_number() ? peak[name].get<double>() : 0.0;
  };
  return {number(r.precision == Precision::int8 ? "int8_gops_all_threads" : "fma_gflops_all_threads"),
          number("read_gbs")};
}

namespace {
// A context value as a reader wants it: text as is, measured figures to 4 significant digits
// (117.5, not 117.54892132028255: the file keeps every digit).
std::string context_value(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump();
}
}  // namespace

std::vector<std::pair<std::string, std::string>> context_lines(const nlohmann::json& context) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : context.items()) {
    if (value.is_object()) {
      for (const auto& [sub, v] : value.items()) out.emplace_back(key + "." + sub, context_value(v));
    } else {
      out.emplace_back(key, context_value(value));
    }
  }
  return out;
}

namespace {
std::string md_row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const std::string& c : cells) s += " " + c + " |";
  return s + "\n";
}
}  // namespace

std::string markdown_report(const std::vector<ResultsFile>& files) {
  const auto groups = group_rows(files);
  bool device = false;
  for (const RowGroup& g : groups)
    for (const Result* r : g.rows) device = device || r->device_latency.has_value();
  std::string s = "## Latency per batch\n\n";
  for (std::size_t f = 0; f < files.size(); ++f)
    s += fmt::format("{}. `{}`: {}, {}{}\n", f + 1, files[f].path, files[f].context.value("cpu_model", "?"),
                     files[f].context.value("date_utc", "?"), files[f].complete ? "" : " (INCOMPLETE: interrupted run)");
  const auto header = summary_header(device);
  s += '\n';  // appended apart: GCC 12 warns falsely (-Wrestrict) on "\n" + std::string
  s += md_row(header) + md_row(std::vector<std::string>(header.size(), "---"));
  for (const RowGroup& g : groups)
    for (const Result* r : g.rows) s += md_row(summary_cells(g, *r, device));
  s += "\nPercentiles: linear interpolation between order statistics (numpy's default) unless a row says otherwise;"
       " p99 from under 100 trials is flagged `p99_few_trials`.\n";
  for (const RowGroup& g : groups)
    for (const Result* r : g.rows) {
      if (r->layer_times.empty()) continue;
      s += fmt::format("\n### Per layer: {} at batch {}\n\n", g.label, r->batch);
      const Roofs roofs = roofs_of(files[g.file], *r);
      if (roofs.known())
        s += fmt::format("Roofline: intensity = FLOPs / minimum bytes moved (inputs, weights, output once each); the "
                         "roof is min({:.1f} {}, {:.1f} GB/s x intensity), from the peak measured in that run.\n\n",
                         roofs.compute_gflops, r->precision == Precision::int8 ? "GOP/s (int8 dot product)" : "GFLOP/s",
                         roofs.read_gbs);
      s += md_row({"layer", "kind", "kernel", "p50 ms", "share", "FLOP/B", "GFLOP/s", "bound", "% of roof"}) +
           md_row({"---", "---", "---", "---:", "---:", "---:", "---:", "---", "---:"});
      for (const LayerTime& t : r->layer_times) {
        const auto point = roofline_point(t, roofs.compute_gflops, roofs.read_gbs);
        s += md_row({t.layer, std::string(to_string(t.kind)), t.kernel.empty() ? "-" : t.kernel,
                     fmt::format("{:.4f}", t.median_ms), fmt::format("{:.1f}%", 100 * t.share),
                     t.flops > 0 && t.bytes > 0 ? fmt::format("{:.2f}", t.intensity()) : "-",
                     t.flops > 0 ? fmt::format("{:.1f}", t.gflops()) : "-",
                     point ? (point->memory_bound ? "memory" : "compute") : "-",
                     point ? fmt::format("{:.1f}%", point->percent_of_roof) : "-"});
      }
    }
  std::string failed;
  for (const ResultsFile& file : files)
    for (const Result& r : file.results)
      if (r.status != ResultStatus::ok) failed += fmt::format("- {}: {} ({})\n", row_label(r), to_string(r.status), r.error);
  if (!failed.empty()) s += "\n### Not measured\n\n" + failed;
  for (std::size_t f = 0; f < files.size(); ++f) {
    s += fmt::format("\n### Environment of file {}\n\n", f + 1) + md_row({"key", "value"}) + md_row({"---", "---"});
    for (const auto& [k, v] : context_lines(files[f].context)) s += md_row({k, v});
  }
  return s;
}

nlohmann::json gbench_json(const std::vector<ResultsFile>& files) {
  const nlohmann::json& ctx = files.front().context;
  nlohmann::json doc = {
      {"context",
       {{"date", ctx.value("date_utc", "")},
        {"host_name", ""},
        {"executable", "convlab"},
        {"num_cpus", ctx.value("logical_cpus", 0)},
        {"mhz_per_cpu", 0},
        {"cpu_scaling_enabled", false},
        {"caches", nlohmann::json::array()},
        {"load_avg", nlohmann::json::array({ctx.value("load_average", 0.0)})},
        {"library_build_type", "release"},
        {"convlab_cpu_model", ctx.value("cpu_model", "")},
        {"convlab_note", "converted by `convlab report --gbench-json`; each trial is one iteration row; convlab "
                         "measures wall time only, so cpu_time repeats real_time"}}},
      {"benchmarks", nlohmann::json::array()}};
  int family = 0;
  for (const RowGroup& g : group_rows(files)) {
    int instance = 0;
    for (const Result* r : g.rows) {
      std::string name = g.subject + "/" + r->kernel + (r->mode.empty() ? "" : "/mode:" + r->mode);
      name += fmt::format("/batch:{}", r->batch);
      const auto& samples = r->measurement.samples_ms;
      const nlohmann::json common = {{"family_index", family},     {"per_family_instance_index", instance},
                                     {"run_name", name},           {"repetitions", samples.size()},
                                     {"threads", std::max(1, r->threads)}, {"time_unit", "ms"}};
      for (std::size_t i = 0; i < samples.size(); ++i) {
        nlohmann::json row = common;
        row.update({{"name", name}, {"run_type", "iteration"}, {"repetition_index", i}, {"iterations", 1},
                    {"real_time", samples[i]}, {"cpu_time", samples[i]}});
        doc["benchmarks"].push_back(row);
      }
      for (const auto& [agg, value] : {std::pair{"mean", r->latency.mean}, std::pair{"median", r->latency.p50},
                                       std::pair{"stddev", r->latency.std}}) {
        nlohmann::json row = common;
        row.update({{"name", name + "_" + agg}, {"run_type", "aggregate"}, {"aggregate_name", agg},
                    {"aggregate_unit", "time"}, {"iterations", samples.size()}, {"real_time", value}, {"cpu_time", value}});
        doc["benchmarks"].push_back(row);
      }
      ++instance;
    }
    ++family;
  }
  return doc;
}

}  // namespace convlab
