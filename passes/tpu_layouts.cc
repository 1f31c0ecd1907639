#include "passes/tpu_layouts.h"

#include "ir/computation.h"
#include "ir/tpu_layout.h"

namespace xlac {
namespace {

// Whether WithTpuLayouts can tile every array leaf: static shapes only (a dynamic dimension has no fixed tile
// count).
bool Tileable(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes) {
      if (!Tileable(element)) return false;
    }
    return true;
  }
  return !shape.IsArray() || shape.IsStatic();
}

bool Retile(Shape& shape) {
  if (!Tileable(shape)) return false;
  Shape tiled = WithTpuLayouts(shape);
  if (tiled == shape) return false;
  shape = std::move(tiled);
  return true;
}

}  // namespace

absl::StatusOr<bool> RunTpuLayouts(Module& module) {
  bool changed = false;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      Shape shape = inst->shape();
      if (!Retile(shape)) continue;
      inst->set_shape(std::move(shape));
      changed = true;
    }
  }
  if (std::optional<ComputationLayout>& layout = module.mutable_config().entry_computation_layout) {
    for (Shape& parameter : layout->parameters) changed |= Retile(parameter);
    changed |= Retile(layout->result);
  }
  return changed;
}

}  // namespace xlac
