// Example of xlac's JIT library API (include/xlac/jit.h): compile an HLO module once, inspect its signature, run it
// on plain std::vector buffers several times, and check the result against the same MLP written as loops.
// examples/mlp.hlo is sharded over 2 partitions: the API partitions it (SPMD), runs each half of the batch on its own
// emulated core, and still takes and returns the global arrays.
//
//   mlp_jit examples/mlp.hlo
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "xlac/jit.h"

namespace {

// examples/mlp.hlo as plain loops: row_sum(relu(x @ w + b)), accumulating in the same order as the module.
std::vector<float> Reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b) {
  std::vector<float> out(8, 0.0f);
  for (int i = 0; i < 8; ++i) {
    float sum = 0.0f;
    for (int j = 0; j < 32; ++j) {
      float dot = 0.0f;
      for (int k = 0; k < 16; ++k) dot += x[i * 16 + k] * w[k * 32 + j];
      float h = dot + b[j];
      sum += h > 0.0f ? h : 0.0f;
    }
    out[i] = sum;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: mlp_jit examples/mlp.hlo\n");
    return 2;
  }
  std::ifstream file(argv[1]);
  std::stringstream text;
  text << file.rdbuf();
  if (!file) {
    std::fprintf(stderr, "mlp_jit: cannot read %s\n", argv[1]);
    return 1;
  }

  xlac::CompileOptions options;
  options.source_name = argv[1];  // the module's num_partitions=2 and shardings: partitioned on 2 emulated cores
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(text.str(), options);
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", std::string(exe.status().message()).c_str());
    return 1;
  }
  for (const xlac::ArrayInfo& p : (*exe)->parameters()) {
    std::printf("parameter %s[", p.element_type.c_str());
    for (size_t d = 0; d < p.dims.size(); ++d) std::printf(d ? ",%lld" : "%lld", static_cast<long long>(p.dims[d]));
    std::printf("] %lld bytes\n", static_cast<long long>(p.byte_size()));
  }
  std::printf("%lld devices, %s\n", static_cast<long long>((*exe)->num_devices()),
              (*exe)->partitioned() ? "partitioned" : "not partitioned");
  std::printf("%s", (*exe)->spmd_report().c_str());

  std::vector<float> x(8 * 16), w(16 * 32), b(32), y(8);
  int mismatches = 0;
  for (int run = 0; run < 3; ++run) {  // one compilation, several runs on new data
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.1f * static_cast<float>(i + run));
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.07f * static_cast<float>(i)) * 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.01f * static_cast<float>(i) - 0.1f;
    absl::Status status = (*exe)->Run({x.data(), w.data(), b.data()}, {y.data()});
    if (!status.ok()) {
      std::fprintf(stderr, "mlp_jit: %s\n", std::string(status.message()).c_str());
      return 1;
    }
    std::vector<float> want = Reference(x, w, b);
    std::printf("run %d:", run);
    for (size_t i = 0; i < y.size(); ++i) {
      std::printf(" %.6g", y[i]);
      if (std::fabs(y[i] - want[i]) > 1e-5f * (1.0f + std::fabs(want[i]))) ++mismatches;
    }
    std::printf("\n");
  }
  if (mismatches) {
    std::fprintf(stderr, "mlp_jit: %d results differ from the loop reference\n", mismatches);
    return 1;
  }
  std::printf("all runs match the loop reference\n");
  return 0;
}
