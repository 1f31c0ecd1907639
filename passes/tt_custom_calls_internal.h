// Internal to the tt-custom-calls pass (passes/tt_custom_calls.h), shared by its two files: tt_custom_calls.cc
// (attention, KV caches, the driver) and tt_moe_calls.cc (the mixture-of-experts ops). Reading tt.* calls' frontend
// attributes and building HLO at a call.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "ir/module.h"
#include "ir/primitive_type.h"
#include "ir/shape_inference.h"
#include "ir/status_macros.h"
#include "passes/replace_call.h"

namespace xlac::tt_calls {

// The message; the call's location goes with it (Run's `error_at`).
inline absl::Status CallError(const Instruction& call, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("custom-call %{} (target \"{}\"): {}", call.name(),
                                                std::string(call.StringAttr("custom_call_target")), why));
}

inline std::string Str(const Shape& s) { return ShapeToString(s, false); }

// ---------------------------------------------------------------------------------------------------------------
// Frontend attributes: strings written by Python's str() (tt-mlir reads them the same way: booleans case-insensitive
// "true"/"false", floats with llvm::to_float, integers in decimal).

inline const std::string* Attr(const Instruction& call, std::string_view key) {
  for (const auto& [k, v] : call.frontend_attributes()) {
    if (k == key) return &v;
  }
  return nullptr;
}

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// The boolean attribute `key`, `fallback` when absent.
inline absl::StatusOr<bool> BoolAttr(const Instruction& call, std::string_view key, bool fallback) {
  const std::string* value = Attr(call, key);
  if (value == nullptr) return fallback;
  const std::string lower = Lower(*value);
  if (lower == "true") return true;
  if (lower == "false") return false;
  return CallError(call, fmt::format("frontend attribute {} = \"{}\" is not a boolean (\"True\" or \"False\")",
                                     std::string(key), *value));
}

inline absl::StatusOr<std::optional<double>> FloatAttr(const Instruction& call, std::string_view key) {
  const std::string* value = Attr(call, key);
  if (value == nullptr || Lower(*value) == "none") return std::optional<double>();
  char* end = nullptr;
  const double parsed = std::strtod(value->c_str(), &end);
  if (value->empty() || end != value->c_str() + value->size() || !std::isfinite(parsed)) {
    return CallError(call,
                     fmt::format("frontend attribute {} = \"{}\" is not a finite number", std::string(key), *value));
  }
  return std::optional<double>(parsed);
}

inline absl::StatusOr<std::optional<int64_t>> IntAttr(const Instruction& call, std::string_view key) {
  const std::string* value = Attr(call, key);
  if (value == nullptr || Lower(*value) == "none") return std::optional<int64_t>();
  char* end = nullptr;
  const long long parsed = std::strtoll(value->c_str(), &end, 10);
  if (value->empty() || end != value->c_str() + value->size()) {
    return CallError(call, fmt::format("frontend attribute {} = \"{}\" is not an integer", std::string(key), *value));
  }
  return std::optional<int64_t>(parsed);
}

// ---------------------------------------------------------------------------------------------------------------
// Building HLO at the call.

// The scalar computations (max, add, overwrite) the rewrites share, one per opcode and type.
using ScalarComputations = std::map<std::pair<Opcode, PrimitiveType>, Computation*>;

class Builder {
 public:
  Builder(Module& module, Computation& comp, const Instruction& at, ScalarComputations& shared)
      : module_(module), comp_(comp), at_(at), shared_(shared) {}

