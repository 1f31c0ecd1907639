#include "passes/library_custom_calls.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/decomposition_calls.h"
#include "ir/primitive_type.h"
#include "ir/status_macros.h"
#include "passes/replace_call.h"

namespace xlac {
namespace {

// The message; the call's location goes with it (Run's `error_at`).
absl::Status CallError(const Instruction& call, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("custom-call %{} (target \"{}\"): {}", call.name(),
                                                std::string(call.StringAttr("custom_call_target")), why));
}

// `key = 3 : i64` (or `key = true`) in the call's backend_config (an MLIR dictionary), as an integer.
std::optional<int64_t> ConfigInt(const Instruction& call, std::string_view key) {
  const std::string& config = call.backend_config();
  for (size_t at = config.find(key); at != std::string::npos; at = config.find(key, at + 1)) {
    const bool starts = at == 0 || config[at - 1] == '{' || config[at - 1] == ' ' || config[at - 1] == ',';
    size_t i = at + key.size();
    while (i < config.size() && config[i] == ' ') ++i;
    if (!starts || i >= config.size() || config[i] != '=') continue;
    ++i;
    while (i < config.size() && config[i] == ' ') ++i;
    if (config.compare(i, 4, "true") == 0) return 1;
    if (config.compare(i, 5, "false") == 0) return 0;
    const bool negative = i < config.size() && config[i] == '-';
    if (negative) ++i;
    int64_t value = 0;
    size_t digits = 0;
    for (; i < config.size() && config[i] >= '0' && config[i] <= '9' && digits < 18; ++i, ++digits) {
      value = value * 10 + (config[i] - '0');
    }
    if (digits == 0) return std::nullopt;
    return negative ? -value : value;
  }
  return std::nullopt;
}

// `key = 76 : ui8` in the call's backend_config, as a character.
std::optional<char> Flag(const Instruction& call, std::string_view key) {
  const std::optional<int64_t> value = ConfigInt(call, key);
  if (!value || *value <= 0 || *value > 127) return std::nullopt;
  return static_cast<char>(*value);
}

bool IsLapackTarget(std::string_view target, std::string_view routine) {
  // lapack_{s,d,c,z}<routine>_ffi
  return target.size() == routine.size() + 12 && target.substr(0, 7) == "lapack_" &&
         std::string_view("sdcz").find(target[7]) != std::string_view::npos &&
         target.substr(8, routine.size()) == routine && target.substr(8 + routine.size()) == "_ffi";
}

// blas_{s,d,c,z}trsm_ffi: jaxlib's name for the same call since late 2024.
bool IsBlasTrsm(std::string_view target) {
  return target.size() == 14 && target.substr(0, 5) == "blas_" &&
         std::string_view("sdcz").find(target[5]) != std::string_view::npos && target.substr(6) == "trsm_ffi";
}

class Builder {
 public:
  Builder(Module& module, Computation& comp, const Instruction& at) : module_(module), comp_(comp), at_(at) {}

  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands) {
    auto inst = Instruction::Create(op, module_.UniqueInstructionName(std::string(OpcodeName(op))), std::move(shape),
                                    std::move(operands));
    inst->set_loc(at_.loc());
    *inst->mutable_metadata() = at_.metadata();
    return comp_.AddInstruction(std::move(inst));
  }

  // pred[dims] with row >= column (lower) or row <= column in the last two dimensions.
  Instruction* TriangleMask(const Shape& like, bool lower) {
    Shape pred = like;
    pred.element_type = PrimitiveType::kPred;
    pred.layout.reset();
    Shape index = pred;
    index.element_type = PrimitiveType::kS32;
    const int64_t rank = like.rank();
    Instruction* row = Add(Opcode::kIota, index, {});
    row->SetAttr("iota_dimension", AttrValue::Int(rank - 2));
    Instruction* column = Add(Opcode::kIota, index, {});
    column->SetAttr("iota_dimension", AttrValue::Int(rank - 1));
    Instruction* mask = Add(Opcode::kCompare, pred, {row, column});
    mask->SetAttr("direction", AttrValue::Enum(lower ? "GE" : "LE"));
    return mask;
  }

