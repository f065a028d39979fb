#include "bench/report/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>

namespace convlab::svg {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string color(std::size_t i) {
  // Okabe-Ito, readable by colour-blind students, then two darker extras.
  static const char* const kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00",
                                         "#56B4E9", "#999933", "#882255", "#444444", "#F0E442"};
  return kPalette[i % std::size(kPalette)];
}

namespace {

constexpr int kLeft = 72, kRight = 170, kTop = 34, kBottom = 48;  // margins; kRight: the stacked bars' legend

// Tick and bar labels: 12000, not 1.2e+04.
std::string num(double v) { return std::abs(v) >= 1e4 && std::abs(v) < 1e9 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v); }

// Maps data values to pixels along one axis, on a linear or log10 scale.
struct Scale {
  double lo, hi;
  bool log;
  double p0, p1;  // pixels of lo and hi
  double t(double v) const { return log ? std::log10(std::max(v, 1e-300)) : v; }
  double operator()(double v) const { return p0 + (t(v) - t(lo)) / (t(hi) - t(lo)) * (p1 - p0); }
};

// The data range, widened a little (and to whole tick steps) so points do not sit on the frame.
std::pair<double, double> range_of(double lo, double hi, bool log, bool from_zero) {
  if (!(lo <= hi)) return {log ? 0.1 : 0.0, 1.0};
  if (log) {
    lo = std::max(lo, 1e-9);
    if (hi <= lo * 1.0001) { lo /= 2; hi *= 2; }
    return {lo / 1.25, hi * 1.25};
  }
  if (from_zero && lo >= 0) lo = 0;
  if (hi - lo < 1e-12) { hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1); }
  const double pad = (hi - lo) * 0.05;
  return {lo == 0 ? 0 : lo - pad, hi + pad};
}

std::vector<double> ticks(double lo, double hi, bool log) {
  std::vector<double> out;
  if (log) {
    const bool dense = std::log10(hi / lo) < 2.5;  // few decades: 1, 2, 5 in each
    for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
      for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo && v <= hi) out.push_back(v);
      }
    if (out.size() >= 3) return out;
    out.clear();  // under three 1-2-5 steps in range: evenly spaced round values read better
  }
  const double raw = (hi - lo) / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

std::string open_svg(int w, int h, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\" style=\"max-width:100%;height:auto\"><rect width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>"
      "<text x=\"{2}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{3}</text>",
      w, h, kLeft, escape(title));
}

// The frame, grid and tick labels of a line chart's plot area (its legend goes below, so the
// right margin is narrow); returns the two scales.
std::pair<Scale, Scale> frame(std::string& s, int w, int h, const Axis& ax, std::pair<double, double> xr, const Axis& ay,
                              std::pair<double, double> yr) {
  constexpr int right = 24;
  const Scale x{xr.first, xr.second, ax.log, double(kLeft), double(w - right)};
  const Scale y{yr.first, yr.second, ay.log, double(h - kBottom), double(kTop)};
  for (double v : ticks(x.lo, x.hi, x.log))
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#333\">{4}</text>",
                     x(v), kTop, h - kBottom, h - kBottom + 15, num(v));
  for (double v : ticks(y.lo, y.hi, y.log))
    s += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#e4e4e4\"/>"
                     "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\" fill=\"#333\">{5}</text>",
                     kLeft, w - right, y(v), kLeft - 5, y(v) + 4, num(v));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>", kLeft, kTop,
                   w - kLeft - right, h - kTop - kBottom);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>", (kLeft + w - right) / 2, h - 10,
                   escape(ax.title), ax.log ? " (log scale)" : "");
  s += fmt::format("<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}{}</text>",
                   (kTop + h - kBottom) / 2, escape(ay.title), ay.log ? " (log)" : "");
  return {x, y};
}

