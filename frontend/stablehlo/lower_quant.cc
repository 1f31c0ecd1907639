// Quantized types (`!quant.uniform<...>`): a quantized value is lowered as its storage integers, and the ops that
// compute with it follow the StableHLO spec's dequantize-op-quantize semantics, as StableHLO's
// stablehlo-legalize-quant-to-math does before XLA sees a module:
//
//   dequantize(q) = (convert(q) - zero_point) * scale                   (in the expressed type)
//   quantize(x)   = convert(round_nearest_even(clamp(min, x / scale + zero_point, max)))
//
// Ops that only move or select elements (reshape, slice, gather, concatenate, select, calls, loops, returns, ...)
// work on the storage integers directly when every quantized type they touch has the same parameters; an op inside a
// region (a reduce body) is handled like any other op, so a quantized reduction requantizes after every step, as the
// spec's interpreter does.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

const QuantParams* QuantOf(const Type& type) { return type.quantized ? type.quant.get() : nullptr; }

// The type with its quantized element replaced by the expressed type.
Type Expressed(const Type& type) {
  const QuantParams* q = QuantOf(type);
  if (q == nullptr) return type;
  Type out = type;
  out.element = q->expressed;
  out.quantized = false;
  out.quant = nullptr;
  return out;
}

// Ops computed on dequantized values; their quantized results are quantized again.
bool IsComputeOp(std::string_view name) {
  static const std::set<std::string_view> kOps = {
      "stablehlo.abs",
      "stablehlo.add",
      "stablehlo.atan2",
      "stablehlo.cbrt",
      "stablehlo.ceil",
      "stablehlo.clamp",
      "stablehlo.compare",
      "stablehlo.convert",
      "stablehlo.cosine",
      "stablehlo.divide",
      "stablehlo.dot",
      "stablehlo.dot_general",
      "stablehlo.convolution",
      "stablehlo.exponential",
      "stablehlo.exponential_minus_one",
      "stablehlo.floor",
      "stablehlo.log",
      "stablehlo.log_plus_one",
      "stablehlo.logistic",
      "stablehlo.maximum",
      "stablehlo.minimum",
      "stablehlo.multiply",
      "stablehlo.negate",
      "stablehlo.power",
      "stablehlo.remainder",
      "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even",
      "stablehlo.rsqrt",
      "stablehlo.sign",
      "stablehlo.sine",
      "stablehlo.sqrt",
      "stablehlo.subtract",
      "stablehlo.tan",
      "stablehlo.tanh",
      "stablehlo.is_finite",
      "stablehlo.reduce_precision",
      "stablehlo.batch_norm_inference",
      "stablehlo.batch_norm_training",
      "stablehlo.batch_norm_grad",
      "stablehlo.cholesky",
      "stablehlo.triangular_solve",
      "stablehlo.fft",
  };
  return kOps.count(name) != 0 || name.rfind("chlo.", 0) == 0;
}

// Data movement ops whose operands and results must share quantization parameters to run on the storage values;
// otherwise they are computed like IsComputeOp ops (a concatenation of differently quantized tensors).
bool IsSameParamsMoveOp(std::string_view name) {
  static const std::set<std::string_view> kOps = {
      "stablehlo.reshape",
      "stablehlo.transpose",
      "stablehlo.broadcast_in_dim",
      "stablehlo.broadcast",
      "stablehlo.slice",
      "stablehlo.dynamic_slice",
      "stablehlo.dynamic_update_slice",
      "stablehlo.gather",
      "stablehlo.concatenate",
      "stablehlo.reverse",
      "stablehlo.pad",
      "stablehlo.select",
  };
  return kOps.count(name) != 0;
}

bool TouchesQuant(const Op& op) {
  for (const Type& t : op.operand_types) {
    if (QuantOf(t) != nullptr) return true;
  }
  for (const Type& t : op.result_types) {
    if (QuantOf(t) != nullptr) return true;
  }
  return false;
}

}  // namespace

void Lowerer::NoteQuant(Instruction* inst, const Type& type) {
  if (const QuantParams* q = QuantOf(type); q != nullptr && inst != nullptr) quant_of_[inst] = type.quant;
}

const QuantParams* Lowerer::OperandQuant(const Op& op, size_t i, const Instruction* value) const {
  if (op.operand_types.size() == op.operands.size()) return QuantOf(op.operand_types[i]);
  auto it = quant_of_.find(value);
  return it == quant_of_.end() ? nullptr : it->second.get();
}

// Per-axis parameters become a vector broadcast along the quantized dimension.
Instruction* Lowerer::QuantParam(const QuantParams& q, bool zero_points, const Shape& shape) {
  const PrimitiveType type = q.expressed;
  const size_t n = q.scales.size();
  if (q.axis < 0) {
    const double v = zero_points ? static_cast<double>(q.zero_points[0]) : q.scales[0];
    Instruction* c = ConstScalar(type, v);
    return shape.rank() == 0 ? c : BroadcastTo(c, Shape(type, shape.dimensions), {});
  }
  if (q.axis >= shape.rank() || shape.dimensions[q.axis] != static_cast<int64_t>(n)) {
    return Error(cur_op_ != nullptr ? cur_op_->name_pos : 0,
                 fmt::format("the quantized dimension {} of a per-axis type with {} scales does not fit shape {}",
                             q.axis, n, ShapeToString(shape, false))),
           nullptr;
  }
  Literal lit(Shape(type, {static_cast<int64_t>(n)}));
  for (size_t i = 0; i < n; ++i) {
    lit.SetFromDouble(static_cast<int64_t>(i), zero_points ? static_cast<double>(q.zero_points[i]) : q.scales[i]);
  }
  return BroadcastInDim(EmitConstant(std::move(lit)), Shape(type, shape.dimensions), {q.axis});
}

