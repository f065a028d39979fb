# CONVLAB_CUDA=AUTO turns the CUDA backend on when nvcc is found; ON insists on it; OFF never
# builds it. A build with CUDA still runs on machines without a GPU: the device probe reports
# "no CUDA device" and every CUDA path is skipped.
string(TOUPPER "${CONVLAB_CUDA}" CONVLAB_CUDA)
if(NOT CONVLAB_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "convlab: CONVLAB_CUDA='${CONVLAB_CUDA}' is not one of AUTO, ON, OFF")
endif()

set(CONVLAB_WITH_CUDA OFF)
if(NOT CONVLAB_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to build for")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 does not know nvcc's C++20 flag
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CONVLAB_WITH_CUDA ON)
  elseif(CONVLAB_CUDA STREQUAL "ON")
    message(FATAL_ERROR "convlab: CONVLAB_CUDA=ON but no CUDA compiler (nvcc) was found; "
                        "install the CUDA Toolkit or set CMAKE_CUDA_COMPILER")
  endif()
endif()
message(STATUS "convlab: CUDA backend ${CONVLAB_WITH_CUDA} (CONVLAB_CUDA=${CONVLAB_CUDA})")
