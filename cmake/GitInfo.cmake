# The git commit and dirty flag go into every report. They are read at build time (not configure
# time), so a rebuild after a commit reports the new commit; the file is rewritten only when its
# content changes, so an unchanged tree recompiles nothing.
set(CONVLAB_GIT_INFO_CPP ${CMAKE_BINARY_DIR}/generated/git_info.cpp)
add_custom_target(convlab_git_info
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${CONVLAB_GIT_INFO_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteGitInfo.cmake
  BYPRODUCTS ${CONVLAB_GIT_INFO_CPP}
  COMMENT "Reading the git commit for reports"
  VERBATIM)
