#!/usr/bin/env bash
# The README's two commands, for a fresh Debian 12 machine:
#   tools/bootstrap.sh lab    installs what is missing, builds, runs the default lab (build/convlab)
#   tools/bootstrap.sh test   installs what is missing, builds, runs the whole test suite (ctest), then
#                             the same suite under ASan+UBSan built for AVX2 (build-asan/), an ARM64
#                             build's tests under qemu (build-arm64/; x86 hosts; CONVLAB_ARM64=0 skips
#                             it) and a short libFuzzer run of each fuzz target (build-fuzz/, clang);
#                             CONVLAB_FUZZ_SECONDS per target
# Rerunning is cheap: installed packages are skipped and the build is incremental.
# Extra CMake options can be passed in CONVLAB_CMAKE_ARGS (e.g. "-DCONVLAB_NATIVE=OFF").
set -euo pipefail

mode=${1:-}
case $mode in
  lab | test) ;;
  *) echo "usage: tools/bootstrap.sh lab|test" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build git pkg-config libeigen3-dev libxsimd-dev doctest-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev
          libdnnl-dev   # oneDNN: the onednn.conv baseline every kernel is compared with
          libstb-dev    # stb_image: decodes the end-to-end pipeline's images
          libonnx-dev libprotobuf-dev)  # the ONNX schema: --model path/to/model.onnx
# numpy recomputes the reported percentiles; torch makes fresh references for the live check
# (torchvision: the ImageNet-size twins, resnet18 and mobilenet-v2);
# clang, its runtimes (libFuzzer, ASan, UBSan: libclang-rt-14-dev) and OpenMP (libomp-dev) build
# the sanitizer run and the fuzz targets.
[[ $mode == test ]] && packages+=(python3 python3-numpy python3-torch python3-torchvision clang libclang-rt-14-dev libomp-dev)
# On x86: Debian's ARM64 cross compiler, qemu to run its binaries, and the ARM64 libfmt beside the
# host's (multiarch). Every other dependency is header-only; oneDNN for arm64 does not install
# beside the host's, so that build has no onednn.conv.
arm64=false
if [[ $mode == test && $(uname -s) == Linux && $(uname -m) == x86_64 && ${CONVLAB_ARM64:-1} != 0 ]]; then
  arm64=true
  packages+=(g++-aarch64-linux-gnu qemu-user-static libfmt-dev:arm64 libgomp1:arm64)
fi

if [[ $(uname -s) == Darwin ]]; then
  # macOS (the Metal backend): written for, never run on a Mac here (README, "Metal"). No apt-get:
  # the dependencies come from Homebrew, Metal's compiler from Xcode.
  command -v brew >/dev/null || { echo "convlab: on macOS install Homebrew first (https://brew.sh)" >&2; exit 1; }
  xcrun -sdk macosx -f metal >/dev/null 2>&1 || { echo "convlab: xcrun metal not found: install Xcode" >&2; exit 1; }
  brew install cmake ninja eigen xsimd doctest cli11 nlohmann-json fmt libomp
