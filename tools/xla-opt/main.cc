// xla-opt: see docs/cli.md. All behaviour is in tools/lib (xlac_tool_driver).
#include "tools/lib/opt_driver.h"

int main(int argc, char** argv) { return xlac::OptMain(argc, argv); }