Instruction* Lowerer::Dequantize(Instruction* storage, const QuantParams& q) {
  Instruction* x = Convert(storage, q.expressed);
  Instruction* zp = QuantParam(q, /*zero_points=*/true, x->shape());
  Instruction* scale = QuantParam(q, /*zero_points=*/false, x->shape());
  if (zp == nullptr || scale == nullptr) return nullptr;
  return Binary(Opcode::kMultiply, Binary(Opcode::kSubtract, x, zp), scale);
}

Instruction* Lowerer::Quantize(Instruction* value, const QuantParams& q) {
  Instruction* x = Convert(value, q.expressed);
  Instruction* zp = QuantParam(q, /*zero_points=*/true, x->shape());
  Instruction* scale = QuantParam(q, /*zero_points=*/false, x->shape());
  if (zp == nullptr || scale == nullptr) return nullptr;
  x = Binary(Opcode::kAdd, Binary(Opcode::kDivide, x, scale), zp);
  Instruction* lo = ConstLike(static_cast<double>(q.storage_min), x);
  Instruction* hi = ConstLike(static_cast<double>(q.storage_max), x);
  x = Emit(Opcode::kClamp, x->shape(), {lo, x, hi});
  return Convert(Unary(Opcode::kRoundNearestEven, x), q.storage);
}

bool Lowerer::LowerQuantAware(const Op& op, bool (*handler)(Lowerer&, const Op&, Results*), Results* results,
                              bool* handled) {
  *handled = false;
  for (const std::vector<Type>* types : {&op.operand_types, &op.result_types}) {
    for (const Type& t : *types) {
      Shape unused;
      if (t.quantized && t.quant == nullptr && !ToShape(t, t.pos, &unused)) return false;  // reports the type
    }
  }
  const bool quantize = op.name == "stablehlo.uniform_quantize";
  const bool dequantize = op.name == "stablehlo.uniform_dequantize";
  if (!quantize && !dequantize && !TouchesQuant(op)) {
    if (quant_of_.empty()) return true;
    bool any = false;
    for (const ValueRef& ref : op.operands) {
      if (Instruction* v = Lookup(ref); v != nullptr && quant_of_.count(v)) any = true;
    }
    if (!any) return true;
  }
  std::vector<Instruction*> operands;
  operands.reserve(op.operands.size());
  for (const ValueRef& ref : op.operands) {
    Instruction* v = Lookup(ref);
    if (v == nullptr) return false;
    operands.push_back(v);
  }
  std::vector<const QuantParams*> in(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) in[i] = OperandQuant(op, i, operands[i]);

  if (quantize || dequantize) {
    *handled = true;
    if (operands.size() != 1 || op.result_types.size() != 1) {
      return OpError(op, fmt::format("'{}' takes one operand and has one result", op.name));
    }
    const QuantParams* out = QuantOf(op.result_types[0]);
    if (quantize != (out != nullptr) || (dequantize && in[0] == nullptr)) {
      return OpError(op, fmt::format("'{}' needs a {} operand and a {} result", op.name,
                                     quantize ? "floating-point or quantized" : "quantized",
                                     quantize ? "quantized" : "floating-point"));
    }
    Instruction* x = operands[0];
    if (in[0] != nullptr) x = Dequantize(x, *in[0]);
    if (x != nullptr && quantize) x = Quantize(x, *out);
    if (x == nullptr) return false;
    if (dequantize) x = Convert(x, op.result_types[0].element);
    results->push_back(x);
    return true;
  }

  bool compute = IsComputeOp(op.name);
  if (!compute && IsSameParamsMoveOp(op.name)) {
    const QuantParams* first = nullptr;
    auto differs = [&](const QuantParams* q) {
      if (q == nullptr) return false;
      if (first == nullptr) first = q;
      return !(*q == *first);
    };
    // The selector of a select and the indices of a gather are not quantized; any other operand or result that is
    // not quantized while another is needs the computed form too.
    for (size_t i = 0; i < in.size(); ++i) compute |= differs(in[i]);
    for (const Type& t : op.result_types) compute |= differs(QuantOf(t));
    for (const Type& t : op.result_types) compute |= first != nullptr && QuantOf(t) == nullptr;
  }
  if (!compute) return true;  // the ordinary lowering, on storage values
  *handled = true;
  if (!op.regions.empty()) {
    return OpError(op, fmt::format("'{}' with quantized operands of different parameters is not supported", op.name));
  }
  // The op on dequantized operands, under fresh names in this scope.
  Op fop = op;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (in[i] == nullptr) continue;
    Instruction* dq = Dequantize(operands[i], *in[i]);
    if (dq == nullptr) return false;
    const std::string name = NewName("quant.dequantized");
    scope_->values[name] = {dq};
    fop.operands[i] = ValueRef{name, 0, op.operands[i].pos};
    if (i < fop.operand_types.size()) fop.operand_types[i] = Expressed(fop.operand_types[i]);
  }
  for (Type& t : fop.result_types) t = Expressed(t);
  Results computed;
  if (!handler(*this, fop, &computed)) return false;
  if (computed.size() != op.result_types.size()) return OpError(op, "unexpected number of results");
  for (size_t i = 0; i < computed.size(); ++i) {
    Instruction* r = computed[i];
    if (const QuantParams* q = QuantOf(op.result_types[i]); q != nullptr) r = Quantize(r, *q);
    if (r == nullptr) return false;
    results->push_back(r);
  }
  return true;
}

}  // namespace xlac::shlo
