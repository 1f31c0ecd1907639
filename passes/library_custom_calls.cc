#include "passes/library_custom_calls.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/decomposition_calls.h"
#include "ir/primitive_type.h"
#include "ir/status_macros.h"
#include "passes/gpu_library_calls.h"
#include "passes/jaxlib_calls.h"
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

class Builder {
 public:
  Builder(Module& module, Computation& comp, const Instruction& at) : module_(module), comp_(comp), at_(at) {}

  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands) {
    return AddAtCall(module_, comp_, at_, op, std::move(shape), std::move(operands));
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

// ---- jaxlib's LAPACK calls ----

// The routine of a jaxlib LAPACK target: lapack_{s,d,c,z}<routine>_ffi (typed FFI), lapack_{s,d,c,z}<routine> (the
// legacy API of 2023, or in mid-2024 the typed FFI under the old name), blas_{s,d,c,z}trsm[_ffi].
struct LapackTarget {
  std::string routine;
  bool complex = false;
  // cuSOLVER / hipSOLVER's typed-FFI calls of JAX's GPU exports (cusolver_<routine>_ffi, hipsolver_<routine>_ffi):
  // LAPACK's signatures, the type taken from the operand and the triangle as `lower = true`.
  bool gpu = false;
};

std::optional<LapackTarget> ParseLapackTarget(std::string_view target) {
  static constexpr std::string_view kRoutines[] = {"potrf", "trsm",  "getrf", "geqrf", "orgqr",
                                                   "ungqr", "syevd", "heevd", "gesdd", "gtsv",
                                                   "gehrd", "sytrd", "hetrd", "geev",  "gees"};
  for (std::string_view prefix : {"cusolver_", "hipsolver_"}) {
    static constexpr std::string_view kGpuRoutines[] = {"potrf", "getrf", "geqrf", "orgqr", "syevd", "sytrd"};
    if (target.substr(0, prefix.size()) != prefix || target.size() < prefix.size() + 4 ||
        target.substr(target.size() - 4) != "_ffi") {
      continue;
    }
    const std::string_view routine = target.substr(prefix.size(), target.size() - prefix.size() - 4);
    for (std::string_view r : kGpuRoutines) {
      if (routine == r) return LapackTarget{std::string(r), false, true};
    }
    return std::nullopt;
  }
  const bool blas = target.substr(0, 5) == "blas_";
  if (!blas && target.substr(0, 7) != "lapack_") return std::nullopt;
  std::string_view rest = target.substr(blas ? 5 : 7);
  if (rest.empty() || std::string_view("sdcz").find(rest[0]) == std::string_view::npos) return std::nullopt;
  const bool complex = rest[0] == 'c' || rest[0] == 'z';
  rest.remove_prefix(1);
  if (rest.size() > 4 && rest.substr(rest.size() - 4) == "_ffi") rest.remove_suffix(4);
  if (blas && rest != "trsm") return std::nullopt;
  for (std::string_view r : kRoutines) {
    if (rest == r) return LapackTarget{std::string(r), complex};
  }
  return std::nullopt;
}

// A LAPACK call as its typed-FFI form reads: the FFI operands, attributes and results, whichever API wrote it.
struct LapackCall {
  Instruction* call = nullptr;
  std::vector<Instruction*> args;  // the FFI operands
  std::vector<Shape> results;      // the FFI results the call has, in FFI order
  std::vector<size_t> slots;       // results[i] is the call's result leaf slots[i]
  bool legacy = false;             // attributes from `attrs` (the legacy descriptor operands, the GPU flags):
  std::map<std::string, int64_t, std::less<>> attrs;

  // An attribute (`key = 76 : ui8` in the FFI backend_config), as an integer.
  std::optional<int64_t> Int(std::string_view key) const {
    if (!legacy) return ConfigInt(*call, key);
    auto it = attrs.find(key);
    if (it == attrs.end()) return std::nullopt;
    return it->second;
  }
  // An ASCII-code attribute, as a character.
  std::optional<char> Flag(std::string_view key) const {
    const std::optional<int64_t> value = Int(key);
    if (!value || *value <= 0 || *value > 127) return std::nullopt;
    return static_cast<char>(*value);
  }
  absl::Status Error(std::string_view why) const { return CallError(*call, why); }
};

// The call's results: values[i] in FFI result i's slot, zeros everywhere else (LAPACK workspaces and infos that
// are always 0, which jaxlib's calls return and nothing reads).
Instruction* Results(Builder& b, const LapackCall& lc, const std::vector<Instruction*>& values) {
  const std::vector<Shape> leaves = ResultLeaves(*lc.call);
  std::vector<Instruction*> parts(leaves.size(), nullptr);
  for (size_t i = 0; i < values.size() && i < lc.slots.size(); ++i) parts[lc.slots[i]] = values[i];
  for (size_t i = 0; i < leaves.size(); ++i)
    parts[i] = b.As(parts[i] != nullptr ? parts[i] : b.Zeros(leaves[i]), leaves[i]);
  if (!lc.call->shape().IsTuple()) return parts[0];
  return b.Add(Opcode::kTuple, lc.call->shape(), std::move(parts));
}

LapackCall FfiCall(Instruction* call) {
  LapackCall lc;
  lc.call = call;
  lc.args = call->operands();
  lc.results = ResultLeaves(*call);
  lc.slots.resize(lc.results.size());
  std::iota(lc.slots.begin(), lc.slots.end(), 0);
  return lc;
}

// A legacy descriptor: the value of a scalar integer constant (through converts, reshapes and copies).
std::optional<int64_t> ConstantScalar(const Instruction* x) {
  while ((x->opcode() == Opcode::kConvert || x->opcode() == Opcode::kReshape || x->opcode() == Opcode::kCopy) &&
         x->operand_count() == 1) {
    x = x->operand(0);
  }
  const Shape& s = x->shape();
  if (x->opcode() != Opcode::kConstant || !x->has_literal() || !s.IsArray() || s.rank() != 0 ||
      !(IsIntegralType(s.element_type) || IsPredType(s.element_type))) {
    return std::nullopt;
  }
  return x->literal().GetAsInt64(0);
}

// The legacy API (jaxlib 2023, api_version 2): scalar descriptor operands before the arrays, flags among them as
// 0/1 integers or ASCII codes; workspaces among the results. As the typed-FFI form it became.
absl::StatusOr<LapackCall> LegacyCall(Instruction* call, const LapackTarget& t) {
  const std::string& r = t.routine;
  // The descriptors, and where the FFI results sit among the legacy results.
  int64_t descriptors = 0;
  std::vector<size_t> slots;
  std::string_view layout;
  if (r == "potrf") {
    descriptors = 3, slots = {0, 1}, layout = "(lower, batch, n, a) -> (a, info)";
  } else if (r == "getrf") {
    descriptors = 3, slots = {0, 1, 2}, layout = "(batch, m, n, a) -> (a, ipiv, info)";
  } else if (r == "geqrf") {
    descriptors = 4, slots = {0, 1}, layout = "(batch, m, n, lwork, a) -> (a, taus, info, work)";
  } else if (r == "orgqr" || r == "ungqr") {
    descriptors = 5, slots = {0}, layout = "(batch, m, n, k, lwork, a, taus) -> (a, info, work)";
  } else if (r == "syevd" || r == "heevd") {
    descriptors = 3, slots = {0, 1, 2},
    layout = "(lower, batch, n, a[, shapes...]) -> (vectors, values, info, work...)";
  } else if (r == "gesdd") {
    descriptors = 6, slots = {0, 1, 2, 3, 4};
    layout = "(full_matrices, compute_uv, batch, m, n, lwork, a) -> (a, s, u, vt, info, work...)";
  } else if (r == "trsm") {
    descriptors = 7, slots = {0}, layout = "(left_side, lower, trans_a, diag, m, n, batch, alpha, a, b) -> x";
  } else if (r == "gehrd") {
    descriptors = 6, slots = {0, 1, 2}, layout = "(n, ilo, ihi, lda, batch, lwork, a) -> (a, taus, info, work)";
  } else if (r == "sytrd" || r == "hetrd") {
    descriptors = 5, slots = {0, 1, 2, 3, 4},
    layout = "(n, lower, lda, batch, lwork, a) -> (a, d, e, taus, info, work)";
  } else if (r == "geev") {
    descriptors = 4;
    slots = t.complex ? std::vector<size_t>{2, 3, 4, 5} : std::vector<size_t>{3, 4, 5, 6, 7};
    layout = t.complex ? "(batch, n, jobvl, jobvr, a) -> (work, rwork, w, vl, vr, info)"
                       : "(batch, n, jobvl, jobvr, a) -> (work, work, work, wr, wi, vl, vr, info)";
  } else if (r == "gees") {
    descriptors = 4;
    slots = t.complex ? std::vector<size_t>{0, 3, 2, 4, 5} : std::vector<size_t>{0, 3, 1, 2, 4, 5};
    layout = t.complex ? "(batch, n, jobvs, sort, a) -> (t, rwork, w, vs, sdim, info)"
                       : "(batch, n, jobvs, sort, a) -> (t, wr, wi, vs, sdim, info)";
  }
  const std::vector<Shape> leaves = ResultLeaves(*call);
  const int64_t arrays = r == "orgqr" || r == "ungqr" ? 2 : r == "trsm" ? 3 : 1;
  const bool extra_operands = r == "syevd" || r == "heevd";  // shape operands of dynamic exports
  if (call->operand_count() < descriptors + arrays ||
      (!extra_operands && call->operand_count() != descriptors + arrays) ||
      leaves.size() <= *std::max_element(slots.begin(), slots.end())) {
    return CallError(*call, fmt::format("expected {}, as jaxlib's legacy (api_version 2) call", layout));
  }
  std::vector<int64_t> d;
  for (int64_t i = 0; i < descriptors; ++i) {
    const Instruction* operand = call->operand(i);
    const std::optional<int64_t> value = ConstantScalar(operand);
    if (!value) {
      return CallError(*call, fmt::format("descriptor operand {} (%{}) of {} must be a constant scalar integer: the "
                                          "legacy call's flags and sizes are compile-time constants",
                                          i, operand->name(), layout));
    }
    d.push_back(*value);
  }
  LapackCall lc;
  lc.call = call;
  lc.legacy = true;
  lc.slots = slots;
  for (size_t slot : slots) lc.results.push_back(leaves[slot]);
  for (int64_t i = 0; i < arrays; ++i) lc.args.push_back(call->operand(descriptors + i));
  auto uplo = [](int64_t lower) -> int64_t { return lower != 0 ? 'L' : 'U'; };
  if (r == "potrf") {
    lc.attrs["uplo"] = uplo(d[0]);
  } else if (r == "syevd" || r == "heevd") {
    lc.attrs["uplo"] = uplo(d[0]);
    lc.attrs["mode"] = 'V';
  } else if (r == "gesdd") {
    lc.attrs["mode"] = d[1] == 0 ? 'N' : d[0] != 0 ? 'A' : 'S';
  } else if (r == "trsm") {
    // (alpha, a, b) -> the FFI's (a, b, alpha).
    std::rotate(lc.args.begin(), lc.args.begin() + 1, lc.args.end());
    lc.attrs["side"] = d[0] != 0 ? 'L' : 'R';
    lc.attrs["uplo"] = uplo(d[1]);
    lc.attrs["trans_x"] = d[2] == 0 ? 'N' : d[2] == 1 ? 'T' : d[2] == 2 ? 'C' : 0;
    lc.attrs["diag"] = d[3] != 0 ? 'U' : 'N';
  } else if (r == "gehrd") {
    lc.attrs["low"] = d[1];
    lc.attrs["high"] = d[2];
  } else if (r == "sytrd" || r == "hetrd") {
    lc.attrs["uplo"] = uplo(d[1]);
  } else if (r == "geev") {
    lc.attrs["compute_left"] = d[2];
    lc.attrs["compute_right"] = d[3];
  } else if (r == "gees") {
    lc.attrs["mode"] = d[2];
    lc.attrs["sort"] = d[3];
  }
  return lc;
}

absl::StatusOr<Instruction*> Potrf(Module& module, Computation& comp, const LapackCall& lc) {
  const Shape* a = lc.args.size() == 1 ? &lc.args[0]->shape() : nullptr;
  if (a == nullptr || !IsSquareMatrixBatch(*a) || lc.results.size() != 2 || !lc.results[0].Compatible(*a) ||
      lc.results[1].element_type != PrimitiveType::kS32 || lc.results[1].rank() != a->rank() - 2) {
    return lc.Error("expected (a[..., n, n]) -> (a[..., n, n], s32[...]), as jaxlib's potrf");
  }
  const std::optional<char> uplo = lc.Flag("uplo");
  if (!uplo || (*uplo != 'L' && *uplo != 'U')) return lc.Error("needs uplo = 76 ('L') or 85 ('U')");
  Builder b(module, comp, *lc.call);
  Shape value = lc.results[0];
  Instruction* factor = b.Add(Opcode::kCholesky, value, {lc.args[0]});
  factor->SetAttr("lower", AttrValue::Bool(*uplo == 'L'));
  Instruction* kept = b.Add(Opcode::kSelect, value, {b.TriangleMask(value, *uplo == 'L'), factor, lc.args[0]});
  Instruction* info = b.NanInfo(factor, lc.results[1]);
  return Results(b, lc, {kept, info});
}

absl::StatusOr<Instruction*> Trsm(Module& module, Computation& comp, const LapackCall& lc) {
  const size_t n = lc.args.size();
  if ((n != 2 && n != 3) || lc.results.size() != 1) return lc.Error("expected (a, b[, alpha]) -> x, as jaxlib's trsm");
  const Shape& a = lc.args[0]->shape();
  const Shape& bs = lc.args[1]->shape();
  if (!IsSquareMatrixBatch(a) || !bs.IsArray() || bs.rank() != a.rank() || !lc.results[0].Compatible(bs) ||
      (n == 3 && (!lc.args[2]->shape().IsArray() || lc.args[2]->shape().rank() != 0))) {
    return lc.Error("expected (a[..., m, m], b[..., m, n][, alpha]) -> x[..., m, n], as jaxlib's trsm");
  }
  const std::optional<char> side = lc.Flag("side"), uplo = lc.Flag("uplo");
  const std::optional<char> trans = lc.Flag("trans_x"), diag = lc.Flag("diag");
  if (!side || (*side != 'L' && *side != 'R') || !uplo || (*uplo != 'L' && *uplo != 'U') || !trans ||
      (*trans != 'N' && *trans != 'T' && *trans != 'C') || !diag || (*diag != 'N' && *diag != 'U')) {
    return lc.Error(lc.legacy ? "needs left_side, lower, trans_a (0, 1 or 2) and diag descriptors"
                              : "needs side, uplo, trans_x and diag flags (ASCII codes: L/R, L/U, N/T/C, N/U)");
  }
  Builder b(module, comp, *lc.call);
  Shape x = lc.results[0];
  x.layout.reset();
  Instruction* solve = b.Add(Opcode::kTriangularSolve, x, {lc.args[0], lc.args[1]});
  solve->SetAttr("left_side", AttrValue::Bool(*side == 'L'));
  solve->SetAttr("lower", AttrValue::Bool(*uplo == 'L'));
  solve->SetAttr("unit_diagonal", AttrValue::Bool(*diag == 'U'));
  solve->SetAttr("transpose_a", AttrValue::Enum(*trans == 'N'   ? "NO_TRANSPOSE"
                                                : *trans == 'T' ? "TRANSPOSE"
                                                                : "ADJOINT"));
  if (n == 2) return Results(b, lc, {solve});
  Instruction* alpha = b.Add(Opcode::kBroadcast, x, {lc.args[2]});
  alpha->SetAttr("dimensions", AttrValue::IntList({}));
  return Results(b, lc, {b.Add(Opcode::kMultiply, x, {solve, alpha})});
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
absl::StatusOr<const Shape*> MatrixOperand(const LapackCall& lc, size_t results, std::string_view expected) {
  if (lc.args.empty() || !lc.args[0]->shape().IsArray() || lc.args[0]->shape().rank() < 2 ||
      lc.results.size() < results) {
    return lc.Error(fmt::format("expected {}, as jaxlib's", expected));
  }
  return &lc.args[0]->shape();
}

// Checks that FFI result i of the call is `expected` (any layout).
absl::Status ExpectResults(const LapackCall& lc, const std::vector<Shape>& expected, std::string_view signature) {
  for (size_t i = 0; i < expected.size(); ++i) {
    if (i >= lc.results.size() || !lc.results[i].Compatible(expected[i])) {
      return lc.Error(fmt::format("result {} should be {}: expected {}, as jaxlib's", i,
                                  ShapeToString(expected[i], false), signature));
    }
  }
  return absl::OkStatus();
}

// The elements of a decomposition call's tuple result.
std::vector<Instruction*> Elements(Builder& b, Instruction* tuple) {
  std::vector<Instruction*> out;
  for (int64_t i = 0; i < static_cast<int64_t>(tuple->shape().tuple_shapes.size()); ++i)
    out.push_back(b.Element(tuple, i));
  return out;
}

// getrf: a -> (lu, ipiv s32[..., k] 1-based, info s32[...]).
absl::StatusOr<Instruction*> Getrf(Module& module, Computation& comp, const LapackCall& lc) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 3, "(a[..., m, n]) -> (lu, ipiv s32[..., k], info)"));
  const int64_t m = a->dimensions[a->rank() - 2], n = a->dimensions.back();
  if (lc.args.size() != 1 || !IsS32(lc.results[1], a->rank() - 1) || !IsS32(lc.results[2], a->rank() - 2)) {
    return lc.Error("expected (a[..., m, n]) -> (lu, ipiv s32[..., min(m, n)], info s32[...]), as jaxlib's");
  }
  Builder b(module, comp, *lc.call);
  Shape plain = *a;
  plain.layout.reset();
  Instruction* lu =
      b.Decomposition("LuDecomposition", {lc.args[0]},
                      {plain, BatchShape(*a, PrimitiveType::kS32, {std::min(m, n)}),
                       BatchShape(*a, PrimitiveType::kS32, {m}), BatchShape(*a, PrimitiveType::kS32, {})});
  return Results(b, lc, {b.Element(lu, 0), b.PlusOne(b.Element(lu, 1)), b.Element(lu, 3)});
}

