// The hidden `fresh-process-child` command: one new process's first forward, started by
// `run --fresh-process N` (bench/pipeline/fresh_process.hpp), never by a user.
#include <memory>

#include "bench/commands/commands.hpp"
#include "bench/pipeline/fresh_process.hpp"

namespace convlab {

Command add_fresh_child_command(CLI::App& app) {
  auto o = std::make_shared<FreshChildOptions>();
  CLI::App* cmd = app.add_subcommand(kFreshChildCommand, "One fresh process's first forward (used by --fresh-process)");
  cmd->group("");  // hidden from --help: it is the parent's tool, not the user's
  cmd->add_option("--model", o->model)->required();
  cmd->add_option("--kernel", o->kernel)->required();
  cmd->add_option("--weights", o->weights);
  cmd->add_option("--batch", o->batch);
  cmd->add_option("--seed", o->seed);
  cmd->add_option("--threads", o->threads);
  cmd->add_option("--since-ns", o->since_ns)->required();
  cmd->add_option("--quantized", o->quantized);
  cmd->add_option("--calibration", o->calibration);
  cmd->add_option("--observer", o->observer);
  cmd->add_flag("--reduce-range", o->reduce_range);
  return {cmd, [o] { return run_fresh_child(*o); }};
}

}  // namespace convlab
