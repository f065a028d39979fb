# convlab_kernel_ids(<out var> <list .inc> <macro>): the ids of a backend's kernel list, one per
# line that opens with `<macro>(symbol, "id"`. Each id names its kernel's file, so the build
# needs no second list; editing the list re-runs CMake.
include_guard(GLOBAL)
function(convlab_kernel_ids out_var list_file macro)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${list_file})
  file(STRINGS ${list_file} lines REGEX "^${macro}\\(")
  set(ids "")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^${macro}\\([a-z0-9_]+, *\"([a-z]+\\.[0-9][0-9]_[a-z0-9_]+)\"")
      message(FATAL_ERROR "${list_file}: no symbol and kernel id on the first line of: ${line}")
    endif()
    list(APPEND ids ${CMAKE_MATCH_1})
  endforeach()
  set(${out_var} ${ids} PARENT_SCOPE)
endfunction()