// geqrf: a -> (a', taus[..., k][, info, workspace]).
absl::StatusOr<Instruction*> Geqrf(Module& module, Computation& comp, const LapackCall& lc) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 2, "(a[..., m, n]) -> (a, taus[..., k])"));
  if (lc.args.size() != 1) return lc.Error("expected one operand, as jaxlib's geqrf");
  const int64_t m = a->dimensions[a->rank() - 2], n = a->dimensions.back();
  Builder b(module, comp, *lc.call);
  Shape plain = *a;
  plain.layout.reset();
  Instruction* qr = b.Decomposition("Qr", {lc.args[0]}, {plain, BatchShape(*a, a->element_type, {std::min(m, n)})});
  return Results(b, lc, {b.Element(qr, 0), b.Element(qr, 1)});
}

// orgqr / ungqr: (a, taus) -> q[, info, workspace].
absl::StatusOr<Instruction*> Orgqr(Module& module, Computation& comp, const LapackCall& lc) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 1, "(a[..., m, n], taus[..., k]) -> q"));
  if (lc.args.size() != 2) return lc.Error("expected (a, taus) operands, as jaxlib's orgqr");
  Builder b(module, comp, *lc.call);
  Shape plain = *a;
  plain.layout.reset();
  Instruction* q = b.Decomposition("ProductOfElementaryHouseholderReflectors", {lc.args[0], lc.args[1]}, {plain});
  return Results(b, lc, {q});
}