// A legend entry in the right margin (the stacked bars', whose names are short).
void legend(std::string& s, int w, std::size_t row, const std::string& name, const std::string& c, bool dashed) {
  const double y = kTop + 8 + 17.0 * static_cast<double>(row);
  s += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"3\"{4}/>"
                   "<text x=\"{5}\" y=\"{6}\">{7}</text>",
                   w - kRight + 10, w - kRight + 30, y, c, dashed ? " stroke-dasharray=\"5 3\"" : "", w - kRight + 35,
                   y + 4, escape(name.size() > 20 ? name.substr(0, 19) + "…" : name));
}

// Text widths for layout, from the average advance of a sans-serif face: a slight overestimate
// is safe, since it only spaces things further apart.
double text_width(const std::string& text, double font_px) { return 0.62 * font_px * static_cast<double>(text.size()); }

// The line charts' legend: below the plot, every name in full (a truncated name could hide the
// "[2]" that says which file a series comes from), flowing left to right in rows.
struct LegendEntry {
  std::string name, color;
  bool dashed = false;
};
constexpr double kLegendRow = 17;
std::vector<std::pair<double, double>> legend_layout(const std::vector<LegendEntry>& entries, int w) {
  std::vector<std::pair<double, double>> at;  // (x, row) of each entry
  double x = kLeft, row = 0;
  for (const LegendEntry& e : entries) {
    const double width = 30 + text_width(e.name, 12) + 18;
    if (x > kLeft && x + width > w - 8) x = kLeft, row += 1;
    at.emplace_back(x, row);
    x += width;
  }
  return at;
}
int legend_rows(const std::vector<LegendEntry>& entries, int w) {
  const auto at = legend_layout(entries, w);
  return at.empty() ? 0 : static_cast<int>(at.back().second) + 1;
}
void legend_below(std::string& s, const std::vector<LegendEntry>& entries, int w, int top) {
  const auto at = legend_layout(entries, w);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const double y = top + kLegendRow * at[i].second + 8;
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"3\"{4}/>"
                     "<text x=\"{5:.1f}\" y=\"{6:.1f}\">{7}</text>",
                     at[i].first, at[i].first + 22, y, entries[i].color,
                     entries[i].dashed ? " stroke-dasharray=\"5 3\"" : "", at[i].first + 27, y + 4, escape(entries[i].name));
  }
}

// Point labels ("b32") placed where they cover no label already drawn: four spots around the
// point, tried in turn. Two series with a point in the same place (two files measuring the same
// batch alike) would write the same text twice: the second is left out.
class PointLabels {
 public:
  void add(std::string& s, double px, double py, const std::string& text, const std::string& col) {
    const double w = text_width(text, 10), h = 10;
    for (const auto& [x, y, t] : anchors_)
      if (t == text && std::abs(x - px) < 6 && std::abs(y - py) < 6) return;  // this point is labelled already
    anchors_.emplace_back(px, py, text);
    const std::pair<double, double> spots[] = {{px + 5, py - 5}, {px + 5, py + 13}, {px - 5 - w, py - 5}, {px - 5 - w, py + 13}};
    for (const auto& [x, y] : spots) {
      const Box box{x, y - h, x + w, y};
      if (std::any_of(placed_.begin(), placed_.end(), [&](const Box& b) { return b.overlaps(box); })) continue;
      placed_.push_back(box);
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"{}\">{}</text>", x, y, col, escape(text));
      return;
    }
  }

 private:
  struct Box {
    double x0, y0, x1, y1;
    bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  };
  std::vector<Box> placed_;
  std::vector<std::tuple<double, double, std::string>> anchors_;
};

}  // namespace