  // An instruction of `shape` (no layout).
  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands) {
    shape.layout.reset();
    return AddAtCall(module_, comp_, at_, op, std::move(shape), std::move(operands));
  }

  // Sets `inst`'s shape by shape inference (after its attributes are set). A failure is this pass's bug.
  Instruction* Infer(Instruction* inst) {
    absl::StatusOr<Shape> shape = InferShape(*inst);
    if (!shape.ok()) {
      if (error_.ok()) {
        error_ = absl::InternalError(fmt::format("tt-custom-calls built an invalid {}: {}", inst->name(),
                                                 std::string(shape.status().message())));
      }
      return inst;
    }
    inst->set_shape(*std::move(shape));
    return inst;
  }
  const absl::Status& error() const { return error_; }

  Instruction* Scalar(PrimitiveType type, double value) {
    Literal literal(Shape::Scalar(type));
    if (IsIntegralType(type)) {
      literal.SetFromInt64(0, static_cast<int64_t>(value));
    } else if (type == PrimitiveType::kPred) {
      literal.SetFromInt64(0, value != 0 ? 1 : 0);
    } else {
      literal.SetFromDouble(0, value);
    }
    Instruction* c = Add(Opcode::kConstant, Shape::Scalar(type), {});
    c->set_literal(std::move(literal));
    return c;
  }

  // `x` broadcast into `dims` of `type`, x's dimension i becoming dimension mapping[i].
  Instruction* Broadcast(Instruction* x, std::vector<int64_t> dims, std::vector<int64_t> mapping) {
    Instruction* b = Add(Opcode::kBroadcast, Shape::Array(x->shape().element_type, std::move(dims)), {x});
    b->SetAttr("dimensions", AttrValue::IntList(std::move(mapping)));
    return b;
  }
  Instruction* Splat(PrimitiveType type, double value, std::vector<int64_t> dims) {
    return Broadcast(Scalar(type, value), std::move(dims), {});
  }

  Instruction* Convert(Instruction* x, PrimitiveType type) {
    if (x->shape().element_type == type) return x;
    Shape s = x->shape();
    s.element_type = type;
    return Add(Opcode::kConvert, s, {x});
  }
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims) {
    if (x->shape().dimensions == dims) return x;
    return Add(Opcode::kReshape, Shape::Array(x->shape().element_type, std::move(dims)), {x});
  }
  Instruction* Transpose(Instruction* x, std::vector<int64_t> perm) {
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(x->shape().dimensions[p]);
    Instruction* t = Add(Opcode::kTranspose, Shape::Array(x->shape().element_type, std::move(dims)), {x});
    t->SetAttr("dimensions", AttrValue::IntList(std::move(perm)));
    return t;
  }
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) { return Add(op, a->shape(), {a, b}); }
  Instruction* Unary(Opcode op, Instruction* a) { return Add(op, a->shape(), {a}); }
  Instruction* Compare(Instruction* a, Instruction* b, std::string_view direction) {
    Shape s = a->shape();
    s.element_type = PrimitiveType::kPred;
    Instruction* c = Add(Opcode::kCompare, s, {a, b});
    c->SetAttr("direction", AttrValue::Enum(std::string(direction)));
    return c;
  }
  Instruction* Select(Instruction* pred, Instruction* on_true, Instruction* on_false) {
    return Add(Opcode::kSelect, on_true->shape(), {pred, on_true, on_false});
  }
  Instruction* Iota(PrimitiveType type, std::vector<int64_t> dims, int64_t dimension) {
    Instruction* i = Add(Opcode::kIota, Shape::Array(type, std::move(dims)), {});
    i->SetAttr("iota_dimension", AttrValue::Int(dimension));
    return i;
  }
  Instruction* Slice(Instruction* x, std::vector<SliceRange> ranges) {
    Instruction* s = Add(Opcode::kSlice, Shape(), {x});
    s->SetAttr("slice", AttrValue::Of(std::move(ranges)));
    return Infer(s);
  }
  Instruction* Concatenate(std::vector<Instruction*> parts, int64_t dimension) {
    Instruction* c = Add(Opcode::kConcatenate, Shape(), std::move(parts));
    c->SetAttr("dimensions", AttrValue::IntList({dimension}));
    return Infer(c);
  }
  // A dot; `result_type` other than kInvalid is XLA's preferred element type (bf16 operands accumulated into f32).
  Instruction* Dot(Instruction* lhs, Instruction* rhs, std::vector<int64_t> lhs_batch, std::vector<int64_t> rhs_batch,
                   std::vector<int64_t> lhs_contracting, std::vector<int64_t> rhs_contracting,
                   PrimitiveType result_type = PrimitiveType::kInvalid) {
    Shape own;
    own.element_type = result_type;
    Instruction* d = Add(Opcode::kDot, own, {lhs, rhs});
    d->SetAttr("lhs_batch_dims", AttrValue::IntList(std::move(lhs_batch)));
    d->SetAttr("rhs_batch_dims", AttrValue::IntList(std::move(rhs_batch)));
    d->SetAttr("lhs_contracting_dims", AttrValue::IntList(std::move(lhs_contracting)));
    d->SetAttr("rhs_contracting_dims", AttrValue::IntList(std::move(rhs_contracting)));
    return Infer(d);
  }
  // A reduction of `x` over `dims` by `op` (kMaximum, kMinimum or kAdd).
  Instruction* Reduce(Instruction* x, std::vector<int64_t> dims, Opcode op) {
    const PrimitiveType type = x->shape().element_type;
    double init = 0;
    if (op != Opcode::kAdd) {
      const bool max = op == Opcode::kMaximum;
      if (IsFloatingPointType(type)) {
        init = max ? -INFINITY : INFINITY;
      } else if (type == PrimitiveType::kS32) {
        init = max ? static_cast<double>(std::numeric_limits<int32_t>::min())
                   : static_cast<double>(std::numeric_limits<int32_t>::max());
      } else {
        init = max ? 0.0 : 1.0;  // pred (the only other type the rewrites reduce)
      }
    }
    Instruction* r = Add(Opcode::kReduce, Shape(), {x, Scalar(type, init)});
    r->SetAttr("dimensions", AttrValue::IntList(std::move(dims)));
    r->set_called_computations({ScalarComputation(op, type)});
    return Infer(r);
  }
  Instruction* Gather(Instruction* operand, Instruction* indices, std::vector<int64_t> offset_dims,
                      std::vector<int64_t> collapsed, std::vector<int64_t> start_index_map, int64_t index_vector_dim,
                      std::vector<int64_t> slice_sizes) {
    Instruction* g = Add(Opcode::kGather, Shape(), {operand, indices});
    g->SetAttr("offset_dims", AttrValue::IntList(std::move(offset_dims)));
    g->SetAttr("collapsed_slice_dims", AttrValue::IntList(std::move(collapsed)));
    g->SetAttr("start_index_map", AttrValue::IntList(std::move(start_index_map)));
    g->SetAttr("index_vector_dim", AttrValue::Int(index_vector_dim));
    g->SetAttr("slice_sizes", AttrValue::IntList(std::move(slice_sizes)));
    g->SetAttr("indices_are_sorted", AttrValue::Bool(false));
    return Infer(g);
  }
  // A scatter that overwrites (the update wins); windows out of bounds are skipped, as HLO scatter does.
  Instruction* ScatterAssign(Instruction* operand, Instruction* indices, Instruction* updates,
                             std::vector<int64_t> update_window_dims, std::vector<int64_t> inserted_window_dims,
                             std::vector<int64_t> scatter_dims_to_operand_dims, int64_t index_vector_dim) {
    Instruction* s = Add(Opcode::kScatter, Shape(), {operand, indices, updates});
    s->SetAttr("update_window_dims", AttrValue::IntList(std::move(update_window_dims)));
    s->SetAttr("inserted_window_dims", AttrValue::IntList(std::move(inserted_window_dims)));
    s->SetAttr("scatter_dims_to_operand_dims", AttrValue::IntList(std::move(scatter_dims_to_operand_dims)));
    s->SetAttr("index_vector_dim", AttrValue::Int(index_vector_dim));
    s->SetAttr("indices_are_sorted", AttrValue::Bool(false));
    s->SetAttr("unique_indices", AttrValue::Bool(false));
    s->set_called_computations({ScalarComputation(Opcode::kParameter, operand->shape().element_type)});
    return Infer(s);
  }
  Instruction* DynamicUpdateSlice(Instruction* operand, Instruction* update, std::vector<Instruction*> starts) {
    std::vector<Instruction*> operands = {operand, update};
    operands.insert(operands.end(), starts.begin(), starts.end());
    return Add(Opcode::kDynamicUpdateSlice, operand->shape(), std::move(operands));
  }
  // The device's partition id, s32[].
  Instruction* PartitionId() {
    return Convert(Add(Opcode::kPartitionId, Shape::Scalar(PrimitiveType::kU32), {}), PrimitiveType::kS32);
  }
  // All-gather of `x` along `dim` among the partitions of each group (cross-partition, as a manual region's
  // collectives are).
  Instruction* AllGather(Instruction* x, int64_t dim, std::vector<std::vector<int64_t>> groups) {
    Shape s = x->shape();
    s.dimensions[dim] *= static_cast<int64_t>(groups[0].size());
    Instruction* g = Add(Opcode::kAllGather, s, {x});
    g->SetAttr("dimensions", AttrValue::IntList({dim}));
    g->SetAttr("channel_id", AttrValue::Int(1));
    ReplicaGroups rg;
    rg.groups = std::move(groups);
    g->SetAttr("replica_groups", AttrValue::Of(std::move(rg)));
    return g;
  }
  Instruction* DynamicSlice(Instruction* operand, std::vector<Instruction*> starts, std::vector<int64_t> sizes) {
    std::vector<Instruction*> operands = {operand};
    operands.insert(operands.end(), starts.begin(), starts.end());
    Instruction* d = Add(Opcode::kDynamicSlice, Shape::Array(operand->shape().element_type, sizes), operands);
    d->SetAttr("dynamic_slice_sizes", AttrValue::IntList(std::move(sizes)));
    return d;
  }

 private:
  // (a, b) -> a `op` b of scalars of `type`; kParameter: -> b (a scatter's overwrite).
  Computation* ScalarComputation(Opcode op, PrimitiveType type) {
    Computation*& known = shared_[{op, type}];
    if (known == nullptr) known = NewScalarComputation(op, type);
    return known;
  }
  Computation* NewScalarComputation(Opcode op, PrimitiveType type) {
    const std::string base = op == Opcode::kMaximum   ? "max"
                             : op == Opcode::kMinimum ? "min"
                             : op == Opcode::kAdd     ? "add"
                                                      : "assign";
    auto comp = std::make_unique<Computation>(module_.UniqueComputationName(base));
    const Shape scalar = Shape::Scalar(type);
    Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, module_.UniqueInstructionName("a"), scalar));
    Instruction* b = comp->AddInstruction(Instruction::CreateParameter(1, module_.UniqueInstructionName("b"), scalar));
    if (op == Opcode::kParameter) {
      comp->set_root(b);
    } else {
      comp->set_root(
          comp->AddInstruction(Instruction::Create(op, module_.UniqueInstructionName(base), scalar, {a, b})));
    }
    return module_.AddComputation(std::move(comp));
  }

  Module& module_;
  Computation& comp_;
  const Instruction& at_;
  ScalarComputations& shared_;
  absl::Status error_;
};

// The type attention computes in: f32 for narrower floats (bf16, f16, f8: torch's CPU attention and ttnn's
// reference accumulate bf16 in f32), else the type itself.
inline PrimitiveType ComputeType(PrimitiveType t) {
  return t == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

inline bool IsFloatArray(const Shape& s, int64_t rank) {
  return s.IsArray() && IsFloatingPointType(s.element_type) && s.rank() == rank;
}
inline bool IsIntArray(const Shape& s) { return s.IsArray() && IsIntegralType(s.element_type); }

// The mixture-of-experts rewrites (tt_moe_calls.cc).
absl::StatusOr<Instruction*> AllToAllDispatch(Module& module, Computation& comp, Instruction* call,
                                              ScalarComputations& shared);
absl::StatusOr<Instruction*> MoeExpertTokenRemap(Module& module, Computation& comp, Instruction* call,
                                                 ScalarComputations& shared);
absl::StatusOr<Instruction*> SparseMatmul(Module& module, Computation& comp, Instruction* call,
                                          ScalarComputations& shared);
absl::StatusOr<Instruction*> AllToAllCombine(Module& module, Computation& comp, Instruction* call,
                                             ScalarComputations& shared);

}  // namespace xlac::tt_calls