// syevd / heevd {uplo, mode}: a -> (vectors, values[..., n], info[, workspaces]).
absl::StatusOr<Instruction*> Syevd(Module& module, Computation& comp, const LapackCall& lc) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 3, "(a[..., n, n]) -> (vectors, eigenvalues[..., n], info)"));
  const int64_t n = a->dimensions.back();
  const std::optional<char> uplo = lc.Flag("uplo");
  if (lc.args.size() != 1 || !uplo || (*uplo != 'L' && *uplo != 'U')) {
    return lc.Error("expected one operand and uplo = 76 ('L') or 85 ('U'), as jaxlib's syevd");
  }
  Builder b(module, comp, *lc.call);
  Shape plain = *a;
  plain.layout.reset();
  const PrimitiveType real = ComplexComponentType(a->element_type);
  Instruction* eigh =
      b.Decomposition("Eigh", {lc.args[0]}, {plain, BatchShape(*a, real, {n}), BatchShape(*a, PrimitiveType::kS32, {})},
                      *uplo == 'L' ? "1,1" : "0,1");
  return Results(b, lc, {b.Element(eigh, 0), b.Element(eigh, 1), b.Element(eigh, 2)});
}

// gesdd {mode 'A', 'S' or 'N'}: a -> (a', s[..., k], u, vt, info[, workspaces]); u and vt zero for 'N'.
absl::StatusOr<Instruction*> Gesdd(Module& module, Computation& comp, const LapackCall& lc) {
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 5, "(a[..., m, n]) -> (a, s, u, vt, info)"));
  const int64_t m = a->dimensions[a->rank() - 2], n = a->dimensions.back(), k = std::min(m, n);
  const std::optional<char> mode = lc.Flag("mode");
  if (lc.args.size() != 1 || !mode || (*mode != 'A' && *mode != 'S' && *mode != 'N')) {
    return lc.Error("expected one operand and mode = 65 ('A'), 83 ('S') or 78 ('N'), as jaxlib's gesdd");
  }
  Builder b(module, comp, *lc.call);
  const PrimitiveType real = ComplexComponentType(a->element_type);
  std::vector<Shape> shapes = {BatchShape(*a, real, {k})};
  if (*mode != 'N') {
    const bool full = *mode == 'A';
    shapes.push_back(BatchShape(*a, a->element_type, {m, full ? m : k}));
    shapes.push_back(BatchShape(*a, a->element_type, {full ? n : k, n}));
  }
  shapes.push_back(BatchShape(*a, PrimitiveType::kS32, {}));
  const std::vector<Shape>& out = lc.results;
  // s, u and vt are results 1 to 3 (without vectors, u and vt are zeros of any shape).
  const size_t checked = *mode == 'N' ? 1 : 3;
  for (size_t i = 0; i < checked; ++i) {
    if (!out[i + 1].Compatible(shapes[i])) {
      return lc.Error(fmt::format("result {} should be {} for mode '{}', as jaxlib's gesdd", i + 1,
                                  ShapeToString(shapes[i], false), *mode));
    }
  }
  Instruction* svd = b.Decomposition(kSvdTarget, {lc.args[0]}, shapes);
  Instruction* s = b.Element(svd, 0);
  Instruction* info = b.Element(svd, static_cast<int64_t>(shapes.size()) - 1);
  Instruction* u = *mode == 'N' ? b.Zeros(out[2]) : b.Element(svd, 1);
  Instruction* vt = *mode == 'N' ? b.Zeros(out[3]) : b.Element(svd, 2);
  return Results(b, lc, {lc.args[0], s, u, vt, info});
}

