// `convlab report -o report.html`: one self-contained page (inline SVG, inline CSS, no script).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "bench/report/report_formats.hpp"
#include "bench/report/wording.hpp"
#include "bench/report/svg_plot.hpp"

namespace convlab {

namespace {

using svg::escape;

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1340px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:12px;margin:8px 0}"
    "td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}td:first-child,th:first-child{text-align:left}"
    "th{background:#f2f2f2}.row{display:flex;flex-wrap:wrap;gap:12px}"
    ".note{color:#555;font-size:13px;max-width:1000px}.warn{color:#a40}.env td{text-align:left}";

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string s = "<table><tr>";
  for (const auto& h : header) s += "<th>" + escape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& row : rows) {
    s += "<tr>";
    for (const auto& c : row) s += "<td>" + escape(c) + "</td>";
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

// Latencies across batch sizes and kernels span decades: a log axis once they span over 8x.
bool wide(double lo, double hi) { return lo > 0 && hi / lo > 8; }

std::vector<double> sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string distributions(const RowGroup& g) {
  double lo = 1e300, hi = 0;
  std::vector<svg::Violin> violins;
  svg::LineChart cdf{.title = g.label + ": CDF of trial latency", .x = {"latency per batch, ms", false},
                     .y = {"fraction of trials", false}, .step = true};
  for (std::size_t i = 0; i < g.rows.size(); ++i) {
    const Result& r = *g.rows[i];
    lo = std::min(lo, r.latency.min), hi = std::max(hi, r.latency.max);
    violins.push_back({fmt::format("batch {}", r.batch), r.measurement.samples_ms, r.latency.p50, r.latency.p99});
    for (const auto* samples : {&r.measurement.samples_ms, &r.measurement.device_samples_ms}) {
      if (samples->empty()) continue;
      const bool dev = samples == &r.measurement.device_samples_ms;
      svg::Series se{.name = fmt::format("batch {}{}", r.batch, dev ? " device" : ""), .points = false, .dashed = dev,
                     .color = i};
      se.x = sorted(*samples);
      for (std::size_t k = 0; k < se.x.size(); ++k) se.y.push_back(double(k + 1) / double(se.x.size()));
      cdf.series.push_back(std::move(se));
    }
  }
  cdf.x.log = wide(lo, hi);
  return "<div class=\"row\">" + svg::violins(g.label + ": trial latency per batch", violins) +
         svg::line_chart(cdf) + "</div>\n";
}

std::string percentiles_vs_batch(const RowGroup& g) {
  const bool log_y = wide(g.rows.front()->latency.p50, g.rows.back()->latency.p99);
  svg::LineChart c{.title = g.label + ": p50 / p95 / p99 vs batch", .x = {"batch size", true}, .y = {"latency per batch, ms", log_y}};
  const std::pair<const char*, double Summary::*> lines[] = {{"p50", &Summary::p50}, {"p95", &Summary::p95}, {"p99", &Summary::p99}};
  for (std::size_t k = 0; k < 3; ++k) {
    svg::Series se{.name = lines[k].first, .dashed = k > 0, .color = k};
    for (const Result* r : g.rows) {
      se.x.push_back(static_cast<double>(r->batch));
      se.y.push_back(r->latency.*lines[k].second);
    }
    c.series.push_back(std::move(se));
  }
  return svg::line_chart(c);
}

// One chart per subject: each series is a kernel (and mode), its points the batch sizes.
std::string throughput_vs_latency(const std::vector<RowGroup>& groups, const std::string& subject) {
  svg::LineChart c{.title = subject + ": throughput vs latency", .x = {"latency per request (batch p50), ms", false},
                   .y = {"throughput, items/s", false}};
  double lat_lo = 1e300, lat_hi = 0, tp_lo = 1e300, tp_hi = 0;
  std::vector<std::string> colours;  // a kernel keeps its colour across files; a later file's line is dashed
  for (const RowGroup& g : groups) {
    if (g.subject != subject) continue;
    auto it = std::find(colours.begin(), colours.end(), g.series);
    if (it == colours.end()) it = colours.insert(colours.end(), g.series);
    svg::Series se{.name = g.label.substr(subject.size() + 1), .dashed = g.file > 0,
                   .color = static_cast<std::size_t>(it - colours.begin())};
    for (const Result* r : g.rows) {
      se.x.push_back(r->latency.p50);
      se.y.push_back(r->throughput_items_per_s());
      se.point_labels.push_back(fmt::format("b{}", r->batch));
      lat_lo = std::min(lat_lo, r->latency.p50), lat_hi = std::max(lat_hi, r->latency.p50);
      tp_lo = std::min(tp_lo, r->throughput_items_per_s()), tp_hi = std::max(tp_hi, r->throughput_items_per_s());
    }
    c.series.push_back(std::move(se));
  }
  c.x.log = wide(lat_lo, lat_hi);
  c.y.log = wide(tp_lo, tp_hi);
  return svg::line_chart(c);
}

std::string per_layer(const std::vector<RowGroup>& groups) {
  std::string s;
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<svg::StackedRow>>> by_subject;
  for (const RowGroup& g : groups)
    for (const Result* r : g.rows) {
      if (r->layer_times.empty()) continue;
      auto& [parts, rows] = by_subject[g.subject];
      svg::StackedRow row{fmt::format("{} b{}", g.label.substr(g.subject.size() + 1), r->batch), {}};
      for (const LayerTime& t : r->layer_times) {
        const auto it = std::find(parts.begin(), parts.end(), t.layer);
        const std::size_t idx = static_cast<std::size_t>(it - parts.begin());
        if (it == parts.end()) parts.push_back(t.layer);
        row.shares.resize(parts.size());
        row.shares[idx] = t.share;
      }
      rows.push_back(std::move(row));
    }
  for (const auto& [subject, pr] : by_subject)
    s += svg::stacked_bars(subject + ": share of the forward pass per layer", pr.first, pr.second, 1100);
  return s;
}

// Per file, subject and precision: a log-log roofline, one point per conv or linear layer for each
// kernel x batch row, under the roofs of that file's measured peak.
std::string rooflines(const std::vector<ResultsFile>& files, const std::vector<RowGroup>& groups) {
  struct Chart {
    Roofs roofs;
    std::vector<svg::Series> series;
    double lo = 1e300, hi = 0;
  };
  std::map<std::tuple<std::size_t, std::string, std::string>, Chart> charts;
  for (const RowGroup& g : groups)
    for (const Result* r : g.rows) {
      const Roofs roofs = roofs_of(files[g.file], *r);
      if (r->layer_times.empty() || !roofs.known()) continue;
      Chart& c = charts[{g.file, g.subject, std::string(to_string(r->precision))}];
      c.roofs = roofs;
      svg::Series se{.name = fmt::format("{} b{}", g.series, r->batch), .line = false};
      se.color = c.series.size() + 1;
      for (const LayerTime& t : r->layer_times) {
        if (!roofline_point(t, roofs.compute_gflops, roofs.read_gbs)) continue;
        se.x.push_back(t.intensity());
        se.y.push_back(t.gflops());
        se.point_labels.push_back(t.layer);
        c.lo = std::min(c.lo, t.intensity()), c.hi = std::max(c.hi, t.intensity());
      }
      if (!se.x.empty()) c.series.push_back(std::move(se));
    }
  std::string s;
  for (auto& [key, c] : charts) {
    if (c.series.empty()) continue;
    const auto& [file, subject, precision] = key;
    const double ridge = c.roofs.compute_gflops / c.roofs.read_gbs;  // FLOP/B where the roofs meet
    const double lo = std::min(c.lo, ridge) / 2, hi = std::max(c.hi, ridge) * 2;
    svg::Series roof{.name = fmt::format("roof: {:.1f} GB/s read x intensity, up to {:.1f} G{}/s ({})", c.roofs.read_gbs,
                                         c.roofs.compute_gflops, precision == "int8" ? "OP" : "FLOP",
                                         precision == "int8" ? "int8 dot product" : "FMA peak"),
                     .x = {lo, ridge, hi}, .y = {c.roofs.read_gbs * lo, c.roofs.compute_gflops, c.roofs.compute_gflops},
                     .points = false, .dashed = true, .color = 0};
    c.series.insert(c.series.begin(), std::move(roof));
    s += svg::line_chart({.title = fmt::format("{} {}{}: per-layer roofline", subject, precision,
                                               files.size() > 1 ? fmt::format(" [{}]", file + 1) : ""),
                          .x = {"arithmetic intensity, FLOP per byte (minimum traffic)", true},
                          .y = {precision == "int8" ? "achieved GOP/s" : "achieved GFLOP/s", true},
                          .series = std::move(c.series), .width = 900, .height = 460});
  }
  return s;
}

// Per subject, batch and mode: GFLOP/s of each kernel, with % of the measured peak when known.
std::string kernel_bars(const std::vector<RowGroup>& groups) {
  std::map<std::tuple<std::string, std::string, std::int64_t>, std::vector<svg::Bar>> charts;
  for (const RowGroup& g : groups)
    for (const Result* r : g.rows)
      charts[{g.subject, r->mode, r->batch}].push_back(
          {g.label.substr(g.subject.size() + 1), r->gflops(),
           (r->peak_gflops > 0 ? fmt::format("GFLOP/s, {:.1f}% of peak", r->percent_of_peak()) : std::string("GFLOP/s")) +
               fmt::format(", p50 {:.3g} ms", r->latency.p50),
           0});
  std::string s;
  for (auto& [key, bars] : charts) {
    if (bars.size() < 2) continue;
    std::sort(bars.begin(), bars.end(), [](const svg::Bar& a, const svg::Bar& b) { return a.value > b.value; });
    for (std::size_t i = 0; i < bars.size(); ++i) bars[i].color = i == 0 ? 2 : 0;
    const auto& [subject, mode, batch] = key;
    s += svg::bar_chart(fmt::format("{}{} at batch {}", subject, mode.empty() ? "" : " " + mode, batch), "GFLOP/s", bars, 900);
  }
  return s.empty() ? "<p class=\"note\">One kernel per batch: nothing to compare.</p>\n" : s;
}

}  // namespace

