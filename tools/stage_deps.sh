#!/usr/bin/env bash
# Copies the files of the Debian packages a GPU build needs (header-only libraries, fmt, stb)
# into .device-deps/ at the repository root, for a GPU machine that has nvcc, CMake and ninja
# but no Debian packages and no network. Run it here (where the packages are installed), take
# .device-deps/ along, and bench/gpu-check.sh configures with CMAKE_PREFIX_PATH=.device-deps/usr.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(libeigen3-dev libxsimd-dev doctest-dev libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 libstb-dev)
rm -rf .device-deps
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    { echo "stage_deps: $p is not installed (apt-get install $p)" >&2; exit 2; }
  dpkg -L "$p" | while read -r f; do
    case $f in /usr/share/doc/* | /usr/share/man/*) continue ;; esac
    [[ -f $f ]] && install -D -m 0644 "$f" ".device-deps$f"
  done
done
echo "stage_deps: ${#packages[@]} packages in .device-deps ($(du -sh .device-deps | cut -f1))"
