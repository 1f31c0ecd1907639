#include "ir/buffer_shapes.h"

#include "fmt/format.h"
#include "ir/computation.h"
#include "ir/instruction.h"

namespace xlac {

absl::Status RejectBufferShapes(const Module& module, std::string_view backend) {
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (!inst->shape().ContainsBuffer()) continue;
      std::string where =
          inst->loc().known() ? fmt::format(" at line {}, column {}", inst->loc().line, inst->loc().col) : "";
      // InvalidArgument, not Unimplemented: tools point Unimplemented JIT errors at the interpreter, which refuses
      // buffers too.
      return absl::InvalidArgumentError(fmt::format(
          "instruction '{}'{} (computation '{}') has the buffer shape {}: buffer shapes b(...) parse and verify, "
          "but {} cannot run them (XLA uses them only between Pin/Unpin custom-calls)",
          inst->name(), where, computation->name(), ShapeToString(inst->shape(), /*print_layout=*/false), backend));
    }
  }
  return absl::OkStatus();
}

}  // namespace xlac
