// Custom-calls other than "Sharding" and the built-in Winograd transforms (calls of their runtime kernels) go to the
// runtime: xlac_rt_custom_call(dev, target, backend_config, operands, result) (runtime/cpu/xlac_runtime.h), which
// dispatches to the device group's handler.
//
// ABI of the call: `operands` is an array of pointers to every array leaf of every operand, operands in order and
// tuple leaves depth first (tokens have none); `result` is the result buffer when the result is an array, a pointer to
// an array of pointers to its array leaves (depth first) when it is a tuple, and NULL when it has no array leaf.
// Buffers are in their shape's layout. `target` points to a per-call-site constant C string that is also an
// exported symbol named CustomCallSiteSymbol(entry, instruction unique id), so a host handler can tell call sites
// apart by address (the JIT does: codegen/jit.cc).
#include "codegen/custom_call_abi.h"
#include "codegen/ir_emitter_internal.h"
#include "codegen/parallel_programs.h"
#include "ir/decomposition_calls.h"
#include "ir/kernel_calls.h"
#include "ir/sharding.h"
#include "ir/winograd.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen {

std::string CustomCallSiteSymbol(const std::string& entry_name, int64_t unique_id) {
  return fmt::format("{}.custom_call.{}", entry_name, unique_id);
}

absl::Status CheckCustomCallNeedsNoHandler(const Instruction& inst) {
  if (inst.opcode() != Opcode::kCustomCall || IsElementwiseKernelCall(inst) || IsBufferKernelCall(inst)) {
    return absl::OkStatus();
  }
  // Located ("line:col: "), so drivers show the call's line.
  const std::string at = inst.loc().known() ? fmt::format("{}:{}: ", inst.loc().line, inst.loc().col) : "";
  const std::string_view target = inst.StringAttr("custom_call_target");
  const bool identity_boundary = IsShardMapBoundaryTarget(target) && inst.operand_count() == 1 &&
                                 inst.operand(0)->shape().Compatible(inst.shape());
  if (IsShardMapBoundaryTarget(target) && !identity_boundary) {
    return absl::UnimplementedError(fmt::format(
        "{}codegen does not support custom-call ({}): {} changes {} into {}, and a manual (shard_map) region's "
        "shapes are per-core, which only the partitioned program has: run it partitioned",
        at, inst.name(), std::string(target), ShapeToString(inst.operand(0)->shape(), false),
        ShapeToString(inst.shape(), false)));
  }
  if (!IsShardingIdentityTarget(target) && !IsBuiltinCustomCallTarget(target) && !identity_boundary) {
    // The identity hint only where an identity could stand: one operand of the result's shape.
    const bool could_be_identity = inst.operand_count() == 1 && inst.operand(0)->shape().Compatible(inst.shape());
    return absl::UnimplementedError(
        fmt::format("{}codegen does not support custom-call ({}): target \"{}\" needs a custom-call handler{}", at,
                    inst.name(), std::string(target),
                    could_be_identity ? fmt::format(" (if it only annotates its operand, declare it an identity: "
                                                    "--custom-call-identity={})",
                                                    std::string(target))
                                      : std::string(" (C++ kernels: --custom-call-src, docs/custom_calls.md)")));
  }
  return absl::OkStatus();
}

absl::Status CheckCustomCallsNeedNoHandler(const Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) XLAC_RETURN_IF_ERROR(CheckCustomCallNeedsNoHandler(*inst));
  }
  return absl::OkStatus();
}

namespace internal {
namespace {

void ArrayLeaves(const Shape& shape, std::vector<int64_t>& index, std::vector<std::vector<int64_t>>& out) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      index.push_back(static_cast<int64_t>(i));
      ArrayLeaves(shape.tuple_shapes[i], index, out);
      index.pop_back();
    }
  } else if (shape.IsArray()) {
    out.push_back(index);
  }
}

std::vector<std::vector<int64_t>> ArrayLeaves(const Shape& shape) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> index;
  ArrayLeaves(shape, index, out);
  return out;
}

}  // namespace

