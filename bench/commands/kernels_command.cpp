// `convlab kernels`: every kernel built into this binary, from the registry's lists.
#include <algorithm>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/commands.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/kernel.hpp"

namespace convlab {

namespace {

// One row of the listing, whichever the kernel's precision.
void print_row(std::size_t id_width, std::string_view id, std::string_view backend, std::string_view precision,
               std::string_view kind, std::string_view available, std::string_view deterministic, std::string_view summary) {
  fmt::print("{:<{}}  {:<7} {:<9} {:<9} {:<12} {:<14} {}\n", id, id_width, backend, precision, kind, available,
             deterministic, summary);
}

std::string_view availability(Backend b) {
  return backend_status(b).available ? "yes" : b == Backend::metal ? "needs macOS" : "no device";
}

int list_kernels() {
  std::size_t id_width = 2;  // the widest id sets the first column, so long ids never shift the rest
  for (const KernelInfo& k : all_kernels()) id_width = std::max(id_width, k.id.size());
  print_row(id_width, "id", "backend", "precision", "kind", "available", "deterministic", "summary");
  for (const KernelInfo& k : all_kernels())
    print_row(id_width, k.id, to_string(k.backend), "fp32", k.baseline ? "baseline" : "ours", availability(k.backend),
              k.deterministic ? "yes" : "no", k.summary);
  for (const Int8KernelInfo& k : all_int8_kernels())
    print_row(id_width, k.id, to_string(k.backend), "int8", k.baseline ? "baseline" : "ours", availability(k.backend),
              k.deterministic ? "yes" : "no", k.summary);
  for (const AbsentKernel& a : absent_kernels())
    print_row(id_width, a.id, a.backend, a.id.ends_with("int8") ? "int8" : "fp32", "baseline", "not built", "-", a.why);
  for (Backend b : {Backend::cuda, Backend::metal})
    if (const BackendStatus s = backend_status(b); !s.available) fmt::print("{}: {}\n", to_string(b), s.detail);
  return kExitOk;
}

}  // namespace

Command add_kernels_command(CLI::App& app) {
  return {app.add_subcommand("kernels", "List the kernels: id, backend, available here, summary"), list_kernels};
}

}  // namespace convlab
