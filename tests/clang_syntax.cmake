# Compiles (syntax and semantics, no code) every source in SOURCES with CLANGXX for FLAGS and
# INCLUDES: the CPU kernels must build with clang too, whichever compiler this build uses.
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
foreach(dir IN LISTS INCLUDES)
  list(APPEND flags -isystem ${dir})
endforeach()
set(failed "")
foreach(source IN LISTS SOURCES)
  execute_process(COMMAND ${CLANGXX} -std=c++20 -fsyntax-only ${flags} -I${ROOT} ${source}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message("${out}")
    list(APPEND failed ${source})
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "clang refused: ${failed}")
endif()
