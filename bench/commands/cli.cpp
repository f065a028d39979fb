#include "bench/commands/cli.hpp"

#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/commands/cli_args.hpp"
#include "bench/commands/commands.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

void require_backend(Backend backend) {
  if (const BackendStatus status = backend_status(backend); !status.available)
    throw BackendUnavailable(fmt::format("backend {}: {}", to_string(backend), status.detail));
}

int run_cli(int argc, char** argv) {
  set_auto_options_from_environment();
  CLI::App app{"convlab: a laboratory for convolution kernels and inference latency.\n"
               "With no command, runs the default lab: lab-cnn on the CPU at batch 1 and 32."};
  app.require_subcommand(0, 1);
  const Command lab = add_lab_command(app);
  const std::vector<Command> commands = {
      add_run_command(app),    add_validate_command(app), add_report_command(app),  add_compare_command(app),
      add_policy_command(app), add_kernels_command(app),  add_models_command(app),  add_env_command(app),
      add_conv_command(app),   add_sweep_command(app),    add_fresh_child_command(app), add_peak_command(app),
      add_overhead_command(app), add_quantize_command(app)};
  try {
    app.parse(argc, argv);
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
    return lab.run();
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "convlab: error: {}\n", e.what());
    return kExitUsage;
  } catch (const BackendUnavailable& e) {
    fmt::print(stderr, "convlab: skipping {}\n", e.what());
    return kExitBackendUnavailable;
  } catch (const InputError& e) {
    fmt::print(stderr, "convlab: error: {}\n", e.what());
    return kExitUsage;
  }
}

}  // namespace convlab
