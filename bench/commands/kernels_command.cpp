// `convlab kernels`: every kernel built into this binary, from the registry's lists.
#include <algorithm>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/commands.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/kernel.hpp"

namespace convlab {

namespace {

int list_kernels() {
  std::size_t id_width = 2;  // the widest id sets the first column, so long ids never shift the rest
  for (const KernelInfo& k : all_kernels()) id_width = std::max(id_width, k.id.size());
  fmt::print("{:<{}}  {:<7} {:<9} {:<12} {:<14} {}\n", "id", id_width, "backend", "kind", "available", "deterministic",
             "summary");
  for (const KernelInfo& k : all_kernels()) {
    const BackendStatus status = backend_status(k.backend);
    const char* available = status.available ? "yes" : k.backend == Backend::metal ? "needs macOS" : "no device";
    fmt::print("{:<{}}  {:<7} {:<9} {:<12} {:<14} {}\n", k.id, id_width, to_string(k.backend),
               k.baseline ? "baseline" : "ours", available, k.deterministic ? "yes" : "no", k.summary);
  }
  for (const AbsentKernel& a : absent_kernels())
    fmt::print("{:<{}}  {:<7} {:<9} {:<12} {:<14} {}\n", a.id, id_width, a.backend, "baseline", "not built", "-", a.why);
  for (Backend b : {Backend::cuda, Backend::metal})
    if (const BackendStatus s = backend_status(b); !s.available) fmt::print("{}: {}\n", to_string(b), s.detail);
  return kExitOk;
}

}  // namespace

Command add_kernels_command(CLI::App& app) {
  return {app.add_subcommand("kernels", "List the kernels: id, backend, available here, summary"), list_kernels};
}

}  // namespace convlab
