// The `convlab report` subcommand: results files in, an HTML page, Markdown tables or Google
// Benchmark JSON out (bench/report_formats.hpp writes them).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace convlab {

struct ReportOptions {
  std::vector<std::string> files;
  std::string output;  // -o
  std::string format = "html";
  std::string gbench_json;
};

CLI::App* add_report_command(CLI::App& app, ReportOptions& options);
// Exit 0; throws InputError (exit 2) for a bad file or option.
int run_report(const ReportOptions& options);

}  // namespace convlab
