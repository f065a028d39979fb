#include "bench/pipeline/fresh_process.hpp"

#include <fcntl.h>
#include <omp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/harness/clock.hpp"
#include "bench/harness/forward_threads.hpp"
#include "bench/harness/int8_model_bench.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/error.hpp"
#include "models/catalog.hpp"
#include "models/weight_file.hpp"

extern char** environ;

namespace convlab {

namespace {

// Runs /proc/self/exe with `args` and returns what it printed on stdout; its stderr is ours, so a
// child's own error line reaches the user. Throws InputError when it cannot start or fails.
std::string run_self(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) throw InputError("--fresh-process: cannot create a pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  if (spawned == 0) {
    char buf[256];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;)
      if (n > 0) out.append(buf, static_cast<std::size_t>(n));
      else if (errno != EINTR) break;
  }
  close(fds[0]);
  if (spawned != 0) throw InputError(fmt::format("--fresh-process: cannot start /proc/self/exe: {}", strerror(spawned)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw InputError(fmt::format("--fresh-process: the new process failed ({} {})",
                                 WIFEXITED(status) ? "exit" : "signal",
                                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status)));
  return out;
}

}  // namespace

FreshProcesses measure_fresh_processes(const ModelBenchConfig& config, const std::string& kernel, std::int64_t batch) {
  SteadyClock clock;
  FreshProcesses fresh;
  for (int i = 0; i < config.fresh_processes; ++i) {
    std::vector<std::string> args = {"convlab", kFreshChildCommand, "--model", config.model, "--kernel", kernel,
                                     "--batch", std::to_string(batch), "--seed", std::to_string(config.seed),
                                     "--threads", std::to_string(omp_get_max_threads())};
    if (!config.weights.empty()) args.insert(args.end(), {"--weights", config.weights});
    if (find_int8_kernel(kernel) != nullptr) {
      const std::vector<std::string> quantization = quantization_arguments(config);
      args.insert(args.end(), quantization.begin(), quantization.end());
    }
    args.insert(args.end(), {"--since-ns", std::to_string(clock.now_ns())});
    std::istringstream in(run_self(args));
    double total = 0, forward = 0;
    if (!(in >> total >> forward)) throw InputError("--fresh-process: the new process reported no time");
    fresh.total_ms.push_back(total);
    fresh.forward_ms.push_back(forward);
  }
  return fresh;
}

namespace {
// Times a planned forward's first run, in milliseconds.
template <class Planned>
double first_forward_ms(const Planned& planned) {
  SteadyClock clock;
  const std::int64_t t0 = clock.now_ns();
  planned.forward();
  return static_cast<double>(clock.now_ns() - t0) * 1e-6;
}
}  // namespace

int run_fresh_child(const FreshChildOptions& o) {
  set_threads(o.threads);
  const Network net = load_model(parse_model(o.model), o.weights, o.seed);
  double forward_ms = 0;
  if (find_int8_kernel(o.kernel) != nullptr) {
    ModelBenchConfig quantization;  // what quantize_for_run reads, as the parent's run had it
    quantization.quantized = o.quantized;
    quantization.calibration_inputs = o.calibration;
    quantization.observer = parse_observer(o.observer);
    quantization.reduce_range = o.reduce_range;
    quantization.seed = o.seed;
    const QuantizedNetwork q = quantize_for_run(quantization, net);
    forward_ms = first_forward_ms(plan_int8_forward(q, o.model, o.batch, o.kernel, o.seed));
  } else {
    forward_ms = first_forward_ms(plan_forward(net, o.model, o.batch, o.kernel, o.seed));
  }
  fmt::print("{} {}\n", static_cast<double>(SteadyClock().now_ns() - o.since_ns) * 1e-6, forward_ms);
  return kExitOk;
}

}  // namespace convlab
