// Data movement, shape, linear algebra and random ops (no regions): broadcast, transpose, slice, pad, gather, dot,
// convolution, fft, ...; and the static-shape forms of the dynamic ops.
#include <algorithm>
#include <numeric>

#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

using Results = Lowerer::Results;

bool Operands(Lowerer& l, const Op& op, size_t min, size_t max, std::vector<Instruction*>* out) {
  if (op.operands.size() < min || op.operands.size() > max) {
    return l.OpError(op, min == max ? fmt::format("'{}' takes {} operand{}, but has {}", op.name, min,
                                                  min == 1 ? "" : "s", op.operands.size())
                                    : fmt::format("'{}' takes {} to {} operands, but has {}", op.name, min, max,
                                                  op.operands.size()));
  }
  return l.LookupOperands(op, out);
}

// The values of an operand that must be a constant (shape operands of the dynamic ops).
bool ConstantOperandValues(Lowerer& l, const Op& op, Instruction* inst, size_t operand_index,
                           std::vector<int64_t>* out) {
  // Shape arithmetic over constants and static dimension sizes (a refined shape-polymorphic export's) is known too.
  if (inst->opcode() != Opcode::kConstant && IsIntegralType(inst->shape().element_type)) {
    if (const Literal* value = l.FoldConstant(inst)) {
      out->clear();
      for (int64_t i = 0; i < value->element_count(); ++i) out->push_back(value->GetAsInt64(i));
      return true;
    }
  }
  if (inst->opcode() != Opcode::kConstant || !IsIntegralType(inst->shape().element_type)) {
    return l.Error(op.operands[operand_index].pos,
                   fmt::format("operand {} of '{}' must be an integer constant: dynamic shapes are not supported",
                               operand_index, op.name));
  }
  if (inst->literal().is_unknown()) {
    return l.Error(op.operands[operand_index].pos,
                   fmt::format("operand {} of '{}' must be a constant with known values, but the print elided them",
                               operand_index, op.name));
  }
  out->clear();
  for (int64_t i = 0; i < inst->literal().element_count(); ++i) out->push_back(inst->literal().GetAsInt64(i));
  return true;
}

Instruction* EmitWithDims(Lowerer& l, Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                          std::vector<int64_t> dims) {
  Instruction* inst = l.Emit(opcode, std::move(shape), std::move(operands));
  inst->SetAttr("dimensions", AttrValue::IntList(std::move(dims)));
  return inst;
}

