#!/usr/bin/env bash
# The README's two commands, for a fresh Debian 12 machine:
#   tools/bootstrap.sh lab    installs what is missing, builds, runs the default lab (build/convlab)
#   tools/bootstrap.sh test   installs what is missing, builds, runs the whole test suite (ctest)
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
          libdnnl-dev)  # oneDNN: the onednn.conv baseline every kernel is compared with
# numpy recomputes the reported percentiles; torch makes fresh references for the live check.
[[ $mode == test ]] && packages+=(python3 python3-numpy python3-torch)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "convlab: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# shellcheck disable=SC2086  # CONVLAB_CMAKE_ARGS is a list of words
cmake -S . -B build -G Ninja ${CONVLAB_CMAKE_ARGS:-} >/dev/null
cmake --build build

if [[ $mode == lab ]]; then
  exec build/convlab
else
  cd build && exec ctest --output-on-failure -j "$(nproc)" --timeout 600
fi
