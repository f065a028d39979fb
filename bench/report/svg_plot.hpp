// Small SVG charts for the HTML report, drawn here so the report needs no network and no
// JavaScript: line/scatter charts on linear or log axes, violins, horizontal and stacked bars.
// Each function returns one <svg> element sized in CSS pixels; text is escaped.
#pragma once

#include <string>
#include <vector>

namespace convlab::svg {

std::string escape(const std::string& text);  // for XML and HTML text and attributes
std::string color(std::size_t i);             // a colour-blind-friendly palette, cycled

struct Axis {
  std::string title;
  bool log = false;  // log10 scale: latencies across batch sizes span decades
};

struct Series {
  std::string name;
  std::vector<double> x, y;
  std::vector<std::string> point_labels;  // optional, one per point (e.g. "b32")
  bool line = true, points = true;
  bool dashed = false;
  std::size_t color = 0;
};

// The legend sits under the plot with every name in full; `height` is the plot's, the legend adds rows.
struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  bool step = false;  // a CDF: horizontal then vertical segments
  int width = 620, height = 340;
};
std::string line_chart(const LineChart& chart);

// One violin per group, each in its own panel on its own scale (batch 1 and batch 128 differ by
// decades: on one axis both would be flat lines), with the median as a dark line and p99 as a
// dashed orange one, their values written under the panel.
struct Violin {
  std::string label;
  std::vector<double> samples;
  double median = 0, p99 = 0;  // as the tables report them (one percentile method throughout)
};
std::string violins(const std::string& title, const std::vector<Violin>& groups, int width = 620, int height = 354);

// Horizontal bars from 0; `note` is written after the bar (e.g. "41% of peak").
struct Bar {
  std::string label;
  double value = 0;
  std::string note;
  std::size_t color = 0;
};
std::string bar_chart(const std::string& title, const std::string& unit, const std::vector<Bar>& bars, int width = 620);

// 100% stacked horizontal bars: each row's parts (shares summing to about 1) coloured by part.
struct StackedRow {
  std::string label;
  std::vector<double> shares;
};
std::string stacked_bars(const std::string& title, const std::vector<std::string>& parts,
                         const std::vector<StackedRow>& rows, int width = 620);

}  // namespace convlab::svg
