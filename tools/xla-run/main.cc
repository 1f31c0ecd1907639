// xla-run: see docs/cli.md. All behaviour is in tools/lib (xlac_tool_driver).
#include "tools/lib/run_driver.h"

int main(int argc, char** argv) { return xlac::RunMain(argc, argv); }