// gtsv: (dl[..., n], d[..., n], du[..., n], b[..., n, r]) -> (dl', d', du', x, info s32[...]).
absl::StatusOr<Instruction*> Gtsv(Module& module, Computation& comp, const LapackCall& lc) {
  static constexpr std::string_view kSignature =
      "(dl[..., n], d[..., n], du[..., n], b[..., n, r]) -> (dl, d, du, x[..., n, r], info s32[...])";
  if (lc.args.size() != 4 || !lc.args[3]->shape().IsArray() || lc.args[3]->shape().rank() < 2) {
    return lc.Error(fmt::format("expected {}, as jaxlib's gtsv", kSignature));
  }
  const Shape& bs = lc.args[3]->shape();
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < 3; ++i) shapes.push_back(BatchShape(bs, bs.element_type, {bs.dimensions[bs.rank() - 2]}));
  Shape plain = bs;
  plain.layout.reset();
  shapes.push_back(plain);
  shapes.push_back(BatchShape(bs, PrimitiveType::kS32, {}));
  for (int64_t i = 0; i < 3; ++i) {
    if (!lc.args[i]->shape().Compatible(shapes[i]))
      return lc.Error(fmt::format("expected {}, as jaxlib's gtsv", kSignature));
  }
  XLAC_RETURN_IF_ERROR(ExpectResults(lc, shapes, kSignature));
  Builder b(module, comp, *lc.call);
  Instruction* solve = b.Decomposition(kTridiagonalSolveTarget, lc.args, shapes);
  return Results(b, lc, Elements(b, solve));
}

