// Dot and reduce rules: transposes folded into dot dimension numbers, and reduce-of-reduce merged for integer
// reducers.
//
// Dot canonicalization (batch dimensions first, contracting last) is deliberately absent: codegen's dot emitter
// takes any dimension numbers and layouts, packing operands for its GEMM kernel itself, so reordering would only add
// transposes.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"
#include "passes/simplify/simplifier_internal.h"

namespace xlac::simplify {
namespace {

// dot(transpose(a), b) -> dot(a, b) with a's dimensions. The dot's result orders free dimensions by their index in
// the operand, so this only holds when the transpose keeps the free dimensions in order; batch and contracting
// dimensions keep their listed order, hence the same products accumulated in the same order.
Instruction* FoldTransposeIntoDot(Rewriter& rw, Instruction* dot) {
  if (dot->FindAttr("sparsity") != nullptr || dot->operand_count() != 2) return nullptr;
  for (int side = 0; side < 2; ++side) {
    Instruction* transpose = dot->operand(side);
    if (transpose->opcode() != Opcode::kTranspose || !Bypassable(*transpose)) continue;
    const char* batch_name = side == 0 ? "lhs_batch_dims" : "rhs_batch_dims";
    const char* contracting_name = side == 0 ? "lhs_contracting_dims" : "rhs_contracting_dims";
    const std::vector<int64_t>& perm = transpose->dimensions();
    std::vector<int64_t> batch = dot->IntListAttr(batch_name);
    std::vector<int64_t> contracting = dot->IntListAttr(contracting_name);
    std::vector<bool> is_free(perm.size(), true);
    for (int64_t& d : batch) {
      is_free[d] = false;
      d = perm[d];
    }
    for (int64_t& d : contracting) {
      is_free[d] = false;
      d = perm[d];
    }
    int64_t previous = -1;
    bool in_order = true;
    for (size_t i = 0; i < perm.size(); ++i) {
      if (!is_free[i]) continue;
      in_order &= perm[i] > previous;
      previous = perm[i];
    }
    if (!in_order) continue;
    std::vector<Instruction*> operands = dot->operands();
    operands[side] = transpose->operand(0);
    Instruction* folded = rw.Add(*dot, Opcode::kDot, dot->shape(), std::move(operands));
    folded->mutable_attrs() = dot->attrs();
    folded->SetAttr(batch_name, AttrValue::IntList(std::move(batch)));
    folded->SetAttr(contracting_name, AttrValue::IntList(std::move(contracting)));
    return folded;
  }
  return nullptr;
}

// The binary op of a reducer `(a, b) -> op(a, b)` on scalars, when it is associative and commutative over `type`
// with wrapping integer arithmetic: then any grouping of the same elements gives the same bits.
std::optional<Opcode> AssociativeReducerOp(const Computation& reducer, PrimitiveType type) {
  if (reducer.parameter_count() != 2 || reducer.instruction_count() != 3) return std::nullopt;
  const Instruction* root = reducer.root();
  if (root->operand_count() != 2 || !root->shape().IsScalar()) return std::nullopt;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter || a == b) return std::nullopt;
  Opcode op = root->opcode();
  if (IsPredType(type)) {
    if (op == Opcode::kAnd || op == Opcode::kOr) return op;
    return std::nullopt;
  }
  if (!IsIntegralType(type)) return std::nullopt;
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return op;
    default:
      return std::nullopt;
  }
}

bool IsIdentityOf(Opcode op, const Instruction& init) {
  PrimitiveType type = init.shape().element_type;
  bool is_signed = IsSignedIntegralType(type);
  int bits = BitWidth(type);
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kOr:
    case Opcode::kXor:
      return IsAllInt(init, 0);
    case Opcode::kMultiply:
      return IsAllInt(init, 1);
    case Opcode::kAnd:
      return IsAllOnesBits(init);
    case Opcode::kMaximum:
      return is_signed ? IsAllInt(init, bits >= 64 ? INT64_MIN : -(int64_t{1} << (bits - 1))) : IsAllInt(init, 0);
    case Opcode::kMinimum:
      if (!is_signed) return IsAllOnesBits(init);
      return IsAllInt(init, bits >= 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1);
    default:
      return false;
  }
}

// reduce(reduce(x, D1, identity), D2, init) -> reduce(x, D1 + D2 mapped to x's dimensions, init).
Instruction* MergeReduceOfReduce(Rewriter& rw, Instruction* outer) {
  if (outer->operand_count() != 2) return nullptr;
  Instruction* inner = outer->operand(0);
  if (inner->opcode() != Opcode::kReduce || inner->operand_count() != 2 || !Bypassable(*inner)) return nullptr;
  PrimitiveType type = outer->shape().element_type;
  if (inner->shape().element_type != type) return nullptr;
  std::optional<Opcode> outer_op = AssociativeReducerOp(*outer->called_computation(), type);
  std::optional<Opcode> inner_op = AssociativeReducerOp(*inner->called_computation(), type);
  if (!outer_op || outer_op != inner_op || !IsIdentityOf(*inner_op, *inner->operand(1))) return nullptr;
  Instruction* source = inner->operand(0);
  const std::vector<int64_t>& inner_dims = inner->dimensions();
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < source->shape().rank(); ++d) {
    if (std::find(inner_dims.begin(), inner_dims.end(), d) == inner_dims.end()) kept.push_back(d);
  }
  std::vector<int64_t> merged = inner_dims;
  for (int64_t d : outer->dimensions()) merged.push_back(kept[d]);
  std::sort(merged.begin(), merged.end());
  Instruction* reduce = rw.Add(*outer, Opcode::kReduce, outer->shape(), {source, outer->operand(1)});
  reduce->mutable_attrs() = outer->attrs();
  reduce->SetAttr("dimensions", AttrValue::IntList(std::move(merged)));
  reduce->set_called_computations(outer->called_computations());
  return reduce;
}

}  // namespace

Instruction* SimplifyDotOrReduce(Rewriter& rw, Instruction* inst) {
  switch (inst->opcode()) {
    case Opcode::kDot:
      return FoldTransposeIntoDot(rw, inst);
    case Opcode::kReduce:
      return MergeReduceOfReduce(rw, inst);
    default:
      return nullptr;
  }
}

}  // namespace xlac::simplify
