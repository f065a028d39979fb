# Every dependency comes from a Debian 12 package. A missing one stops the configure step with
# the package to install, instead of a page of CMake search paths.

function(convlab_require package debian_package)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR
      "convlab: ${package} not found. Install it with: apt-get install ${debian_package}")
  endif()
endfunction()

convlab_require(Eigen3 libeigen3-dev 3.4 NO_MODULE)
convlab_require(xsimd libxsimd-dev 8.1)
# Debian's xsimd 8 target names xtl as a link library, but convlab uses none of xsimd's xtl
# interop: drop it rather than require libxtl-dev.
if(NOT TARGET xtl)
  get_target_property(xsimd_links xsimd INTERFACE_LINK_LIBRARIES)
  if(xsimd_links)
    list(REMOVE_ITEM xsimd_links xtl)
    set_target_properties(xsimd PROPERTIES INTERFACE_LINK_LIBRARIES "${xsimd_links}")
  endif()
endif()
convlab_require(doctest doctest-dev)
convlab_require(CLI11 libcli11-dev)
convlab_require(nlohmann_json nlohmann-json3-dev 3.10)
if(CMAKE_CROSSCOMPILING)
  # The target's own libfmt, installed beside the host's through Debian's multiarch.
  convlab_require(fmt "libfmt-dev:${CMAKE_LIBRARY_ARCHITECTURE} (dpkg --add-architecture first)")
else()
  convlab_require(fmt libfmt-dev)
endif()
convlab_require(OpenMP "libgomp1 (gcc) or libomp-dev (clang)")
if(NOT TARGET OpenMP::OpenMP_CXX)
  message(FATAL_ERROR "convlab: the C++ compiler has no OpenMP support (install libomp-dev for clang)")
endif()
# stb_image / stb_image_write (libstb-dev): header-only here, their implementation is compiled
# once, in bench/pipeline/image.cpp, so no libstb.so is linked.
find_path(CONVLAB_STB_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb)
if(NOT CONVLAB_STB_INCLUDE_DIR OR NOT EXISTS "${CONVLAB_STB_INCLUDE_DIR}/stb_image_write.h")
  message(FATAL_ERROR "convlab: stb_image.h / stb_image_write.h not found (the end-to-end image pipeline "
                      "decodes with them). Install it with: apt-get install libstb-dev")
endif()