std::string html_report(const std::vector<ResultsFile>& files) {
  const auto groups = group_rows(files);
  std::string s = fmt::format("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>convlab report</title>"
                              "<style>{}</style></head><body>\n<h1>convlab report</h1>\n<ol>", kStyle);
  for (const ResultsFile& f : files)
    s += fmt::format("<li><code>{}</code>: {}, {}, {}{}</li>", escape(f.path), escape(f.context.value("cpu_model", "?")),
                     count_of(f.context.value("threads", 0), "thread"), escape(f.context.value("date_utc", "?")),
                     f.complete ? "" : " <b class=\"warn\">INCOMPLETE (interrupted run)</b>");
  s += "</ol>\n<p class=\"note\">Every figure is computed from the stored trials (<code>samples_ms</code>). Percentiles: "
       "linear interpolation between order statistics (numpy's default); p99 from under 100 trials is flagged "
       "<code>p99_few_trials</code>. GPU rows name their mode: <i>eager</i> (the forward alone), <i>eager+transfers</i> "
       "(with the input and output copies) or <i>graph</i> (a CUDA Graph replayed); device p50 is the CUDA event clock.</p>\n";

  bool device = false;
  std::vector<std::vector<std::string>> rows;
  for (const RowGroup& g : groups)
    for (const Result* r : g.rows) device = device || r->device_latency.has_value();
  for (const RowGroup& g : groups)
    for (const Result* r : g.rows) rows.push_back(summary_cells(g, *r, device));
  s += "<h2>Summary</h2>\n" + table(summary_header(device), rows);
  std::vector<std::vector<std::string>> failed;
  for (const ResultsFile& f : files)
    for (const Result& r : f.results)
      if (r.status != ResultStatus::ok) failed.push_back({row_label(r), std::string(to_string(r.status)), r.error});
  if (!failed.empty()) s += "<h3>Not measured</h3>\n" + table({"row", "status", "why"}, failed);

  s += "<h2>Latency distributions per batch</h2>\n<p class=\"note\">Violins: the density of every trial, each batch "
       "in its own panel on its own scale, from the fastest trial to just above p99 (slower trials are counted on top): "
       "the dark line is the median, the dashed orange one p99. A wide body is a spread the median hides; "
       "a long thin neck up to p99 is a few slow trials. The CDF reads the fraction of trials at or under a latency: the gap between where it "
       "leaves 0.5 and 0.95 is the spread a user sees as p95 versus median. Dashed: the device clock.</p>\n";
  for (const RowGroup& g : groups) s += distributions(g);

  s += "<h2>p50, p95 and p99 vs batch</h2>\n<div class=\"row\">";
  for (const RowGroup& g : groups)
    if (g.rows.size() > 1) s += percentiles_vs_batch(g);
  s += "</div>\n<h2>Throughput vs latency</h2>\n<p class=\"note\">Each point is a batch size (b8: batch 8). The latency "
       "per item (batch p50 / batch, in the summary) is 1000 / throughput: up is cheaper per item. Up and to the right: batching buys throughput and costs every request latency.</p>"
       "\n<div class=\"row\">";
  std::set<std::string> subjects;
  for (const RowGroup& g : groups) subjects.insert(g.subject);
  for (const std::string& subject : subjects) s += throughput_vs_latency(groups, subject);
  s += "</div>\n<h2>Per-layer breakdown</h2>\n";
  const std::string layers = per_layer(groups);
  s += layers.empty() ? "<p class=\"note\">No per-layer times: run with <code>convlab run … --per-layer</code>.</p>\n" : layers;
  s += "<h2>Per-layer roofline</h2>\n";
  const std::string roofs = rooflines(files, groups);
  s += roofs.empty() ? "<p class=\"note\">No roofline: it needs <code>convlab run … --per-layer</code> on the CPU (which "
                       "measures the read bandwidth for it).</p>\n"
                     : "<p class=\"note\">Each point is one conv or linear layer of one kernel and batch: its FLOPs over "
                       "the minimum bytes it must move (inputs, weights and output once each) against the rate it "
                       "achieved. Under the slanted roof a layer is memory-bound (its bytes take longer than its FLOPs "
                       "at peak), under the flat one compute-bound; the distance to the roof is what a better kernel "
                       "could win. The roofs are the FMA peak and read bandwidth measured in that run; the Markdown "
                       "report has the same numbers as a table. Winograd rows count the direct FLOPs, so can pass "
                       "the compute roof.</p>\n" + roofs;
  s += "<h2>Kernel comparison</h2>\n" + kernel_bars(groups);

  s += "<h2>Environment</h2>\n<div class=\"row\">";
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::vector<std::vector<std::string>> env;
    for (const auto& [k, v] : context_lines(files[f].context)) env.push_back({k, v});
    s += "<div class=\"env\">" + table({fmt::format("file {}", f + 1), files[f].path}, env) + "</div>";
  }
  return s + "</div>\n</body></html>\n";
}

}  // namespace convlab