std::string line_chart(const LineChart& c) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const Series& se : c.series)
    for (std::size_t i = 0; i < se.x.size(); ++i) {
      x0 = std::min(x0, se.x[i]), x1 = std::max(x1, se.x[i]);
      y0 = std::min(y0, se.y[i]), y1 = std::max(y1, se.y[i]);
    }
  std::vector<LegendEntry> entries;
  for (const Series& se : c.series) entries.push_back({se.name, color(se.color), se.dashed});
  const int plot_height = c.height, height = plot_height + static_cast<int>(kLegendRow) * legend_rows(entries, c.width) + 6;
  std::string s = open_svg(c.width, height, c.title);
  const auto [x, y] = frame(s, c.width, plot_height, c.x, range_of(x0, x1, c.x.log, false), c.y,
                            c.step ? std::pair{0.0, 1.0} : range_of(y0, y1, c.y.log, true));
  PointLabels labels;
  for (const Series& se : c.series) {
    const std::string col = color(se.color);
    if (se.line && !se.x.empty()) {
      std::string d = fmt::format("M{:.1f},{:.1f}", x(se.x[0]), c.step ? y(0) : y(se.y[0]));
      for (std::size_t i = c.step ? 0 : 1; i < se.x.size(); ++i)
        d += c.step ? fmt::format(" H{:.1f} V{:.1f}", x(se.x[i]), y(se.y[i])) : fmt::format(" L{:.1f},{:.1f}", x(se.x[i]), y(se.y[i]));
      s += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>", d, col,
                       se.dashed ? " stroke-dasharray=\"5 3\"" : "");
    }
    for (std::size_t i = 0; se.points && i < se.x.size(); ++i)
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>", x(se.x[i]), y(se.y[i]), col);
  }
  for (const Series& se : c.series)  // after every point, so that no line is drawn over a label
    for (std::size_t i = 0; se.points && i < std::min(se.x.size(), se.point_labels.size()); ++i)
      labels.add(s, x(se.x[i]), y(se.y[i]), se.point_labels[i], color(se.color));
  legend_below(s, entries, c.width, plot_height);
  return s + "</svg>\n";
}

std::string violins(const std::string& title, const std::vector<Violin>& groups, int width, int height) {
  // Small multiples: each group in its own panel, on its own linear scale from its fastest trial
  // to a little above its p99, so that batch 1 and batch 128 both show their shape. Trials beyond
  // the p99 would flatten the body; how many lie above the panel, and the slowest, are written on top.
  constexpr int kPanelLeft = 44, kGap = 10, kLabels = 34;  // tick labels, space between panels, two lines under
  const std::size_t n = std::max<std::size_t>(1, groups.size());
  width = std::max(width, kLeft - kPanelLeft + static_cast<int>(n) * 150);
  std::string s = open_svg(width, height, title);
  const double slot = static_cast<double>(width - (kLeft - kPanelLeft) - 12) / static_cast<double>(n);
  const double top = kTop + 16, bottom = height - kLabels - 8;
  s += fmt::format("<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">latency per batch, ms "
                   "(each panel its own scale)</text>", (top + bottom) / 2);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const double x0 = (kLeft - kPanelLeft) + slot * static_cast<double>(k) + kPanelLeft, x1 = x0 + slot - kPanelLeft - kGap;
    const double cx = (x0 + x1) / 2, half = (x1 - x0) * 0.45;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>", cx, bottom + 16, escape(groups[k].label));
    std::vector<double> v = groups[k].samples;
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const double median = groups[k].median, p99 = groups[k].p99;
    double lo = v.front(), hi = std::max(p99 + (p99 - lo) * 0.12, lo * 1.02 + 1e-9);
    lo -= (hi - lo) * 0.04;
    const Scale y{lo, hi, false, bottom, top};
    for (double t : ticks(lo, hi, false))
      s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#e4e4e4\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\" font-size=\"10\" fill=\"#333\">{5}</text>",
                       x0, x1, y(t), x0 - 4, y(t) + 3, num(t));
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>", x0, top,
                     x1 - x0, bottom - top);
    std::vector<double> shown;
    for (double t : v)
      if (t <= hi) shown.push_back(t);
    if (const std::size_t above = v.size() - shown.size(); above > 0)
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#555\">↑ {} above, max {}</text>",
                       cx, top - 4, above, num(v.back()));
    // Gaussian kernel density, Silverman's bandwidth, on 64 points over the shown range.
    const double m = static_cast<double>(shown.size());
    double mean = 0, var = 0;
    for (double t : shown) mean += t / m;
    for (double t : shown) var += (t - mean) * (t - mean) / std::max(1.0, m - 1);
    const double bw = std::max(1.06 * std::sqrt(var) * std::pow(m, -0.2), (shown.back() - shown.front()) / 60 + 1e-9);
    std::vector<std::pair<double, double>> dens;
    double peak = 0;
    for (int i = 0; i <= 64; ++i) {
      const double at = shown.front() + (shown.back() - shown.front()) * i / 64.0;
      double d = 0;
      for (double t : shown) d += std::exp(-0.5 * (at - t) * (at - t) / (bw * bw));
      dens.emplace_back(at, d);
      peak = std::max(peak, d);
    }
    std::string d;
    for (const auto& [at, w] : dens) d += fmt::format("{}{:.1f},{:.1f}", d.empty() ? "M" : " L", cx + half * w / peak, y(at));
    for (auto it = dens.rbegin(); it != dens.rend(); ++it) d += fmt::format(" L{:.1f},{:.1f}", cx - half * it->second / peak, y(it->first));
    s += fmt::format("<path d=\"{} Z\" fill=\"{}\" fill-opacity=\"0.5\" stroke=\"{}\"/>", d, color(k), color(k));
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#222\" stroke-width=\"2\"/>",
                     x0 + 2, x1 - 2, y(median));
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#D55E00\" stroke-width=\"2\" "
                     "stroke-dasharray=\"4 2\"/>", x0 + 2, x1 - 2, y(p99));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#333\">p50 {} · "
                     "<tspan fill=\"#D55E00\">p99 {}</tspan></text>", cx, bottom + 30, num(median), num(p99));
  }
  return s + "</svg>\n";
}

