// The xlac compiler driver: parse HLO text or StableHLO, verify, prepare for codegen, and emit an object file,
// assembly, LLVM IR, the prepared HLO or a C header describing the entry's buffer table. All behaviour lives here so
// tests can run it in-process; tools/xlac/main.cc only forwards argv. Linked separately from xlac_tool_driver so
// xla-opt does not link LLVM.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/shape.h"

namespace xlac {

enum class XlacEmit { kObject, kAssembly, kLlvmIr, kHlo, kHeader, kBufferAssignment, kSpmdReport, kTpuReport };

struct XlacOptions {
  std::string input_filename = "-";
  std::string output_filename;  // empty: <input stem>.o for objects, stdout otherwise
  XlacEmit emit = XlacEmit::kObject;
  int opt_level = 2;
  bool exact = false;  // --exact (docs/numerics.md)
  bool strict = false;        // --strict (CompilerOptions::strict)
  bool tpu_numerics = false;  // --tpu-numerics (ir/tpu_numerics.h)
  std::string target_cpu = "host";
  int64_t num_partitions = 0;  // 0: as the module says
  // --spmd-windowed-einsum-threshold-mib: SpmdOptions::windowed_einsum_threshold_bytes (0: off).
  int64_t spmd_windowed_einsum_threshold_bytes = 0;
  // --custom-call-identity=A,B (repeatable): custom-call targets that are identities (annotation-custom-calls pass).
  std::vector<std::string> custom_call_identity;
  // --arg-shape=f32[4,8] (once per entry argument, in order): refines a shape-polymorphic StableHLO export
  // (CompilerOptions::entry_argument_shapes).
  std::vector<Shape> arg_shapes;
  // --custom-call-lib=FILE.so[:TARGET=SYMBOL,...] (repeatable): XLA FFI handler libraries (docs/custom_calls.md).
  // xlac only compiles, so it loads them to check that every typed-FFI custom call has a handler.
  std::vector<std::string> custom_call_libs;
  // --custom-call-src=FILE.cc (repeatable): C++ kernels for custom calls, compiled in process by Clang and linked
  // into the output, which then needs nothing else to run them (docs/custom_calls.md).
  std::vector<std::string> custom_call_sources;
  // --tpu=v5e [--topology=4x4]: compile for one core of that TPU slice (ir/tpu_target.h): num_partitions = its
  // devices unless given, TPU dot numerics, and the per-core HBM check (passes/tpu_memory.h) before emitting.
  std::string tpu;
  std::string topology;
  // --cache-dir (or XLAC_CACHE_DIR, read by XlacMain): obj/asm/llvm outputs go through the persistent compilation
  // cache (docs/cache.md).
  std::string cache_dir;
  bool cache_readonly = false;                 // --cache-readonly
  int64_t cache_max_bytes = int64_t{1} << 30;  // --cache-max-bytes
  bool explain_cache = false;                  // --explain-cache: hit/miss and why, on stderr
  std::string dump_to;          // --dump-to: XLA-style dumps of the compilation (docs/observability.md)
  std::string dump_pass_regex;  // --dump-pass-regex: per-pass dumps only for the matching passes
  bool help = false;
};

// LLVM-tool conventions: -flag or --flag, -O0..-O3, --emit=obj|asm|llvm|hlo|header|buffers, -o FILE,
// --target-cpu=NAME.
absl::StatusOr<XlacOptions> ParseXlacArgs(std::span<const std::string_view> args);

// Compiles `input` (named `input_name` in diagnostics); returns the output bytes, or nullopt-equivalent failure
// after writing diagnostics to `err`. Exit code semantics: 0 success, 1 user error.
int RunXlac(const XlacOptions& options, std::string_view input_name, std::string_view input, std::string& output,
            std::ostream& err);

// The whole tool: argument parsing, --help, input reading ("-" = `in`), and output writing (only on success;
// "-" = `out`).
int XlacMain(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err);
int XlacMain(int argc, char** argv);

}  // namespace xlac