  // An array of `shape` (no layout) filled with zeros: outputs the rewritten call has no use for (LAPACK workspaces,
  // an info that is always 0).
  Instruction* Zeros(const Shape& shape) {
    Shape plain = shape;
    plain.layout.reset();
    Instruction* zero = Add(Opcode::kConstant, Shape::Scalar(plain.element_type), {});
    zero->set_literal(Literal(Shape::Scalar(plain.element_type)));
    Instruction* out = Add(Opcode::kBroadcast, plain, {zero});
    out->SetAttr("dimensions", AttrValue::IntList({}));
    return out;
  }

  // x + 1 for an s32 array (0-based LAPACK pivots to 1-based).
  Instruction* PlusOne(Instruction* x) {
    Instruction* one = Add(Opcode::kConstant, Shape::Scalar(PrimitiveType::kS32), {});
    Literal value(Shape::Scalar(PrimitiveType::kS32));
    *reinterpret_cast<int32_t*>(value.mutable_raw_data()) = 1;
    one->set_literal(std::move(value));
    Shape plain = x->shape();
    plain.layout.reset();
    Instruction* ones = Add(Opcode::kBroadcast, plain, {one});
    ones->SetAttr("dimensions", AttrValue::IntList({}));
    return Add(Opcode::kAdd, plain, {x, ones});
  }

  // x in `shape`'s layout (a copy when the call's result asks for another one, as LAPACK calls ask column-major).
  Instruction* As(Instruction* x, const Shape& shape) {
    auto layout = [](const Shape& s) { return s.layout.has_value() ? *s.layout : Layout::Default(s.rank()); };
    if (!shape.layout.has_value() || layout(x->shape()) == layout(shape)) return x;
    return Add(Opcode::kCopy, shape, {x});
  }

  Instruction* Element(Instruction* tuple, int64_t index) {
    Instruction* gte = Add(Opcode::kGetTupleElement, tuple->shape().tuple_shapes[static_cast<size_t>(index)], {tuple});
    gte->SetAttr("index", AttrValue::Int(index));
    return gte;
  }

  // A decomposition custom call (ir/decomposition_calls.h) of `target` with results `results` (a tuple unless one).
  Instruction* Decomposition(std::string_view target, std::vector<Instruction*> operands, std::vector<Shape> results,
                             std::string backend_config = "") {
    for (Shape& r : results) r.layout.reset();
    Shape shape = results.size() == 1 ? results[0] : Shape::Tuple(std::move(results));
    Instruction* call = Add(Opcode::kCustomCall, std::move(shape), std::move(operands));
    call->SetAttr("custom_call_target", AttrValue::String(std::string(target)));
    call->set_backend_config(std::move(backend_config));
    return call;
  }

  // s32[batch] info: 1 where any element of x (rank >= 2) is NaN, else 0.
  Instruction* NanInfo(Instruction* x, const Shape& info_shape) {
    Shape pred = x->shape();
    pred.element_type = PrimitiveType::kPred;
    pred.layout.reset();
    Instruction* nan = Add(Opcode::kCompare, pred, {x, x});
    nan->SetAttr("direction", AttrValue::Enum("NE"));
    Instruction* none = Add(Opcode::kConstant, Shape::Scalar(PrimitiveType::kPred), {});
    none->set_literal(Literal(Shape::Scalar(PrimitiveType::kPred)));
    Shape any = info_shape;
    any.element_type = PrimitiveType::kPred;
    any.layout.reset();
    Instruction* reduce = Add(Opcode::kReduce, any, {nan, none});
    reduce->SetAttr("dimensions", AttrValue::IntList({x->shape().rank() - 2, x->shape().rank() - 1}));
    reduce->set_called_computations({Or()});
    return Add(Opcode::kConvert, info_shape, {reduce});
  }

 private:
  Computation* Or() {
    auto comp = std::make_unique<Computation>(module_.UniqueComputationName("or"));
    const Shape scalar = Shape::Scalar(PrimitiveType::kPred);
    Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, module_.UniqueInstructionName("a"), scalar));
    Instruction* b = comp->AddInstruction(Instruction::CreateParameter(1, module_.UniqueInstructionName("b"), scalar));
    Instruction* o =
        comp->AddInstruction(Instruction::Create(Opcode::kOr, module_.UniqueInstructionName("or"), scalar, {a, b}));
    comp->set_root(o);
    return module_.AddComputation(std::move(comp));
  }

  Module& module_;
  Computation& comp_;
  const Instruction& at_;
};

bool IsSquareMatrixBatch(const Shape& s) {
  return s.IsArray() && s.rank() >= 2 && s.dimensions[s.rank() - 1] == s.dimensions[s.rank() - 2];
}