// gehrd {low, high}: a -> (a', taus[..., n-1], info s32[...]).
absl::StatusOr<Instruction*> Gehrd(Module& module, Computation& comp, const LapackCall& lc) {
  static constexpr std::string_view kSignature = "(a[..., n, n]) -> (a, taus[..., n-1], info s32[...])";
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 3, kSignature));
  const int64_t n = a->dimensions.back();
  if (lc.args.size() != 1 || !IsSquareMatrixBatch(*a))
    return lc.Error(fmt::format("expected {}, as jaxlib's gehrd", kSignature));
  const std::optional<int64_t> low = lc.Int("low"), high = lc.Int("high");
  if (!low || !high || *low < 1 || *high > n || (n > 0 && *low > *high)) {
    return lc.Error(fmt::format("needs low and high with 1 <= low <= high <= {} (LAPACK's ilo and ihi)", n));
  }
  Shape plain = *a;
  plain.layout.reset();
  const Shape taus = BatchShape(*a, a->element_type, {std::max<int64_t>(n - 1, 0)});
  XLAC_RETURN_IF_ERROR(ExpectResults(lc, {plain, taus, BatchShape(*a, PrimitiveType::kS32, {})}, kSignature));
  Builder b(module, comp, *lc.call);
  Instruction* h = b.Decomposition(kHessenbergTarget, {lc.args[0]}, {plain, taus}, fmt::format("{},{}", *low, *high));
  return Results(b, lc, {b.Element(h, 0), b.Element(h, 1)});
}