bool LowerBroadcastInDim(Lowerer& l, const Op& op, Results* results) {
  const bool dynamic = BaseOpName(op.name) == "dynamic_broadcast_in_dim";
  std::vector<Instruction*> operands;
  std::vector<int64_t> dims;
  Shape shape;
  if (!Operands(l, op, dynamic ? 2 : 1, dynamic ? 2 : 1, &operands) ||
      !l.GetI64List(op, "broadcast_dimensions", &dims) || !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  if (dynamic && l.refining() && !l.RefineFromShapeOperand(op, 1, &shape)) return false;
  Instruction* b = l.BroadcastInDim(operands[0], shape, dims);
  if (b == nullptr) return false;
  results->push_back(b);
  return true;
}

bool LowerBroadcast(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<int64_t> sizes;
  Shape shape;
  if (!Operands(l, op, 1, 1, &operands) || !l.GetI64List(op, "broadcast_sizes", &sizes) ||
      !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  // broadcast prepends `sizes`: the operand's dims map to the trailing result dims.
  std::vector<int64_t> dims(static_cast<size_t>(operands[0]->shape().rank()));
  std::iota(dims.begin(), dims.end(), static_cast<int64_t>(sizes.size()));
  results->push_back(EmitWithDims(l, Opcode::kBroadcast, std::move(shape), operands, std::move(dims)));
  return true;
}

// transpose (permutation), reverse (dimensions): one operand and a dimension list.
bool LowerDimsOp(Lowerer& l, const Op& op, Results* results) {
  const std::string_view base = BaseOpName(op.name);
  const Opcode opcode = base == "transpose" ? Opcode::kTranspose : Opcode::kReverse;
  std::vector<Instruction*> operands;
  std::vector<int64_t> dims;
  Shape shape;
  if (!Operands(l, op, 1, 1, &operands) ||
      !l.GetI64List(op, base == "transpose" ? "permutation" : "dimensions", &dims) || !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  results->push_back(EmitWithDims(l, opcode, std::move(shape), operands, std::move(dims)));
  return true;
}

bool EmitSlice(Lowerer& l, const Op& op, Instruction* x, const std::vector<int64_t>& starts,
               const std::vector<int64_t>& limits, const std::vector<int64_t>& strides, Results* results) {
  if (starts.size() != limits.size() || starts.size() != strides.size()) {
    return l.OpError(op, "slice start, limit and stride lists must have the same length");
  }
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  std::vector<SliceRange> ranges;
  for (size_t i = 0; i < starts.size(); ++i) ranges.push_back({starts[i], limits[i], strides[i]});
  Instruction* slice = l.Emit(Opcode::kSlice, std::move(shape), {x});
  slice->SetAttr("slice", AttrValue::Of(std::move(ranges)));
  results->push_back(slice);
  return true;
}

bool LowerSlice(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<int64_t> starts, limits, strides;
  if (!Operands(l, op, 1, 1, &operands) || !l.GetI64List(op, "start_indices", &starts) ||
      !l.GetI64List(op, "limit_indices", &limits) || !l.GetI64List(op, "strides", &strides, false)) {
    return false;
  }
  if (strides.empty()) strides.assign(starts.size(), 1);
  return EmitSlice(l, op, operands[0], starts, limits, strides, results);
}

bool LowerRealDynamicSlice(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<int64_t> starts, limits, strides;
  if (!Operands(l, op, 4, 4, &operands) || !ConstantOperandValues(l, op, operands[1], 1, &starts) ||
      !ConstantOperandValues(l, op, operands[2], 2, &limits) ||
      !ConstantOperandValues(l, op, operands[3], 3, &strides)) {
    return false;
  }
  return EmitSlice(l, op, operands[0], starts, limits, strides, results);
}

bool LowerDynamicSlice(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<int64_t> sizes;
  Shape shape;
  if (!Operands(l, op, 1, 1 << 20, &operands) || !l.GetI64List(op, "slice_sizes", &sizes) ||
      !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  Instruction* ds = l.Emit(Opcode::kDynamicSlice, std::move(shape), std::move(operands));
  ds->SetAttr("dynamic_slice_sizes", AttrValue::IntList(std::move(sizes)));
  results->push_back(ds);
  return true;
}

bool LowerDynamicUpdateSlice(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  Shape shape;
  if (!Operands(l, op, 2, 1 << 20, &operands) || !l.ResultShape(op, 0, &shape)) return false;
  results->push_back(l.Emit(Opcode::kDynamicUpdateSlice, std::move(shape), std::move(operands)));
  return true;
}

bool LowerConcatenate(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  int64_t dim;
  Shape shape;
  if (!Operands(l, op, 1, 1 << 20, &operands) || !l.GetInt(op, "dimension", &dim) || !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  results->push_back(EmitWithDims(l, Opcode::kConcatenate, std::move(shape), std::move(operands), {dim}));
  return true;
}

bool EmitPad(Lowerer& l, const Op& op, Instruction* x, Instruction* value, const std::vector<int64_t>& low,
             const std::vector<int64_t>& high, const std::vector<int64_t>& interior, Results* results) {
  if (low.size() != high.size() || low.size() != interior.size()) {
    return l.OpError(op, "the padding lists must have the same length");
  }
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  PaddingConfig config;
  for (size_t i = 0; i < low.size(); ++i) config.dimensions.push_back({low[i], high[i], interior[i]});
  Instruction* pad = l.Emit(Opcode::kPad, std::move(shape), {x, value});
  pad->SetAttr("padding", AttrValue::Of(std::move(config)));
  results->push_back(pad);
  return true;
}

bool LowerPad(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<int64_t> low, high, interior;
  if (!Operands(l, op, 2, 2, &operands) || !l.GetI64List(op, "edge_padding_low", &low) ||
      !l.GetI64List(op, "edge_padding_high", &high) || !l.GetI64List(op, "interior_padding", &interior)) {
    return false;
  }
  return EmitPad(l, op, operands[0], operands[1], low, high, interior, results);
}

bool LowerDynamicPad(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<int64_t> low, high, interior;
  if (!Operands(l, op, 5, 5, &operands) || !ConstantOperandValues(l, op, operands[2], 2, &low) ||
      !ConstantOperandValues(l, op, operands[3], 3, &high) ||
      !ConstantOperandValues(l, op, operands[4], 4, &interior)) {
    return false;
  }
  return EmitPad(l, op, operands[0], operands[1], low, high, interior, results);
}

bool LowerDynamicReshape(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  Shape shape;
  if (!Operands(l, op, 2, 2, &operands) || !l.ResultShape(op, 0, &shape)) return false;
  if (l.refining() && !l.RefineFromShapeOperand(op, 1, &shape)) return false;
  results->push_back(l.Emit(Opcode::kReshape, std::move(shape), {operands[0]}));
  return true;
}

bool LowerGetDimensionSize(Lowerer& l, const Op& op, Results* results) {
  const bool set = BaseOpName(op.name) == "set_dimension_size";
  std::vector<Instruction*> operands;
  int64_t dim;
  Shape shape;
  if (!Operands(l, op, set ? 2 : 1, set ? 2 : 1, &operands) || !l.GetInt(op, "dimension", &dim) ||
      !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  // A refined module's sizes are static: what XLA's dynamic padder makes of get-dimension-size.
  const Shape& in = operands[0]->shape();
  if (!set && l.refining() && in.IsArray() && dim >= 0 && dim < in.rank() && !in.dynamic_dimensions[dim] &&
      shape.IsArray() && shape.rank() == 0 && IsIntegralType(shape.element_type)) {
    Literal size(shape);
    size.SetFromInt64(0, in.dimensions[dim]);
    results->push_back(l.EmitConstant(std::move(size)));
    return true;
  }
  results->push_back(EmitWithDims(l, set ? Opcode::kSetDimensionSize : Opcode::kGetDimensionSize, std::move(shape),
                                  std::move(operands), {dim}));
  return true;
}

bool LowerTuple(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  if (!l.LookupOperands(op, &operands)) return false;
  results->push_back(l.EmitTuple(std::move(operands)));
  return true;
}

bool LowerGetTupleElement(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  int64_t index;
  if (!Operands(l, op, 1, 1, &operands) || !l.GetInt(op, "index", &index)) return false;
  const Shape& tuple = operands[0]->shape();
  if (!tuple.IsTuple()) return l.OpError(op, "get_tuple_element needs a tuple operand");
  if (index < 0 || index >= static_cast<int64_t>(tuple.tuple_shapes.size())) {
    return l.OpError(
        op, fmt::format("tuple index {} is out of range for a tuple of {} elements", index, tuple.tuple_shapes.size()));
  }
  results->push_back(l.EmitGte(operands[0], index));
  return true;
}

bool LowerOptimizationBarrier(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  if (!l.LookupOperands(op, &operands)) return false;
  const int64_t n = static_cast<int64_t>(operands.size());
  Instruction* tuple = l.EmitTuple(std::move(operands));
  Instruction* barrier = l.Emit(Opcode::kOptimizationBarrier, tuple->shape(), {tuple});
  *results = l.SplitTuple(barrier, n);
  return true;
}

bool LowerAfterAll(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  if (!l.LookupOperands(op, &operands)) return false;
  results->push_back(l.Emit(Opcode::kAfterAll, Shape::Token(), std::move(operands)));
  return true;
}

bool LowerNullary(Lowerer& l, const Op& op, Results* results) {
  const Opcode opcode = BaseOpName(op.name) == "partition_id" ? Opcode::kPartitionId : Opcode::kReplicaId;
  std::vector<Instruction*> operands;
  Shape shape;
  if (!Operands(l, op, 0, 0, &operands) || !l.ResultShape(op, 0, &shape)) return false;
  results->push_back(l.Emit(opcode, std::move(shape), {}));
  return true;
}

bool LowerReducePrecision(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  int64_t exponent, mantissa;
  Shape shape;
  if (!Operands(l, op, 1, 1, &operands) || !l.GetInt(op, "exponent_bits", &exponent) ||
      !l.GetInt(op, "mantissa_bits", &mantissa) || !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  Instruction* rp = l.Emit(Opcode::kReducePrecision, std::move(shape), operands);
  rp->SetAttr("exponent_bits", AttrValue::Int(exponent));
  rp->SetAttr("mantissa_bits", AttrValue::Int(mantissa));
  results->push_back(rp);
  return true;
}

bool LowerFft(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::string type;
  std::vector<int64_t> length;
  Shape shape;
  if (!Operands(l, op, 1, 1, &operands) || !l.GetEnum(op, "fft_type", &type) ||
      !l.GetI64List(op, "fft_length", &length) || !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  if (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT") {
    return l.Error(l.FindAttr(op, "fft_type")->pos, fmt::format("unknown fft type {}", type));
  }
  Instruction* fft = l.Emit(Opcode::kFft, std::move(shape), operands);
  fft->SetAttr("fft_type", AttrValue::Enum(type));
  fft->SetAttr("fft_length", AttrValue::IntList(std::move(length)));
  results->push_back(fft);
  return true;
}

bool LowerTriangularSolve(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  bool left_side, lower, unit_diagonal;
  std::string transpose;
  Shape shape;
  if (!Operands(l, op, 2, 2, &operands) || !l.GetBool(op, "left_side", &left_side) || !l.GetBool(op, "lower", &lower) ||
      !l.GetBool(op, "unit_diagonal", &unit_diagonal) || !l.GetEnum(op, "transpose_a", &transpose, "NO_TRANSPOSE") ||
      !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  if (transpose != "NO_TRANSPOSE" && transpose != "TRANSPOSE" && transpose != "ADJOINT") {
    return l.Error(l.FindAttr(op, "transpose_a")->pos, fmt::format("unknown transpose kind {}", transpose));
  }
  Instruction* ts = l.Emit(Opcode::kTriangularSolve, std::move(shape), operands);
  ts->SetAttr("left_side", AttrValue::Bool(left_side));
  ts->SetAttr("lower", AttrValue::Bool(lower));
  ts->SetAttr("unit_diagonal", AttrValue::Bool(unit_diagonal));
  ts->SetAttr("transpose_a", AttrValue::Enum(transpose));
  results->push_back(ts);
  return true;
}

bool LowerCholesky(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  bool lower;
  Shape shape;
  if (!Operands(l, op, 1, 1, &operands) || !l.GetBool(op, "lower", &lower) || !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  Instruction* c = l.Emit(Opcode::kCholesky, std::move(shape), operands);
  c->SetAttr("lower", AttrValue::Bool(lower));
  results->push_back(c);
  return true;
}

bool LowerRng(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::string distribution;
  Shape shape;
  if (!Operands(l, op, 3, 3, &operands) || !l.GetEnum(op, "rng_distribution", &distribution) ||
      !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  if (distribution != "UNIFORM" && distribution != "NORMAL") {
    return l.Error(l.FindAttr(op, "rng_distribution")->pos, fmt::format("unknown distribution {}", distribution));
  }
  // The shape operand only repeats the static result shape.
  Instruction* rng = l.Emit(Opcode::kRng, std::move(shape), {operands[0], operands[1]});
  rng->SetAttr("distribution", AttrValue::Enum(distribution == "UNIFORM" ? "rng_uniform" : "rng_normal"));
  results->push_back(rng);
  return true;
}

bool LowerRngBitGenerator(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::string algorithm;
  std::vector<Shape> shapes;
  if (!Operands(l, op, 1, 1, &operands) || !l.GetEnum(op, "rng_algorithm", &algorithm, "DEFAULT") ||
      !l.ResultShapes(op, &shapes)) {
    return false;
  }
  if (shapes.size() != 2) return l.OpError(op, "rng_bit_generator has two results (state, output)");
  std::string hlo_algorithm = algorithm == "DEFAULT"     ? "rng_default"
                              : algorithm == "THREE_FRY" ? "rng_three_fry"
                              : algorithm == "PHILOX"    ? "rng_philox"
                                                         : "";
  if (hlo_algorithm.empty()) {
    return l.Error(l.FindAttr(op, "rng_algorithm")->pos, fmt::format("unknown rng algorithm {}", algorithm));
  }
  Instruction* rng = l.Emit(Opcode::kRngBitGenerator, Shape::Tuple(shapes), operands);
  rng->SetAttr("algorithm", AttrValue::Enum(hlo_algorithm));
  *results = l.SplitTuple(rng, 2);
  return true;
}

std::string TypeSpelling(const Attr* a) {
  if (a == nullptr) return "";
  if (a->kind == Attr::Kind::kType && a->type.has_value()) return a->type->text;
  if (a->kind == Attr::Kind::kKeyword || a->kind == Attr::Kind::kString) return a->str;
  return "";
}

// #stablehlo.dot_algorithm<...> -> XLA's PrecisionConfig::Algorithm spelling.
bool DotAlgorithm(Lowerer& l, const Attr& attr, std::string* out) {
  const std::string lhs = TypeSpelling(attr.Find("lhs_precision_type"));
  const std::string rhs = TypeSpelling(attr.Find("rhs_precision_type"));
  const std::string acc = TypeSpelling(attr.Find("accumulation_type"));
  int64_t ops = 1;
  if (!l.DictInt(attr, "num_primitive_operations", &ops, 1)) return false;
  const Attr* imprecise = attr.Find("allow_imprecise_accumulation");
  const bool fast = imprecise != nullptr && imprecise->kind == Attr::Kind::kBool && imprecise->bool_value;
  auto is_f8 = [](const std::string& t) { return t.rfind("f8", 0) == 0; };
  if (is_f8(lhs) && is_f8(rhs) && acc == "f32") {
    *out = fast ? "dot_any_f8_any_f8_f32_fast_accum" : "dot_any_f8_any_f8_f32";
    return true;
  }
  if (lhs == rhs && (lhs == "f16" || lhs == "bf16" || lhs == "tf32" || lhs == "f32" || lhs == "f64")) {
    std::string name = fmt::format("dot_{}_{}_{}", lhs, rhs, acc);
    if (ops > 1) name += fmt::format("_x{}", ops);
    static const char* kKnown[] = {"dot_f16_f16_f16",      "dot_f16_f16_f32",      "dot_bf16_bf16_bf16",
                                   "dot_bf16_bf16_f32",    "dot_bf16_bf16_f32_x3", "dot_bf16_bf16_f32_x6",
                                   "dot_bf16_bf16_f32_x9", "dot_tf32_tf32_f32",    "dot_tf32_tf32_f32_x3",
                                   "dot_f32_f32_f32",      "dot_f64_f64_f64"};
    if (std::find(std::begin(kKnown), std::end(kKnown), name) != std::end(kKnown)) {
      *out = name;
      return true;
    }
  }
  return l.Error(attr.pos, "unsupported dot algorithm: HLO has no matching PrecisionConfig algorithm");
}

bool LowerDot(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  Shape shape;
  std::vector<std::string> precision;
  if (!Operands(l, op, 2, 2, &operands) || !l.ResultShape(op, 0, &shape) || !l.GetPrecisionConfig(op, &precision)) {
    return false;
  }
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  if (BaseOpName(op.name) == "dot") {
    // dot: matrix/vector products contract lhs's last dim with rhs's first.
    lhs_contracting = {std::max<int64_t>(operands[0]->shape().rank() - 1, 0)};
    rhs_contracting = {0};
  } else {
    const Attr* dnums;
    if (!l.RequireAttr(op, "dot_dimension_numbers", &dnums)) return false;
    if (dnums->kind != Attr::Kind::kDict)
      return l.Error(dnums->pos, "dot_dimension_numbers must be #stablehlo.dot<...>");
    if (!l.DictI64List(*dnums, "lhs_batching_dimensions", &lhs_batch) ||
        !l.DictI64List(*dnums, "rhs_batching_dimensions", &rhs_batch) ||
        !l.DictI64List(*dnums, "lhs_contracting_dimensions", &lhs_contracting) ||
        !l.DictI64List(*dnums, "rhs_contracting_dimensions", &rhs_contracting)) {
      return false;
    }
  }
  Instruction* dot = l.Emit(Opcode::kDot, std::move(shape), operands);
  dot->SetAttr("lhs_batch_dims", AttrValue::IntList(std::move(lhs_batch)));
  dot->SetAttr("rhs_batch_dims", AttrValue::IntList(std::move(rhs_batch)));
  dot->SetAttr("lhs_contracting_dims", AttrValue::IntList(std::move(lhs_contracting)));
  dot->SetAttr("rhs_contracting_dims", AttrValue::IntList(std::move(rhs_contracting)));
  if (!precision.empty()) dot->SetAttr("operand_precision", AttrValue::EnumList(std::move(precision)));
  if (const Attr* algorithm = l.FindAttr(op, "algorithm")) {
    std::string name;
    if (algorithm->kind != Attr::Kind::kDict || !DotAlgorithm(l, *algorithm, &name)) {
      return algorithm->kind != Attr::Kind::kDict ? l.Error(algorithm->pos, "invalid dot algorithm") : false;
    }
    dot->SetAttr("algorithm", AttrValue::Enum(name));
  }
  results->push_back(dot);
  return true;
}

// Convolution dimension numbers from #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]> or the raw form.
bool ConvDnums(Lowerer& l, const Attr& attr, ConvolutionDimensionNumbers* out) {
  if (attr.kind == Attr::Kind::kDict) {
    return l.DictInt(attr, "input_batch_dimension", &out->input_batch_dimension, 0) &&
           l.DictInt(attr, "input_feature_dimension", &out->input_feature_dimension, 0) &&
           l.DictI64List(attr, "input_spatial_dimensions", &out->input_spatial_dimensions) &&
           l.DictInt(attr, "kernel_input_feature_dimension", &out->kernel_input_feature_dimension, 0) &&
           l.DictInt(attr, "kernel_output_feature_dimension", &out->kernel_output_feature_dimension, 0) &&
           l.DictI64List(attr, "kernel_spatial_dimensions", &out->kernel_spatial_dimensions) &&
           l.DictInt(attr, "output_batch_dimension", &out->output_batch_dimension, 0) &&
           l.DictInt(attr, "output_feature_dimension", &out->output_feature_dimension, 0) &&
           l.DictI64List(attr, "output_spatial_dimensions", &out->output_spatial_dimensions);
  }
  if (attr.kind != Attr::Kind::kConvDims) return l.Error(attr.pos, "expected convolution dimension numbers");
  static const char* kParts[] = {"input", "kernel", "output"};
  static const char kFirst[] = {'b', 'i', 'b'};
  static const char kSecond[] = {'f', 'o', 'f'};
  int64_t* first[] = {&out->input_batch_dimension, &out->kernel_input_feature_dimension, &out->output_batch_dimension};
  int64_t* second[] = {&out->input_feature_dimension, &out->kernel_output_feature_dimension,
                       &out->output_feature_dimension};
  std::vector<int64_t>* spatial[] = {&out->input_spatial_dimensions, &out->kernel_spatial_dimensions,
                                     &out->output_spatial_dimensions};
  size_t num_spatial = 0;
  for (int part = 0; part < 3; ++part) {
    const std::vector<int64_t>& labels = attr.conv_labels[static_cast<size_t>(part)];
    const size_t n = labels.size() >= 2 ? labels.size() - 2 : 0;
    if (part == 0) num_spatial = n;
    if (labels.size() < 2 || n != num_spatial) {
      return l.Error(attr.pos, fmt::format("{} dimension labels must name the two {}/{} dimensions and the same "
                                           "spatial dimensions as the input",
                                           kParts[part], kFirst[part], kSecond[part]));
    }
    spatial[part]->assign(n, -1);
    bool seen_first = false, seen_second = false;
    for (size_t pos = 0; pos < labels.size(); ++pos) {
      const int64_t label = labels[pos];
      bool duplicate = false;
      if (label == kFirst[part]) {
        duplicate = seen_first;
        seen_first = true;
        *first[part] = static_cast<int64_t>(pos);
      } else if (label == kSecond[part]) {
        duplicate = seen_second;
        seen_second = true;
        *second[part] = static_cast<int64_t>(pos);
      } else if (label < 0 && static_cast<size_t>(-1 - label) < n) {
        int64_t& slot = (*spatial[part])[static_cast<size_t>(-1 - label)];
        duplicate = slot != -1;
        slot = static_cast<int64_t>(pos);
      } else {
        return l.Error(attr.pos, fmt::format("invalid label in the {} dimension labels", kParts[part]));
      }
      if (duplicate) return l.Error(attr.pos, fmt::format("repeated label in the {} dimension labels", kParts[part]));
    }
    if (!seen_first || !seen_second) {
      return l.Error(attr.pos, fmt::format("{} dimension labels must contain '{}' and '{}'", kParts[part], kFirst[part],
                                           kSecond[part]));
    }
  }
  return true;
}

bool LowerConvolution(Lowerer& l, const Op& op, Results* results) {
  const bool dynamic = BaseOpName(op.name) == "dynamic_conv";
  std::vector<Instruction*> operands;
  Shape shape;
  const Attr* dnums_attr;
  if (!Operands(l, op, dynamic ? 3 : 2, dynamic ? 3 : 2, &operands) || !l.ResultShape(op, 0, &shape) ||
      !l.RequireAttr(op, "dimension_numbers", &dnums_attr)) {
    return false;
  }
  ConvolutionDimensionNumbers dnums;
  if (!ConvDnums(l, *dnums_attr, &dnums)) return false;
  const size_t n = dnums.kernel_spatial_dimensions.size();
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<bool> reversal;
  if (!l.GetI64List(op, "window_strides", &strides, false) || !l.GetI64List(op, "lhs_dilation", &lhs_dilation, false) ||
      !l.GetI64List(op, "rhs_dilation", &rhs_dilation, false) || !l.GetBoolList(op, "window_reversal", &reversal)) {
    return false;
  }
  if (dynamic) {
    std::vector<int64_t> flat;
    if (!ConstantOperandValues(l, op, operands[2], 2, &flat)) return false;
    for (size_t i = 0; i + 1 < flat.size(); i += 2) padding.emplace_back(flat[i], flat[i + 1]);
  } else if (!l.GetI64Pairs(op, "padding", &padding)) {
    return false;
  }
  auto check_len = [&](size_t size, std::string_view what) {
    return size == 0 || size == n ||
           l.OpError(op,
                     fmt::format("{} has {} entries, but the convolution has {} spatial dimensions", what, size, n));
  };
  if (!check_len(strides.size(), "window_strides") || !check_len(lhs_dilation.size(), "lhs_dilation") ||
      !check_len(rhs_dilation.size(), "rhs_dilation") || !check_len(padding.size(), "padding") ||
      !check_len(reversal.size(), "window_reversal")) {
    return false;
  }
  const Shape& kernel = operands[1]->shape();
  Window window;
  for (size_t i = 0; i < n; ++i) {
    WindowDimension wd;
    const int64_t kd = dnums.kernel_spatial_dimensions[i];
    if (kd < 0 || kd >= kernel.rank()) return l.OpError(op, "kernel spatial dimension out of range");
    wd.size = kernel.dimensions[static_cast<size_t>(kd)];
    if (!strides.empty()) wd.stride = strides[i];
    if (!padding.empty()) {
      wd.padding_low = padding[i].first;
      wd.padding_high = padding[i].second;
    }
    if (!lhs_dilation.empty()) wd.base_dilation = lhs_dilation[i];
    if (!rhs_dilation.empty()) wd.window_dilation = rhs_dilation[i];
    if (!reversal.empty()) wd.window_reversal = reversal[i];
    window.dimensions.push_back(wd);
  }
  int64_t feature_groups, batch_groups;
  std::vector<std::string> precision;
  if (!l.GetInt(op, "feature_group_count", &feature_groups, 1) ||
      !l.GetInt(op, "batch_group_count", &batch_groups, 1) || !l.GetPrecisionConfig(op, &precision)) {
    return false;
  }
  Instruction* conv = l.Emit(Opcode::kConvolution, std::move(shape), {operands[0], operands[1]});
  conv->SetAttr("window", AttrValue::Of(std::move(window)));
  conv->SetAttr("dim_labels", AttrValue::Of(std::move(dnums)));
  conv->SetAttr("feature_group_count", AttrValue::Int(feature_groups));
  conv->SetAttr("batch_group_count", AttrValue::Int(batch_groups));
  if (!precision.empty()) conv->SetAttr("operand_precision", AttrValue::EnumList(std::move(precision)));
  results->push_back(conv);
  return true;
}

bool LowerGather(Lowerer& l, const Op& op, Results* results) {
  const bool dynamic = BaseOpName(op.name) == "dynamic_gather";
  std::vector<Instruction*> operands;
  Shape shape;
  const Attr* dnums;
  if (!Operands(l, op, dynamic ? 3 : 2, dynamic ? 3 : 2, &operands) || !l.ResultShape(op, 0, &shape) ||
      !l.RequireAttr(op, "dimension_numbers", &dnums)) {
    return false;
  }
  if (dnums->kind != Attr::Kind::kDict) return l.Error(dnums->pos, "dimension_numbers must be #stablehlo.gather<...>");
  std::vector<int64_t> offset_dims, collapsed, operand_batching, indices_batching, start_index_map, slice_sizes;
  int64_t index_vector_dim;
  bool sorted;
  if (!l.DictI64List(*dnums, "offset_dims", &offset_dims) ||
      !l.DictI64List(*dnums, "collapsed_slice_dims", &collapsed) ||
      !l.DictI64List(*dnums, "operand_batching_dims", &operand_batching) ||
      !l.DictI64List(*dnums, "start_indices_batching_dims", &indices_batching) ||
      !l.DictI64List(*dnums, "start_index_map", &start_index_map) ||
      !l.DictInt(*dnums, "index_vector_dim", &index_vector_dim, 0) || !l.GetBool(op, "indices_are_sorted", &sorted)) {
    return false;
  }
  if (dynamic ? !ConstantOperandValues(l, op, operands[2], 2, &slice_sizes)
              : !l.GetI64List(op, "slice_sizes", &slice_sizes)) {
    return false;
  }
  Instruction* gather = l.Emit(Opcode::kGather, std::move(shape), {operands[0], operands[1]});
  gather->SetAttr("offset_dims", AttrValue::IntList(std::move(offset_dims)));
  gather->SetAttr("collapsed_slice_dims", AttrValue::IntList(std::move(collapsed)));
  gather->SetAttr("start_index_map", AttrValue::IntList(std::move(start_index_map)));
  gather->SetAttr("index_vector_dim", AttrValue::Int(index_vector_dim));
  gather->SetAttr("slice_sizes", AttrValue::IntList(std::move(slice_sizes)));
  gather->SetAttr("indices_are_sorted", AttrValue::Bool(sorted));
  if (!operand_batching.empty() || !indices_batching.empty()) {
    gather->SetAttr("operand_batching_dims", AttrValue::IntList(std::move(operand_batching)));
    gather->SetAttr("start_indices_batching_dims", AttrValue::IntList(std::move(indices_batching)));
  }
  results->push_back(gather);
  return true;
}

bool LowerBatchNorm(Lowerer& l, const Op& op, Results* results) {
  const std::string_view base = BaseOpName(op.name);
  const Opcode opcode = base == "batch_norm_training"    ? Opcode::kBatchNormTraining
                        : base == "batch_norm_inference" ? Opcode::kBatchNormInference
                                                         : Opcode::kBatchNormGrad;
  const size_t arity = static_cast<size_t>(*OpcodeArity(opcode));
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  int64_t feature_index;
  const Attr* epsilon;
  if (!Operands(l, op, arity, arity, &operands) || !l.ResultShapes(op, &shapes) ||
      !l.GetInt(op, "feature_index", &feature_index) || !l.RequireAttr(op, "epsilon", &epsilon)) {
    return false;
  }
  if (epsilon->kind != Attr::Kind::kFloat && epsilon->kind != Attr::Kind::kInt) {
    return l.Error(epsilon->pos, "epsilon must be a number");
  }
  const bool tupled = opcode != Opcode::kBatchNormInference;
  if (shapes.size() != (tupled ? 3u : 1u)) return l.OpError(op, "unexpected number of results");
  Instruction* bn = l.Emit(opcode, tupled ? Shape::Tuple(shapes) : shapes[0], std::move(operands));
  bn->SetAttr("epsilon", AttrValue::Float(epsilon->float_value));
  bn->SetAttr("feature_index", AttrValue::Int(feature_index));
  if (tupled) {
    *results = l.SplitTuple(bn, 3);
  } else {
    results->push_back(bn);
  }
  return true;
}

bool LowerQuantized(Lowerer& l, const Op& op, Results*) {
  return l.OpError(op, fmt::format("unsupported op '{}': quantized types are not supported", op.name));
}

}  // namespace

void RegisterDataOps(OpTable* table) {
  OpTable& t = *table;
  t["stablehlo.broadcast_in_dim"] = &LowerBroadcastInDim;
  t["stablehlo.dynamic_broadcast_in_dim"] = &LowerBroadcastInDim;
  t["stablehlo.broadcast"] = &LowerBroadcast;
  t["stablehlo.transpose"] = &LowerDimsOp;
  t["stablehlo.reverse"] = &LowerDimsOp;
  t["stablehlo.slice"] = &LowerSlice;
  t["stablehlo.real_dynamic_slice"] = &LowerRealDynamicSlice;
  t["stablehlo.dynamic_slice"] = &LowerDynamicSlice;
  t["stablehlo.dynamic_update_slice"] = &LowerDynamicUpdateSlice;
  t["stablehlo.concatenate"] = &LowerConcatenate;
  t["stablehlo.pad"] = &LowerPad;
  t["stablehlo.dynamic_pad"] = &LowerDynamicPad;
  t["stablehlo.dynamic_reshape"] = &LowerDynamicReshape;
  t["stablehlo.get_dimension_size"] = &LowerGetDimensionSize;
  t["stablehlo.set_dimension_size"] = &LowerGetDimensionSize;
  t["stablehlo.tuple"] = &LowerTuple;
  t["stablehlo.get_tuple_element"] = &LowerGetTupleElement;
  t["stablehlo.optimization_barrier"] = &LowerOptimizationBarrier;
  t["stablehlo.after_all"] = &LowerAfterAll;
  t["stablehlo.create_token"] = &LowerAfterAll;
  t["stablehlo.partition_id"] = &LowerNullary;
  t["stablehlo.replica_id"] = &LowerNullary;
  t["stablehlo.reduce_precision"] = &LowerReducePrecision;
  t["stablehlo.fft"] = &LowerFft;
  t["stablehlo.triangular_solve"] = &LowerTriangularSolve;
  t["stablehlo.cholesky"] = &LowerCholesky;
  t["stablehlo.rng"] = &LowerRng;
  t["stablehlo.rng_bit_generator"] = &LowerRngBitGenerator;
  t["stablehlo.dot"] = &LowerDot;
  t["stablehlo.dot_general"] = &LowerDot;
  t["stablehlo.convolution"] = &LowerConvolution;
  t["stablehlo.dynamic_conv"] = &LowerConvolution;
  t["stablehlo.gather"] = &LowerGather;
  t["stablehlo.dynamic_gather"] = &LowerGather;
  t["stablehlo.batch_norm_training"] = &LowerBatchNorm;
  t["stablehlo.batch_norm_inference"] = &LowerBatchNorm;
  t["stablehlo.batch_norm_grad"] = &LowerBatchNorm;
  t["stablehlo.uniform_quantize"] = &LowerQuantized;
  t["stablehlo.uniform_dequantize"] = &LowerQuantized;
}

}  // namespace xlac::shlo
