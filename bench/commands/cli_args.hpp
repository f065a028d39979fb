// Parsing of the command-line values every convlab command shares, in one place, so each bad
// value gets the same one-line error (an InputError naming the option, the value and the choices).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/kernel.hpp"
#include "models/catalog.hpp"
#include "models/observer.hpp"

namespace CLI {
class App;  // <CLI/CLI.hpp> costs seconds of compiling: only the files that add options include it
}

namespace convlab {

std::vector<std::string> split(const std::string& text, char sep);
std::vector<std::int64_t> parse_batches(const std::string& list);  // --batch 1,32
Backend parse_backend(const std::string& name);                   // --backend
std::string parse_model(const std::string& name);                  // --model: a built-in network or a .onnx file
Precision parse_precision(const std::string& text);                // --precision fp32|int8
Observer parse_observer(const std::string& text);                  // --observer minmax|histogram
// --kernel ID,ID: every id must name a kernel of `backend` and `precision` ("all" is the caller's
// to handle). For int8, cpu.auto names its int8 twin, kAutoInt8Id, and cuda.auto the tensor-core
// kernel, kCudaAutoInt8Id (a rule, as cuda.auto is: its grouped layers run cuda.22_int8_direct).
inline constexpr const char* kAutoInt8Id = "cpu.auto_int8";
inline constexpr const char* kCudaAutoInt8Id = "cuda.21_int8_mma";
std::vector<std::string> parse_kernel_ids(const std::string& list, Backend backend,
                                          Precision precision = Precision::fp32);
// --threads N on `cmd`: a positive integer, anything else (0 included) refused with one line.
// Left out, `threads` stays 0: every core.
void add_threads_option(CLI::App& cmd, int& threads, const std::string& help = "CPU threads (default: all cores)");
// Applies --threads: 0 leaves OpenMP's default (every core); more threads than CPUs is allowed
// but warned about on stderr (oversubscription slows every figure).
void set_threads(int threads);
// --settle-ms MS on `cmd` (the commands with --interleave): how long each interleaved trial's
// untimed runs of its own kernel last at least (Protocol::settle_ms, bench/harness/harness.hpp).
void add_settle_option(CLI::App& cmd, std::optional<double>& settle_ms);
// Its value for the protocol: the default when left out; refused when negative or without --interleave.
double settle_ms_for(const std::optional<double>& settle_ms, bool interleave);
// cpu.auto's options on `cmd` (every command that may plan it): --auto-strict (leave out the
// Winograd F(4x4) kernel) and --auto-cache FILE|off (where choices are remembered). Both also go
// into the environment, so the processes convlab starts (--fresh-process) choose the same way.
void add_auto_options(CLI::App& cmd);
// cpu.auto's settings from the environment: $CONVLAB_AUTO_STRICT=1, and the cache file from
// $CONVLAB_AUTO_CACHE ("off": none), else $XDG_CACHE_HOME/convlab/cpu-auto.tsv, else
// ~/.cache/convlab/cpu-auto.tsv. Called before the command line is parsed, and by its options.
void set_auto_options_from_environment();

}  // namespace convlab
