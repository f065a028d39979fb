# Turns a .metal source into C++ for the emulator (kernels/simt/msl.hpp says what each step is
# for). Run at build time:  cmake -DIN=x.metal -DOUT=x.metal.cpp -P msl_to_cpp.cmake
if(NOT IN OR NOT OUT)
  message(FATAL_ERROR "msl_to_cpp.cmake: pass -DIN=<file.metal> -DOUT=<file.cpp>")
endif()
file(READ "${IN}" source)

string(REPLACE "#include <metal_stdlib>" "#include \"kernels/simt/msl.hpp\"" source "${source}")

set(builtins thread_position_in_grid thread_position_in_threadgroup threadgroup_position_in_grid
    threads_per_threadgroup threadgroups_per_grid threads_per_grid thread_index_in_threadgroup
    thread_index_in_simdgroup simdgroup_index_in_threadgroup threads_per_simdgroup)
foreach(builtin IN LISTS builtins)
  string(REGEX REPLACE "\\[\\[ *${builtin} *\\]\\]" "= ::convlab::msl::${builtin}()" source "${source}")
endforeach()

# One entry point per kernel function: the emulator binds buffers by position.
string(REGEX MATCHALL "kernel[ \t\r\n]+void[ \t\r\n]+[A-Za-z_][A-Za-z0-9_]*[ \t\r\n]*\\(" kernels "${source}")
set(entries "")
foreach(declaration IN LISTS kernels)
  string(REGEX REPLACE "^kernel[ \t\r\n]+void[ \t\r\n]+([A-Za-z0-9_]+).*$" "\\1" name "${declaration}")
  string(APPEND entries
    "extern \"C\" void convlab_msl_${name}(void* const* buffers) {\n"
    "  ::convlab::msl::call_by_position([](auto... b) -> decltype(${name}(b...)) { ${name}(b...); }, buffers);\n"
    "}\n")
endforeach()
if(entries STREQUAL "")
  message(FATAL_ERROR "msl_to_cpp.cmake: ${IN} defines no `kernel void name(` function")
endif()

file(WRITE "${OUT}.tmp" "// Generated from ${IN} by kernels/simt/msl_to_cpp.cmake; edit the .metal file.\n"
                        "#line 1 \"${IN}\"\n${source}\n${entries}")
# Unchanged output keeps its timestamp, so an edit elsewhere does not recompile every kernel.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