absl::StatusOr<Instruction*> Potrf(Module& module, Computation& comp, Instruction* call) {
  const Shape& a = call->operand_count() == 1 ? call->operand(0)->shape() : call->shape();
  const Shape& result = call->shape();
  if (call->operand_count() != 1 || !IsSquareMatrixBatch(a) || !result.IsTuple() || result.tuple_shapes.size() != 2 ||
      !result.tuple_shapes[0].Compatible(a) || result.tuple_shapes[1].element_type != PrimitiveType::kS32 ||
      result.tuple_shapes[1].rank() != a.rank() - 2) {
    return CallError(*call, "expected (a[..., n, n]) -> (a[..., n, n], s32[...]), as jaxlib's potrf");
  }
  const std::optional<char> uplo = Flag(*call, "uplo");
  if (!uplo || (*uplo != 'L' && *uplo != 'U')) return CallError(*call, "needs uplo = 76 ('L') or 85 ('U')");
  Builder b(module, comp, *call);
  Shape value = result.tuple_shapes[0];
  Instruction* factor = b.Add(Opcode::kCholesky, value, {call->operand(0)});
  factor->SetAttr("lower", AttrValue::Bool(*uplo == 'L'));
  Instruction* kept = b.Add(Opcode::kSelect, value, {b.TriangleMask(value, *uplo == 'L'), factor, call->operand(0)});
  Instruction* info = b.NanInfo(factor, result.tuple_shapes[1]);
  return b.Add(Opcode::kTuple, result, {kept, info});
}

absl::StatusOr<Instruction*> Trsm(Module& module, Computation& comp, Instruction* call) {
  const int64_t n = call->operand_count();
  if (n != 2 && n != 3) return CallError(*call, "expected (a, b[, alpha]) -> x, as jaxlib's trsm");
  const Shape& a = call->operand(0)->shape();
  const Shape& bs = call->operand(1)->shape();
  if (!IsSquareMatrixBatch(a) || !bs.IsArray() || bs.rank() != a.rank() || !call->shape().Compatible(bs) ||
      (n == 3 && (!call->operand(2)->shape().IsArray() || call->operand(2)->shape().rank() != 0))) {
    return CallError(*call, "expected (a[..., m, m], b[..., m, n][, alpha]) -> x[..., m, n], as jaxlib's trsm");
  }
  const std::optional<char> side = Flag(*call, "side"), uplo = Flag(*call, "uplo");
  const std::optional<char> trans = Flag(*call, "trans_x"), diag = Flag(*call, "diag");
  if (!side || (*side != 'L' && *side != 'R') || !uplo || (*uplo != 'L' && *uplo != 'U') || !trans ||
      (*trans != 'N' && *trans != 'T' && *trans != 'C') || !diag || (*diag != 'N' && *diag != 'U')) {
    return CallError(*call, "needs side, uplo, trans_x and diag flags (ASCII codes: L/R, L/U, N/T/C, N/U)");
  }
  Builder b(module, comp, *call);
  Shape x = call->shape();
  Instruction* solve = b.Add(Opcode::kTriangularSolve, x, {call->operand(0), call->operand(1)});
  solve->SetAttr("left_side", AttrValue::Bool(*side == 'L'));
  solve->SetAttr("lower", AttrValue::Bool(*uplo == 'L'));
  solve->SetAttr("unit_diagonal", AttrValue::Bool(*diag == 'U'));
  solve->SetAttr("transpose_a", AttrValue::Enum(*trans == 'N'   ? "NO_TRANSPOSE"
                                                : *trans == 'T' ? "TRANSPOSE"
                                                                : "ADJOINT"));
  if (n == 2) return solve;
  Shape scaled = x;
  Instruction* alpha = b.Add(Opcode::kBroadcast, scaled, {call->operand(2)});
  alpha->SetAttr("dimensions", AttrValue::IntList({}));
  return b.Add(Opcode::kMultiply, scaled, {solve, alpha});
}

// The result leaves of a call: its shape's elements, or the shape itself.
std::vector<Shape> ResultLeaves(const Instruction& call) {
  if (call.shape().IsTuple()) return call.shape().tuple_shapes;
  return {call.shape()};
}