// sytrd / hetrd {uplo}: a -> (a', d R[..., n], e R[..., n-1], taus[..., n-1], info s32[...]).
absl::StatusOr<Instruction*> Sytrd(Module& module, Computation& comp, const LapackCall& lc) {
  static constexpr std::string_view kSignature =
      "(a[..., n, n]) -> (a, d[..., n], e[..., n-1] of the real type, taus[..., n-1], info s32[...])";
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 5, kSignature));
  const std::optional<char> uplo = lc.Flag("uplo");
  if (lc.args.size() != 1 || !IsSquareMatrixBatch(*a) || !uplo || (*uplo != 'L' && *uplo != 'U')) {
    return lc.Error(fmt::format("expected {} and uplo = 76 ('L') or 85 ('U'), as jaxlib's sytrd", kSignature));
  }
  const int64_t n = a->dimensions.back(), e = std::max<int64_t>(n - 1, 0);
  const PrimitiveType real = ComplexComponentType(a->element_type);
  Shape plain = *a;
  plain.layout.reset();
  std::vector<Shape> shapes = {plain, BatchShape(*a, real, {n}), BatchShape(*a, real, {e}),
                               BatchShape(*a, a->element_type, {e})};
  std::vector<Shape> expected = shapes;
  expected.push_back(BatchShape(*a, PrimitiveType::kS32, {}));
  XLAC_RETURN_IF_ERROR(ExpectResults(lc, expected, kSignature));
  Builder b(module, comp, *lc.call);
  Instruction* t = b.Decomposition(kTridiagonalTarget, {lc.args[0]}, shapes, *uplo == 'L' ? "1" : "0");
  return Results(b, lc, Elements(b, t));
}

bool IsLapackType(PrimitiveType type) {
  return type == PrimitiveType::kF32 || type == PrimitiveType::kF64 || type == PrimitiveType::kC64 ||
         type == PrimitiveType::kC128;
}

PrimitiveType ComplexOf(PrimitiveType type) {
  return type == PrimitiveType::kF32 ? PrimitiveType::kC64 : type == PrimitiveType::kF64 ? PrimitiveType::kC128 : type;
}

// geev {compute_left, compute_right}: a -> (w, vl, vr, info) for complex types, (wr, wi, vl, vr, info) with complex
// vl and vr for real types; vectors not asked for are zeros.
absl::StatusOr<Instruction*> Geev(Module& module, Computation& comp, const LapackCall& lc) {
  static constexpr std::string_view kSignature =
      "(a[..., n, n]) -> (w[..., n], vl[..., n, n], vr[..., n, n], info s32[...]), or (wr[..., n], wi[..., n], vl, "
      "vr, info) with complex vl and vr for real types";
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 4, kSignature));
  const std::optional<char> left = lc.Flag("compute_left"), right = lc.Flag("compute_right");
  if (lc.args.size() != 1 || !IsSquareMatrixBatch(*a) || !IsLapackType(a->element_type)) {
    return lc.Error(fmt::format("expected {} of f32, f64, c64 or c128, as jaxlib's geev", kSignature));
  }
  if (!left || (*left != 'N' && *left != 'V') || !right || (*right != 'N' && *right != 'V')) {
    return lc.Error("needs compute_left and compute_right = 78 ('N') or 86 ('V')");
  }
  const int64_t n = a->dimensions.back();
  const bool real = !IsComplexType(a->element_type);
  const PrimitiveType complex = ComplexOf(a->element_type);
  std::vector<Shape> shapes;
  if (real) shapes.push_back(BatchShape(*a, a->element_type, {n}));
  shapes.push_back(BatchShape(*a, a->element_type, {n}));
  shapes.push_back(BatchShape(*a, complex, {n, n}));
  shapes.push_back(BatchShape(*a, complex, {n, n}));
  shapes.push_back(BatchShape(*a, PrimitiveType::kS32, {}));
  XLAC_RETURN_IF_ERROR(ExpectResults(lc, shapes, kSignature));
  Builder b(module, comp, *lc.call);
  Instruction* eig = b.Decomposition(kEigTarget, {lc.args[0]}, shapes,
                                     fmt::format("{},{}", *left == 'V' ? 1 : 0, *right == 'V' ? 1 : 0));
  return Results(b, lc, Elements(b, eig));
}