std::string bar_chart(const std::string& title, const std::string& unit, const std::vector<Bar>& bars, int width) {
  constexpr int kRow = 24, kLabel = 260;
  const int height = kTop + kRow * static_cast<int>(bars.size()) + 12;
  double top = 0;
  for (const Bar& b : bars) top = std::max(top, b.value);
  std::string s = open_svg(width, height, title + " (" + unit + ")");
  const double span = width - kLabel - 320;  // room for the note after the longest bar
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i), len = top > 0 ? span * bars[i].value / top : 0;
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kLabel - 6, y + 15, escape(bars[i].label));
    s += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", kLabel, y + 3, len,
                     kRow - 6, color(bars[i].color));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{} {}</text>", kLabel + len + 5, y + 15, num(bars[i].value),
                     escape(bars[i].note));
  }
  return s + "</svg>\n";
}

std::string stacked_bars(const std::string& title, const std::vector<std::string>& parts, const std::vector<StackedRow>& rows,
                         int width) {
  constexpr int kRow = 26, kLabel = 230;
  const int height = std::max(kTop + kRow * static_cast<int>(rows.size()) + 30, kTop + 17 * static_cast<int>(parts.size()) + 10);
  std::string s = open_svg(width, height, title);
  const double span = width - kLabel - kRight - 10;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kLabel - 6, y + 16, escape(rows[i].label));
    double at = kLabel;
    for (std::size_t p = 0; p < rows[i].shares.size(); ++p) {
      const double len = span * rows[i].shares[p];
      s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {:.1f}%</title></rect>",
                       at, y + 3, len, kRow - 6, color(p), escape(parts[p]), 100 * rows[i].shares[p]);
      if (len > 30)
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#fff\" font-size=\"10\">{:.0f}%</text>", at + 3, y + 16,
                         100 * rows[i].shares[p]);
      at += len;
    }
  }
  for (std::size_t p = 0; p < parts.size(); ++p) legend(s, width, p, parts[p], color(p), false);
  return s + "</svg>\n";
}

}  // namespace convlab::svg