else
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
fi
if [[ $(uname -s) != Darwin ]] && ((${#missing[@]})); then
  echo "convlab: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  if $arm64 && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# shellcheck disable=SC2086  # CONVLAB_CMAKE_ARGS is a list of words
cmake -S . -B build -G Ninja ${CONVLAB_CMAKE_ARGS:-} >/dev/null
cmake --build build

if [[ $mode == lab ]]; then
  if [[ $(uname -s) == Darwin ]]; then  # the default lab on the CPU, then on the Metal GPU
    build/convlab
    exec build/convlab run --backend metal --batch 1,32
  fi
  exec build/convlab
fi
(cd build && ctest --output-on-failure -j "$(getconf _NPROCESSORS_ONLN)" --timeout 600)

# The whole suite again under ASan + UBSan, built by clang: a second compiler over every file, and
# a quicker build and run than g++'s sanitizers (-O1: fast enough; -g1: file and line in its
# reports; the test files at -O0, which compiles them in half the time and costs their run nothing
# measurable; -Wno-pass-failed: at -O1 clang does not vectorize the `omp simd` loops, and says so).
# The python checks test python, not convlab's memory, and are left to the normal build; with the
# shorter sweep, the tests that spend their time in the GPU emulator leave out what the normal
# build covers (tests/conv_test_util.hpp).
# shellcheck disable=SC2086
# CUDA off there: nvcc output is not instrumented, and the CUDA kernels still run under ASan
# through the emulator. A shorter random sweep (60 problems per kernel) keeps it within minutes.
# On x86 it is built for x86-64-v3 (AVX2 + FMA, 16 vector registers): the laptops' ISA, which an
# AVX-512 machine runs unchanged, so every test also checks the AVX2 kernels and tiles.
march=()
[[ $(uname -m) == x86_64 ]] && march=(-DCONVLAB_MARCH=x86-64-v3)
cmake -S . -B build-asan -G Ninja ${CONVLAB_CMAKE_ARGS:-} -DCMAKE_CXX_COMPILER=clang++ \
      -DCONVLAB_SANITIZE=address,undefined -DCONVLAB_CUDA=OFF "${march[@]}" -DCMAKE_BUILD_TYPE=Debug \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1 -Wno-pass-failed" -DCONVLAB_TEST_AND_HARNESS_FLAGS=-O0 >/dev/null
cmake --build build-asan
(cd build-asan && CONVLAB_SWEEP_PROBLEMS=60 ctest --output-on-failure -j "$(getconf _NPROCESSORS_ONLN)" --timeout 900 \
   -E 'numpy_reproduces_percentiles|torch_live_validation')

# ARM64 (NEON, 4 floats and 32 registers): cross-built, its tests run under qemu user-mode
# emulation (no binfmt needed). The kernels on the labelled shapes and a reduced random sweep,
# the networks against PyTorch's goldens, `validate` on one network, and the default lab with a
# few trials. Timings under qemu mean nothing; only the results are checked. The test files at
# -O1: a third less compiling than -O3, kernels and harness as released.
if $arm64; then
  cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
        -DCONVLAB_TEST_AND_HARNESS_FLAGS=-O1 >/dev/null
  cmake --build build-arm64 --target convlab convlab_tests
  arm64_tests='^(kernels: (every CPU kernel|randomized sweep, every CPU|deterministic|the registry|NaN|a baseline)'
  arm64_tests+='|reference: |ops: |batchnorm: |models: |network: |validate: (resnet8|negative|a kernel|on the CPU)|weights: |cpu[.]'
  arm64_tests+='|int8 (kernels: every CPU|networks: each|file: )|peak: (the register|a measurement)'
  arm64_tests+='|cli: (listings|a run writes|conv times|the default lab)|cli validate: the golden)'
  # Left to the native run (CI time): the full `peak` (ten minutes emulated), the GPU emulator's
  # int8 runs, the state_dict name check, and validate on the other networks (their layers' kernels
  # are in the sweeps here; the native run validates every network).
  (cd build-arm64 && CONVLAB_SWEEP_PROBLEMS=60 ctest --output-on-failure -j "$(getconf _NPROCESSORS_ONLN)" \
     --timeout 900 -R "$arm64_tests" -E "on a GPU runtime|ask for torchvision")
fi

# Each libFuzzer target for a short while, from its seeds (tests/fuzz/corpus/<target>, left as
# they are: new inputs go to build-fuzz/corpus). A crash stops CI and leaves its input in build-fuzz/.
cmake -S . -B build-fuzz -G Ninja -DCONVLAB_FUZZ=ON -DCONVLAB_CUDA=OFF -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build build-fuzz
for seeds in tests/fuzz/corpus/*/; do
  target=$(basename "$seeds")
  if [[ ! -x build-fuzz/fuzz_$target ]]; then  # fuzz_onnx needs the ONNX schema (libonnx-dev)
    echo "convlab: fuzz_$target is not built here; skipped"
    continue
  fi
  mkdir -p "build-fuzz/corpus/$target"
  log="build-fuzz/fuzz_$target.log"
  if ! "build-fuzz/fuzz_$target" -max_total_time="${CONVLAB_FUZZ_SECONDS:-20}" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix=build-fuzz/ "build-fuzz/corpus/$target" "$seeds" >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "convlab: fuzz_$target found a failure; its input is in build-fuzz/ (see $log)" >&2
    exit 1
  fi
  echo "convlab: fuzz_$target: $(grep -E 'stat::(number_of_executed_units|average_exec_per_sec)' "$log" | tr '\n' ' ')"
done