// gees {mode, sort 'N'}: a -> (t, vs, w, sdim, info) for complex types, (t, vs, wr, wi, sdim, info) for real
// types; sdim 0 (nothing is selected without sorting), vs zeros for mode 'N'.
absl::StatusOr<Instruction*> Gees(Module& module, Computation& comp, const LapackCall& lc) {
  static constexpr std::string_view kSignature =
      "(a[..., n, n]) -> (t, vs, w[..., n], sdim s32[...], info s32[...]), or (t, vs, wr[..., n], wi[..., n], sdim, "
      "info) for real types";
  XLAC_ASSIGN_OR_RETURN(const Shape* a, MatrixOperand(lc, 5, kSignature));
  const std::optional<char> mode = lc.Flag("mode"), sort = lc.Flag("sort");
  if (lc.args.size() != 1 || !IsSquareMatrixBatch(*a) || !IsLapackType(a->element_type)) {
    return lc.Error(fmt::format("expected {} of f32, f64, c64 or c128, as jaxlib's gees", kSignature));
  }
  if (!mode || (*mode != 'N' && *mode != 'V')) return lc.Error("needs mode = 78 ('N') or 86 ('V')");
  if (sort == 'S') {
    return lc.Error(
        "sort = 83 ('S', ordering the eigenvalues by a select function) is not supported: jaxlib's own "
        "gees kernel rejects it too");
  }
  if (!sort || *sort != 'N') return lc.Error("needs sort = 78 ('N')");
  const int64_t n = a->dimensions.back();
  const bool real = !IsComplexType(a->element_type);
  Shape plain = *a;
  plain.layout.reset();
  std::vector<Shape> shapes = {plain, plain, BatchShape(*a, a->element_type, {n})};
  if (real) shapes.push_back(BatchShape(*a, a->element_type, {n}));
  const Shape info = BatchShape(*a, PrimitiveType::kS32, {});
  shapes.push_back(info);
  std::vector<Shape> expected = shapes;
  expected.insert(expected.end() - 1, info);  // sdim before info
  XLAC_RETURN_IF_ERROR(ExpectResults(lc, expected, kSignature));
  Builder b(module, comp, *lc.call);
  Instruction* schur = b.Decomposition(kSchurTarget, {lc.args[0]}, shapes);
  std::vector<Instruction*> values = Elements(b, schur);
  if (*mode == 'N') values[1] = b.Zeros(lc.results[1]);
  values.insert(values.end() - 1, b.Zeros(info));  // sdim
  return Results(b, lc, values);
}

