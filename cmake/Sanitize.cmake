# CONVLAB_SANITIZE=address,undefined instruments every target of the build (the libraries, the
# convlab tool and the tests), so a sanitizer build runs the very suite a normal build runs.
# Set globally rather than on convlab_flags: a target added later is covered without a change.
if(CONVLAB_SANITIZE)
  # Frame pointers give ASan's reports whole stacks; an undefined-behaviour report must fail
  # the test that triggers it, not scroll past in its log.
  add_compile_options(-fsanitize=${CONVLAB_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${CONVLAB_SANITIZE})
  add_compile_definitions(CONVLAB_SANITIZED)  # tests that cannot run under a sanitizer skip themselves
  message(STATUS "convlab: sanitizers ${CONVLAB_SANITIZE} on every target")
endif()