llvm::Constant* IrEmitter::WinogradMatrix(const std::vector<float>& matrix, const std::string& name) {
  llvm::Constant* init = llvm::ConstantDataArray::get(ctx(), llvm::ArrayRef<float>(matrix));
  auto* global = new llvm::GlobalVariable(llvm_module_, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, name);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(64));
  return global;
}

// "xlac.winograd_conv": a call of xlac_rt_winograd_conv_f32 (runtime/cpu/winograd_conv.cc). x and y are passed with
// their layouts' strides (any dim_labels and layout work in place); the transformed filter must be row-major (the
// pass creates it so, and layout assignment keeps a custom call's operand layouts).
absl::Status IrEmitter::EmitWinogradConv(const Instruction& inst) {
  absl::StatusOr<WinogradConvGeometry> geometry = WinogradConvGeometryOf(inst);
  if (!geometry.ok()) return Unimplemented(inst, "{}", std::string(geometry.status().message()));
  const WinogradGeometry& gi = geometry->input;
  const WinogradGeometry& go = geometry->output;
  const IrArray x = ArrayFor(inst.operand(0)), u = ArrayFor(inst.operand(1)), y = ArrayFor(&inst);
  if (!HasDefaultLayout(u.shape)) {
    return Unimplemented(inst, "the transformed filter {} is not row-major", ShapeToString(u.shape, true));
  }
  const std::vector<int64_t> sizes = {gi.batch,    gi.features,       gi.image_size[0], gi.image_size[1],
                                      go.features, go.image_size[0],  go.image_size[1], gi.tiles[0],
                                      gi.tiles[1], gi.padding_low[0], gi.padding_low[1]};
  const std::vector<int64_t> x_strides = {x.strides[gi.batch_dim], x.strides[gi.feature_dim],
                                          x.strides[gi.spatial_dims[0]], x.strides[gi.spatial_dims[1]]};
  const std::vector<int64_t> y_strides = {y.strides[go.batch_dim], y.strides[go.feature_dim],
                                          y.strides[go.spatial_dims[0]], y.strides[go.spatial_dims[1]]};
  const int64_t fmas = gi.n * gi.n * gi.features * go.features * gi.tile_count();
  // The device's threads for a large convolution (the kernel splits it by tile rows); NULL: this thread.
  llvm::Value* dev = CanParallelize(fmas) ? static_cast<llvm::Value*>(entry_function_->getArg(1))
                                          : llvm::ConstantPointerNull::get(b_.getPtrTy());
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      "xlac_rt_winograd_conv_f32",
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, ptr, i64, ptr, ptr, ptr, ptr, ptr}, false));
  b_.CreateCall(
      fn, {dev, x.base, u.base, y.base, I64(gi.m), WinogradMatrix(WinogradBtF32(gi.m), inst.name() + ".bt"),
           WinogradMatrix(WinogradAtF32(gi.m), inst.name() + ".at"), ConstantI64Array(sizes, inst.name() + ".sizes"),
           ConstantI64Array(x_strides, inst.name() + ".x_strides"),
           ConstantI64Array(y_strides, inst.name() + ".y_strides")});
  return absl::OkStatus();
}

