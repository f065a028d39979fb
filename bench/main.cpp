#include "bench/commands/cli.hpp"

int main(int argc, char** argv) { return convlab::run_cli(argc, argv); }
