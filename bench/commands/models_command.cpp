// `convlab models`: the reference networks, as built (BatchNorm folded).
#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/commands.hpp"
#include "models/catalog.hpp"

namespace convlab {

namespace {

int list_models() {
  fmt::print("{:<16} {:<10} {:>10} {:>14} {:>7}  {}\n", "model", "input", "params", "MFLOP/item", "layers", "summary");
  for (const ModelInfo& m : all_models()) {
    const Network net = m.build(seeded_weights(1));
    const Shape in = net.input_item();
    fmt::print("{:<16} {:<10} {:>10} {:>14.2f} {:>7}  {}\n", m.name, fmt::format("{}x{}x{}", in.c(), in.h(), in.w()),
               net.parameter_count(), net.flops_per_item() / 1e6, net.layers().size(), m.summary);
  }
  return kExitOk;
}

}  // namespace

Command add_models_command(CLI::App& app) { return {app.add_subcommand("models", "List the networks"), list_models}; }

}  // namespace convlab