absl::StatusOr<Instruction*> RewriteLapack(Module& module, Computation& comp, Instruction* call,
                                           const LapackTarget& t) {
  // The legacy API passes scalar descriptors first; the typed FFI (also under the old name, mid-2024) the arrays.
  const bool legacy =
      call->operand_count() > 0 && call->operand(0)->shape().IsArray() && call->operand(0)->shape().rank() == 0;
  LapackCall lc;
  if (legacy) {
    XLAC_ASSIGN_OR_RETURN(lc, LegacyCall(call, t));
  } else {
    lc = FfiCall(call);
  }
  if (t.gpu && (t.routine == "potrf" || t.routine == "syevd" || t.routine == "sytrd")) {
    const std::optional<int64_t> lower = ConfigInt(*call, "lower");
    if (!lower.has_value()) return CallError(*call, "needs lower = true or false, as jaxlib's GPU solver calls");
    lc.legacy = true;
    lc.attrs["uplo"] = *lower != 0 ? 'L' : 'U';
  }
  const std::string& r = t.routine;
  if (r == "potrf") return Potrf(module, comp, lc);
  if (r == "trsm") return Trsm(module, comp, lc);
  if (r == "getrf") return Getrf(module, comp, lc);
  if (r == "geqrf") return Geqrf(module, comp, lc);
  if (r == "orgqr" || r == "ungqr") return Orgqr(module, comp, lc);
  if (r == "syevd" || r == "heevd") return Syevd(module, comp, lc);
  if (r == "gesdd") return Gesdd(module, comp, lc);
  if (r == "gtsv") return Gtsv(module, comp, lc);
  if (r == "gehrd") return Gehrd(module, comp, lc);
  if (r == "sytrd" || r == "hetrd") return Sytrd(module, comp, lc);
  if (r == "geev") return Geev(module, comp, lc);
  return Gees(module, comp, lc);
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

// jax.random's Threefry-2x32 on GPU, which JAX exports as a custom call (cu_threefry2x32_ffi, hip_threefry2x32_ffi
// and the older names without _ffi): (k0, k1, x0, x1), u32 arrays of one shape -> (y0, y1). The 20 rounds of
// Salmon et al. (2011) with JAX's rotations and key schedule, in HLO, as JAX computes it on other platforms.
bool IsThreefryTarget(std::string_view target) {
  return target == "cu_threefry2x32_ffi" || target == "hip_threefry2x32_ffi" || target == "cu_threefry2x32" ||
         target == "hip_threefry2x32";
}

absl::StatusOr<Instruction*> Threefry(Module& module, Computation& comp, Instruction* call) {
  const std::vector<Shape> out = ResultLeaves(*call);
  bool ok = call->operand_count() == 4 && out.size() == 2;
  const Shape* first = ok ? &call->operand(0)->shape() : nullptr;
  for (int64_t i = 0; ok && i < 4; ++i) {
    const Shape& s = call->operand(i)->shape();
    ok = s.IsArray() && s.element_type == PrimitiveType::kU32 && s.dimensions == first->dimensions;
  }
  for (size_t i = 0; ok && i < out.size(); ++i) ok = out[i].IsArray() && out[i].Compatible(*first);
  if (!ok) return CallError(*call, "expected (k0, k1, x0, x1) -> (y0, y1), u32 arrays of one shape, as JAX's threefry");
  Builder b(module, comp, *call);
  Shape shape = *first;
  shape.layout.reset();
  auto constant = [&](uint32_t value) {
    Literal scalar(Shape::Scalar(PrimitiveType::kU32));
    std::memcpy(scalar.mutable_raw_data(), &value, sizeof(value));
    Instruction* c = b.Add(Opcode::kConstant, Shape::Scalar(PrimitiveType::kU32), {});
    c->set_literal(std::move(scalar));
    Instruction* all = b.Add(Opcode::kBroadcast, shape, {c});
    all->SetAttr("dimensions", AttrValue::IntList({}));
    return all;
  };
  auto op = [&](Opcode code, Instruction* x, Instruction* y) { return b.Add(code, shape, {x, y}); };
  auto rotate_left = [&](Instruction* v, uint32_t r) {
    return op(Opcode::kOr, op(Opcode::kShiftLeft, v, constant(r)), op(Opcode::kShiftRightLogical, v, constant(32 - r)));
  };
  Instruction* ks[3] = {call->operand(0), call->operand(1), nullptr};
  ks[2] = op(Opcode::kXor, op(Opcode::kXor, ks[0], ks[1]), constant(0x1BD11BDA));
  Instruction* x[2] = {op(Opcode::kAdd, call->operand(2), ks[0]), op(Opcode::kAdd, call->operand(3), ks[1])};
  static constexpr uint32_t kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  for (uint32_t group = 0; group < 5; ++group) {
    for (uint32_t r : kRotations[group % 2]) {
      x[0] = op(Opcode::kAdd, x[0], x[1]);
      x[1] = op(Opcode::kXor, x[0], rotate_left(x[1], r));
    }
    // Key injection after every four rounds: keys shift by one each time, plus the injection count.
    x[0] = op(Opcode::kAdd, x[0], ks[(group + 1) % 3]);
    x[1] = op(Opcode::kAdd, op(Opcode::kAdd, x[1], ks[(group + 2) % 3]), constant(group + 1));
  }
  return Results(b, *call, {x[0], x[1]});
}

absl::StatusOr<Instruction*> RewriteCall(Module& module, Computation& comp, Instruction* inst) {
  const std::string_view target = inst->StringAttr("custom_call_target");
  if (const std::optional<LapackTarget> lapack = ParseLapackTarget(target)) {
    return RewriteLapack(module, comp, inst, *lapack);
  }
  if (target == "ApproxTopK") return ApproxTopK(module, comp, inst);
  if (IsThreefryTarget(target)) return Threefry(module, comp, inst);
  if (IsGpuLibraryTarget(target)) return RewriteGpuLibraryCall(module, comp, inst);
  if (IsJaxlibTarget(target)) return RewriteJaxlibCall(module, comp, inst);
  return nullptr;
}

}  // namespace

absl::StatusOr<bool> RunLibraryCustomCalls(Module& module) { return RewriteCustomCalls(module, RewriteCall); }

bool RewriteLibraryCustomCalls(Module& module, DiagnosticEngine& diags) {
  return RewriteCustomCalls(module, RewriteCall, diags);
}

}  // namespace xlac