// The call's results from `values` (one per leading result), then zeros for the rest (LAPACK workspaces, which
// jaxlib's FFI calls of mid-2024 return and nothing reads).
Instruction* Results(Builder& b, const Instruction& call, const std::vector<Instruction*>& values) {
  const std::vector<Shape> leaves = ResultLeaves(call);
  std::vector<Instruction*> parts;
  for (size_t i = 0; i < leaves.size(); ++i) {
    parts.push_back(b.As(i < values.size() ? values[i] : b.Zeros(leaves[i]), leaves[i]));
  }
  if (!call.shape().IsTuple()) return parts[0];
  return b.Add(Opcode::kTuple, call.shape(), std::move(parts));
}

bool IsS32(const Shape& s, int64_t rank) {
  return s.IsArray() && s.element_type == PrimitiveType::kS32 && s.rank() == rank;
}

// The leading dimensions of a (its batch) followed by `tail`, of `type`.
Shape BatchShape(const Shape& a, PrimitiveType type, std::vector<int64_t> tail) {
  std::vector<int64_t> dims(a.dimensions.begin(), a.dimensions.end() - 2);
  dims.insert(dims.end(), tail.begin(), tail.end());
  return Shape::Array(type, std::move(dims));
}

// The one matrix operand of a decomposition call, with at least `results` results.
absl::StatusOr<const Shape*> MatrixOperand(const Instruction& call, size_t results, std::string_view expected) {
  if (call.operand_count() < 1 || !call.operand(0)->shape().IsArray() || call.operand(0)->shape().rank() < 2 ||
      ResultLeaves(call).size() < results) {
    return CallError(call, fmt::format("expected {}, as jaxlib's", expected));
  }
  return &call.operand(0)->shape();
}

// getrf: a -> (lu, ipiv s32[..., k] 1-based, info s32[...]).
absl::StatusOr<Instruction*> Getrf(Module& module, Computation& comp, Instruction* call) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(*call, 3, "(a[..., m, n]) -> (lu, ipiv s32[..., k], info)"));
  const int64_t m = a->dimensions[a->rank() - 2], n = a->dimensions.back();
  const std::vector<Shape> out = ResultLeaves(*call);
  if (call->operand_count() != 1 || !IsS32(out[1], a->rank() - 1) || !IsS32(out[2], a->rank() - 2)) {
    return CallError(*call, "expected (a[..., m, n]) -> (lu, ipiv s32[..., min(m, n)], info s32[...]), as jaxlib's");
  }
  Builder b(module, comp, *call);
  Shape plain = *a;
  plain.layout.reset();
  Instruction* lu =
      b.Decomposition("LuDecomposition", {call->operand(0)},
                      {plain, BatchShape(*a, PrimitiveType::kS32, {std::min(m, n)}),
                       BatchShape(*a, PrimitiveType::kS32, {m}), BatchShape(*a, PrimitiveType::kS32, {})});
  return Results(b, *call, {b.Element(lu, 0), b.PlusOne(b.Element(lu, 1)), b.Element(lu, 3)});
}

// geqrf: a -> (a', taus[..., k][, info, workspace]).
absl::StatusOr<Instruction*> Geqrf(Module& module, Computation& comp, Instruction* call) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(*call, 2, "(a[..., m, n]) -> (a, taus[..., k])"));
  if (call->operand_count() != 1) return CallError(*call, "expected one operand, as jaxlib's geqrf");
  const int64_t m = a->dimensions[a->rank() - 2], n = a->dimensions.back();
  Builder b(module, comp, *call);
  Shape plain = *a;
  plain.layout.reset();
  Instruction* qr =
      b.Decomposition("Qr", {call->operand(0)}, {plain, BatchShape(*a, a->element_type, {std::min(m, n)})});
  return Results(b, *call, {b.Element(qr, 0), b.Element(qr, 1)});
}

// orgqr / ungqr: (a, taus) -> q[, info, workspace].
absl::StatusOr<Instruction*> Orgqr(Module& module, Computation& comp, Instruction* call) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(*call, 1, "(a[..., m, n], taus[..., k]) -> q"));
  if (call->operand_count() != 2) return CallError(*call, "expected (a, taus) operands, as jaxlib's orgqr");
  Builder b(module, comp, *call);
  Shape plain = *a;
  plain.layout.reset();
  Instruction* q =
      b.Decomposition("ProductOfElementaryHouseholderReflectors", {call->operand(0), call->operand(1)}, {plain});
  return Results(b, *call, {q});
}

