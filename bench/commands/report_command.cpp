// The `convlab report` subcommand: results files in, an HTML page, Markdown tables or Google
// Benchmark JSON out (bench/report/report_formats.hpp writes them).
#include "bench/commands/commands.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/report/report_formats.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

namespace {

struct ReportOptions {
  std::vector<std::string> files;
  std::string output;  // -o
  std::string format = "html";
  std::string gbench_json;
};

}  // namespace

CLI::App* add_report_options(CLI::App& app, ReportOptions& o) {
  CLI::App* cmd = app.add_subcommand("report", "Turn results files (convlab run --json) into an HTML page with plots, "
                                               "Markdown tables or Google Benchmark JSON");
  cmd->add_option("files", o.files, "Results files, schema convlab/1");  // checked by run_report, in convlab's words
  cmd->add_option("-o,--output", o.output, "Output file (HTML: required; Markdown: default stdout)");
  cmd->add_option("--format", o.format, "html or markdown")->capture_default_str();
  cmd->add_option("--gbench-json", o.gbench_json, "Also write the results in Google Benchmark's JSON layout");
  return cmd;
}

// Exit 0; throws InputError (exit 2) for a bad file or option.
int run_report(const ReportOptions& o) {
  if (o.files.empty())
    throw InputError("report needs at least one results file: convlab report R.json... -o report.html");
  if (o.format != "html" && o.format != "markdown")
    throw InputError(fmt::format("--format: '{}' is not one of html, markdown", o.format));
  if (o.format == "html" && o.output.empty() && o.gbench_json.empty())
    throw InputError("report: -o FILE is required for the HTML report (or use --format markdown)");
  std::vector<ResultsFile> files;
  for (const std::string& path : o.files) files.push_back(read_results_file(path));
  std::size_t rows = 0;
  for (const ResultsFile& f : files) rows += f.results.size();
  if (rows == 0) throw InputError(fmt::format("'{}': no results to report", o.files.front()));

  if (!o.gbench_json.empty()) write_file_atomically(o.gbench_json, gbench_json(files).dump(2) + "\n");
  if (o.format == "markdown") {
    const std::string md = markdown_report(files);
    if (o.output.empty()) std::fputs(md.c_str(), stdout);
    else write_file_atomically(o.output, md);
  } else if (!o.output.empty()) {
    write_file_atomically(o.output, html_report(files));
  }
  for (const std::string& written : {o.output, o.gbench_json})
    if (!written.empty()) fmt::print(stderr, "convlab: wrote {}\n", written);
  return kExitOk;
}

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  return {add_report_options(app, *o), [o] { return run_report(*o); }};
}

}  // namespace convlab
