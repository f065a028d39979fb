# Cross build for 64-bit ARM Linux with Debian's toolchain (g++-aarch64-linux-gnu), CPU backend
# only. It links against the cross toolchain's libraries (/usr/aarch64-linux-gnu) and libfmt-dev:arm64
# (multiarch: dpkg --add-architecture arm64); its tests run under qemu user-mode emulation
# (qemu-user-static) with the multiarch ARM runtime (libc6, libstdc++6, libgomp1 :arm64).
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# ctest then starts every test binary through the emulator (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # build tools are the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)    # libraries must be ARM ones (oneDNN: none here)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)    # the header-only dependencies are arch-independent
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# No `-L /usr/aarch64-linux-gnu`: its loader is the cross package's glibc, and with the multiarch
# libc6:arm64 (a dependency of libfmt9:arm64) beside it, the two glibc builds meet in one process
# and the first thread created hangs. Without -L, loader and libraries all come from multiarch.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
set(CONVLAB_CUDA OFF CACHE STRING "" FORCE)   # no CUDA toolkit for ARM here
# xsimd is header-only, but Debian files its CMake package under the host's multiarch folder.
file(GLOB _convlab_xsimd_dirs /usr/lib/*-linux-gnu/cmake/xsimd)
if(_convlab_xsimd_dirs)
  list(GET _convlab_xsimd_dirs 0 xsimd_DIR)
endif()