// syevd / heevd {uplo, mode}: a -> (vectors, values[..., n], info[, workspaces]).
absl::StatusOr<Instruction*> Syevd(Module& module, Computation& comp, Instruction* call) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a,
                        MatrixOperand(*call, 3, "(a[..., n, n]) -> (vectors, eigenvalues[..., n], info)"));
  const int64_t n = a->dimensions.back();
  const std::optional<char> uplo = Flag(*call, "uplo");
  if (call->operand_count() != 1 || !uplo || (*uplo != 'L' && *uplo != 'U')) {
    return CallError(*call, "expected one operand and uplo = 76 ('L') or 85 ('U'), as jaxlib's syevd");
  }
  Builder b(module, comp, *call);
  Shape plain = *a;
  plain.layout.reset();
  const PrimitiveType real = ComplexComponentType(a->element_type);
  Instruction* eigh = b.Decomposition("Eigh", {call->operand(0)},
                                      {plain, BatchShape(*a, real, {n}), BatchShape(*a, PrimitiveType::kS32, {})},
                                      *uplo == 'L' ? "1,1" : "0,1");
  return Results(b, *call, {b.Element(eigh, 0), b.Element(eigh, 1), b.Element(eigh, 2)});
}

// gesdd {mode 'A', 'S' or 'N'}: a -> (a', s[..., k], u, vt, info[, workspaces]); u and vt zero for 'N'.
absl::StatusOr<Instruction*> Gesdd(Module& module, Computation& comp, Instruction* call) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(*call, 5, "(a[..., m, n]) -> (a, s, u, vt, info)"));
  const int64_t m = a->dimensions[a->rank() - 2], n = a->dimensions.back(), k = std::min(m, n);
  const std::optional<char> mode = Flag(*call, "mode");
  if (call->operand_count() != 1 || !mode || (*mode != 'A' && *mode != 'S' && *mode != 'N')) {
    return CallError(*call, "expected one operand and mode = 65 ('A'), 83 ('S') or 78 ('N'), as jaxlib's gesdd");
  }
  Builder b(module, comp, *call);
  const PrimitiveType real = ComplexComponentType(a->element_type);
  std::vector<Shape> shapes = {BatchShape(*a, real, {k})};
  if (*mode != 'N') {
    const bool full = *mode == 'A';
    shapes.push_back(BatchShape(*a, a->element_type, {m, full ? m : k}));
    shapes.push_back(BatchShape(*a, a->element_type, {full ? n : k, n}));
  }
  shapes.push_back(BatchShape(*a, PrimitiveType::kS32, {}));
  const std::vector<Shape> out = ResultLeaves(*call);
  // s, u and vt are results 1 to 3 (without vectors, u and vt are zeros of any shape).
  const size_t checked = *mode == 'N' ? 1 : 3;
  for (size_t i = 0; i < checked; ++i) {
    if (!out[i + 1].Compatible(shapes[i])) {
      return CallError(*call, fmt::format("result {} should be {} for mode '{}', as jaxlib's gesdd", i + 1,
                                          ShapeToString(shapes[i], false), *mode));
    }
  }
  Instruction* svd = b.Decomposition(kSvdTarget, {call->operand(0)}, shapes);
  Instruction* s = b.Element(svd, 0);
  Instruction* info = b.Element(svd, static_cast<int64_t>(shapes.size()) - 1);
  Instruction* u = *mode == 'N' ? b.Zeros(out[2]) : b.Element(svd, 1);
  Instruction* vt = *mode == 'N' ? b.Zeros(out[3]) : b.Element(svd, 2);
  return Results(b, *call, {call->operand(0), s, u, vt, info});
}

