// xlac: the ahead-of-time compiler. All behaviour is in tools/lib (xlac_compiler_driver).
#include "tools/lib/xlac_driver.h"

int main(int argc, char** argv) { return xlac::XlacMain(argc, argv); }
