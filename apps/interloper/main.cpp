// The `interloper` command: runs assets declared in YAML pipeline files.
#include "interloper/cli.hpp"

int main(int argc, char** argv) { return interloper::cli::main(argc, argv); }