// XLA's ApproxTopK (jax.lax.approx_max_k / approx_min_k as TPU exports write it): (inputs..., inits...) with the
// comparator -> the top_k first elements along reduction_dim of each input. Off TPU XLA runs its fallback, an exact
// top-k: a stable sort by the comparator and a slice; so does this.
absl::StatusOr<Instruction*> ApproxTopK(Module& module, Computation& comp, Instruction* call) {
  const int64_t n = call->operand_count() / 2;
  const std::vector<Shape> out = ResultLeaves(*call);
  const std::optional<int64_t> k = ConfigInt(*call, "top_k"), dim = ConfigInt(*call, "reduction_dim");
  bool ok = n > 0 && call->operand_count() == 2 * n && static_cast<int64_t>(out.size()) == n &&
            call->called_computations().size() == 1 && k.has_value() && dim.has_value() && *k >= 0;
  const Shape* first = ok ? &call->operand(0)->shape() : nullptr;
  ok = ok && first->IsArray() && *dim >= 0 && *dim < first->rank() && *k <= first->dimensions[*dim];
  for (int64_t i = 0; ok && i < n; ++i) {
    const Shape& in = call->operand(i)->shape();
    Shape expected = in;
    if (in.IsArray()) expected.dimensions[*dim] = *k;
    ok = in.IsArray() && in.dimensions == first->dimensions && call->operand(n + i)->shape().rank() == 0 &&
         out[i].Compatible(expected);
  }
  if (!ok) {
    return CallError(*call,
                     "expected (inputs..., init values...) with a comparator and backend_config top_k and "
                     "reduction_dim, giving the top_k elements of each input along reduction_dim");
  }
  Builder b(module, comp, *call);
  std::vector<Instruction*> inputs;
  std::vector<Shape> sorted_shapes;
  for (int64_t i = 0; i < n; ++i) {
    inputs.push_back(call->operand(i));
    Shape s = call->operand(i)->shape();
    s.layout.reset();
    sorted_shapes.push_back(s);
  }
  Instruction* sort = b.Add(Opcode::kSort, n == 1 ? sorted_shapes[0] : Shape::Tuple(sorted_shapes), inputs);
  sort->SetAttr("dimensions", AttrValue::IntList({*dim}));
  sort->SetAttr("is_stable", AttrValue::Bool(true));
  sort->set_called_computations({call->called_computations()[0]});
  std::vector<Instruction*> values;
  for (int64_t i = 0; i < n; ++i) {
    Instruction* sorted = n == 1 ? sort : b.Element(sort, i);
    std::vector<SliceRange> ranges;
    for (int64_t d = 0; d < first->rank(); ++d) ranges.push_back({0, d == *dim ? *k : first->dimensions[d], 1});
    Shape sliced = sorted_shapes[i];
    sliced.dimensions[*dim] = *k;
    Instruction* slice = b.Add(Opcode::kSlice, sliced, {sorted});
    slice->SetAttr("slice", AttrValue::Of(std::move(ranges)));
    values.push_back(slice);
  }
  return Results(b, *call, values);
}

absl::StatusOr<bool> Run(Module& module, SourceLoc* error_at) {
  bool changed = false;
  std::vector<Computation*> comps;
  for (const auto& comp : module.computations()) comps.push_back(comp.get());
  for (Computation* comp : comps) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      const std::string_view target = inst->StringAttr("custom_call_target");
      absl::StatusOr<Instruction*> replacement = nullptr;
      if (IsLapackTarget(target, "potrf")) {
        replacement = Potrf(module, *comp, inst);
      } else if (IsLapackTarget(target, "trsm") || IsBlasTrsm(target)) {
        replacement = Trsm(module, *comp, inst);
      } else if (IsLapackTarget(target, "getrf")) {
        replacement = Getrf(module, *comp, inst);
      } else if (IsLapackTarget(target, "geqrf")) {
        replacement = Geqrf(module, *comp, inst);
      } else if (IsLapackTarget(target, "orgqr") || IsLapackTarget(target, "ungqr")) {
        replacement = Orgqr(module, *comp, inst);
      } else if (IsLapackTarget(target, "syevd") || IsLapackTarget(target, "heevd")) {
        replacement = Syevd(module, *comp, inst);
      } else if (IsLapackTarget(target, "gesdd")) {
        replacement = Gesdd(module, *comp, inst);
      } else if (target == "ApproxTopK") {
        replacement = ApproxTopK(module, *comp, inst);
      } else {
        continue;
      }
      if (!replacement.ok()) {
        *error_at = inst->loc();
        return replacement.status();
      }
      XLAC_RETURN_IF_ERROR(ReplaceCall(*comp, inst, *replacement));
      changed = true;
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> RunLibraryCustomCalls(Module& module) {
  SourceLoc at;
  absl::StatusOr<bool> changed = Run(module, &at);
  if (!changed.ok() && at.known()) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: {}", at.line, at.col, std::string(changed.status().message())));
  }
  return changed;
}

bool RewriteLibraryCustomCalls(Module& module, DiagnosticEngine& diags) {
  SourceLoc at;
  absl::StatusOr<bool> changed = Run(module, &at);
  if (changed.ok()) return true;
  diags.Error(at, std::string(changed.status().message()));
  return false;
}

}  // namespace xlac
