// `convlab env`: the machine and build, exactly as every report records them.
#include <cstdio>
#include <memory>

#include "bench/commands/cli.hpp"
#include "bench/commands/commands.hpp"
#include "bench/harness/environment.hpp"

namespace convlab {

Command add_env_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("env", "Describe this machine and build");
  cmd->add_flag("--json", *json, "Print the report context as JSON");
  return {cmd, [json] {
            const Environment e = collect_environment();
            std::fputs(*json ? (to_json(e).dump(2) + "\n").c_str() : describe(e).c_str(), stdout);
            return kExitOk;
          }};
}

}  // namespace convlab
