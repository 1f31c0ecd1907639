// xlac-gemm-gen OUTPUT.o: writes the object file of the shared GEMM functions (codegen/prebuilt_gemms.h) that the
// build links into xlac_codegen. A build step, as llvm-tblgen is LLVM's: not installed.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/prebuilt_gemms.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.o\n", argv[0]);
    return 1;
  }
  absl::StatusOr<std::string> object = xlac::codegen::BuildPrebuiltGemmObject();
  if (!object.ok()) {
    std::fprintf(stderr, "xlac-gemm-gen: %s\n", std::string(object.status().message()).c_str());
    return 1;
  }
  // Written beside the output and renamed over it, so that an interrupted build never leaves half an object.
  const std::string temporary = std::string(argv[1]) + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(object->data(), static_cast<std::streamsize>(object->size()));
    if (!out) {
      std::fprintf(stderr, "xlac-gemm-gen: cannot write %s\n", temporary.c_str());
      return 1;
    }
  }
  if (std::rename(temporary.c_str(), argv[1]) != 0) {
    std::fprintf(stderr, "xlac-gemm-gen: cannot rename %s to %s\n", temporary.c_str(), argv[1]);
    return 1;
  }
  return 0;
}
