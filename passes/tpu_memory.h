// Per-core HBM on a TPU: the peak of live bytes of one core's program (the SPMD-partitioned module, prepared for
// codegen) when every array is padded to its TPU tiles (ir/tpu_layout.h), checked against the chip's HBM
// (ir/tpu_target.h).
//
// Model. Values, alias sets and live ranges are buffer assignment's (passes/buffer_assignment.h): the same
// schedule (post order, while/conditional bodies before their caller), the same aliasing (tuple/get-tuple-element/
// bitcast forwarding, while and conditional results, donated parameters sharing their output's buffer), and a value
// is live from its definition to its last use. Entry parameters are live for the whole program (the caller owns
// them), constants too (program data in HBM), entry results from their definition to the end. Two values buffer
// assignment placed at the same offset while both are live (an elementwise op writing over the operand that dies
// at it) count once. The padded peak is what the TPU needs; the unpadded peak is the same liveness at dense sizes.
// Not modeled: XLA's own scheduling and rematerialization, fragmentation, program code, scratch space of
// collectives and the runtime's reserved bytes (docs/tpu_model.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/tpu_target.h"
#include "passes/buffer_assignment.h"

namespace xlac {

struct TpuLiveBuffer {
  std::string value;    // "dot.3", "p0", "while.1{1}": the instruction defining the buffer, and its leaf index
  std::string opcode;   // of that instruction
  std::string op_name;  // its metadata op_name, when it has one
  std::string kind;     // "parameter 0", "output", "temp", "constant"
  std::string shape;    // with its TPU layout: f32[1024,1024]{1,0:T(8,128)}
  int64_t padded_bytes = 0;
  int64_t unpadded_bytes = 0;
};

struct TpuMemoryReport {
  std::string chip;       // "v5e"
  int64_t hbm_bytes = 0;  // per core (chip HBM / JAX devices per chip)
  int64_t peak_padded_bytes = 0;
  int64_t peak_unpadded_bytes = 0;
  std::string peak_at;  // the instruction running at the padded peak
  // Bytes of the entry parameters, entry results and everything else, padded, at the padded peak.
  int64_t parameter_bytes = 0;
  int64_t output_bytes = 0;
  int64_t temp_bytes = 0;
  // Every buffer live at the padded peak, largest padded size first (ties by name).
  std::vector<TpuLiveBuffer> live_at_peak;

  bool fits() const { return peak_padded_bytes <= hbm_bytes; }
  // "needs 18.3 GiB of HBM per core, v5e has 16 GiB (...)" and the `top` largest buffers at the peak, as
  // XLA's out-of-memory report lists them.
  std::string OverLimitMessage(int64_t top = 8) const;
  // A short summary for reports: peak padded / unpadded, composition, the largest buffers.
  std::string Summary(int64_t top = 5) const;
};

// `module` is the prepared per-core module `assignment` was computed for (codegen::PrepareModule).
absl::StatusOr<TpuMemoryReport> AnalyzeTpuMemory(const Module& module, const BufferAssignment& assignment,
                                                 const TpuChipSpec& chip);

// OK when the peak fits; otherwise ResourceExhausted with OverLimitMessage().
absl::Status CheckTpuMemory(const TpuMemoryReport& report);

// 17179869184 -> "16 GiB", 19650000000 -> "18.3 GiB", 1536 -> "1.5 KiB", 100 -> "100 B".
std::string FormatBytes(int64_t bytes);

}  // namespace xlac