absl::Status IrEmitter::EmitCustomCall(const Instruction& inst) {
  if (IsBufferKernelCall(inst)) return EmitBufferKernelCall(inst);
  std::string target(inst.StringAttr("custom_call_target"));
  // The built-in Winograd transforms (ir/winograd.h): calls of the runtime's kernels, xlac_rt_winograd_input_f32 and
  // xlac_rt_winograd_output_f32 (runtime/cpu/winograd.cc), with nothing to compile. The image (x or y) is passed with
  // its layout's strides, so any dim_labels and layout work in place; the transformed array is row-major (the pass
  // creates it so, and layout assignment keeps a custom call's operand and result layouts). The matrices come from
  // ir/winograd.h: the f32 values the interpreter multiplies by.
  if (target == kWinogradConvTarget) return EmitWinogradConv(inst);
  if (DecompositionKindOf(target).has_value()) return EmitDecompositionCall(inst);
  if (IsWinogradTarget(target)) {
    absl::StatusOr<WinogradGeometry> geometry = WinogradGeometryOf(inst);
    if (!geometry.ok()) return Unimplemented(inst, "{}", std::string(geometry.status().message()));
    const WinogradGeometry& g = *geometry;
    const bool input = target == kWinogradInputTarget;
    const IrArray operand = ArrayFor(inst.operand(0)), result = ArrayFor(&inst);
    const IrArray& image = input ? operand : result;
    const IrArray& transformed = input ? result : operand;
    if (!HasDefaultLayout(transformed.shape)) {
      return Unimplemented(inst, "the transformed array {} is not row-major", ShapeToString(transformed.shape, true));
    }
    const std::vector<int64_t> strides = {image.strides[g.batch_dim], image.strides[g.feature_dim],
                                          image.strides[g.spatial_dims[0]], image.strides[g.spatial_dims[1]]};
    std::vector<int64_t> sizes = {g.batch, g.features, g.image_size[0], g.image_size[1], g.tiles[0], g.tiles[1]};
    if (input) {
      sizes.push_back(g.padding_low[0]);
      sizes.push_back(g.padding_low[1]);
    }
    llvm::Constant* coefficients =
        WinogradMatrix(input ? WinogradBtF32(g.m) : WinogradAtF32(g.m), inst.name() + ".matrix");
    int64_t elements = 1;
    for (int64_t d : transformed.shape.dimensions) elements *= d;
    // The device's threads for a large transform (the kernel splits it by channels or features); NULL: this thread.
    llvm::Value* dev = CanParallelize(elements) ? static_cast<llvm::Value*>(entry_function_->getArg(1))
                                                : llvm::ConstantPointerNull::get(b_.getPtrTy());
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
        input ? "xlac_rt_winograd_input_f32" : "xlac_rt_winograd_output_f32",
        llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, i64, ptr, ptr, ptr}, false));
    b_.CreateCall(
        fn, {dev, operand.base, result.base, I64(g.m), coefficients, ConstantI64Array(sizes, inst.name() + ".sizes"),
             ConstantI64Array(strides, inst.name() + ".strides")});
    return absl::OkStatus();
  }
  // An array of pointers, built in an entry-block alloca (so loops do not grow the stack).
  auto pointer_array = [&](const std::vector<llvm::Value*>& pointers, const char* label) -> llvm::Value* {
    if (pointers.empty()) return llvm::ConstantPointerNull::get(b_.getPtrTy());
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    llvm::Value* array = entry.CreateAlloca(b_.getPtrTy(), I64(static_cast<int64_t>(pointers.size())), label);
    for (size_t i = 0; i < pointers.size(); ++i) {
      b_.CreateStore(pointers[i], b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), array, i));
    }
    return array;
  };
  std::vector<llvm::Value*> operand_pointers;
  for (const Instruction* operand : inst.operands()) {
    for (const std::vector<int64_t>& index : ArrayLeaves(operand->shape())) {
      operand_pointers.push_back(ArrayFor(operand, index).base);
    }
  }
  llvm::Value* operands = pointer_array(operand_pointers, "custom_call.operands");
  llvm::Value* result;
  if (inst.shape().IsArray()) {
    result = ArrayFor(&inst).base;
  } else {
    std::vector<llvm::Value*> result_pointers;
    for (const std::vector<int64_t>& index : ArrayLeaves(inst.shape())) {
      result_pointers.push_back(ArrayFor(&inst, index).base);
    }
    result = pointer_array(result_pointers, "custom_call.results");
  }
  llvm::Constant* target_init = llvm::ConstantDataArray::getString(ctx(), target);
  auto* target_global = new llvm::GlobalVariable(llvm_module_, target_init->getType(), /*isConstant=*/true,
                                                 llvm::GlobalValue::ExternalLinkage, target_init,
                                                 CustomCallSiteSymbol(options_.entry_name, inst.unique_id()));
  llvm::Value* config = b_.CreateGlobalString(inst.backend_config(), "custom_call.config");
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      "xlac_rt_custom_call",
      llvm::FunctionType::get(b_.getInt32Ty(),
                              {b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy()}, false));
  llvm::Value* code = b_.CreateCall(fn, {function_->getArg(1), target_global, config, operands, result});
  ReturnIfFailed(code, {});
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace xlac::codegen
