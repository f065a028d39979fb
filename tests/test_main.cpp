#define DOCTEST_CONFIG_IMPLEMENT
#include <cstdlib>

#include <doctest/doctest.h>

int main(int argc, char** argv) {
  // The convlab processes the tests start measure cpu.auto's choices afresh and never write into
  // the user's cache (~/.cache/convlab); the tests of that cache name their own file.
  setenv("CONVLAB_AUTO_CACHE", "off", 1);
  return doctest::Context(argc, argv).run();
}
