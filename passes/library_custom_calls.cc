#include "passes/library_custom_calls.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/status_macros.h"
#include "passes/replace_call.h"

namespace xlac {
namespace {

// The message; the call's location goes with it (Run's `error_at`).
absl::Status CallError(const Instruction& call, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("custom-call %{} (target \"{}\"): {}", call.name(),
                                                std::string(call.StringAttr("custom_call_target")), why));
}

// `key = 76 : ui8` in the call's backend_config (an MLIR dictionary), as a character.
std::optional<char> Flag(const Instruction& call, std::string_view key) {
  const std::string& config = call.backend_config();
  for (size_t at = config.find(key); at != std::string::npos; at = config.find(key, at + 1)) {
    const bool starts = at == 0 || config[at - 1] == '{' || config[at - 1] == ' ' || config[at - 1] == ',';
    size_t i = at + key.size();
    while (i < config.size() && config[i] == ' ') ++i;
    if (!starts || i >= config.size() || config[i] != '=') continue;
    ++i;
    while (i < config.size() && config[i] == ' ') ++i;
    int64_t value = 0;
    size_t digits = 0;
    for (; i < config.size() && config[i] >= '0' && config[i] <= '9' && digits < 4; ++i, ++digits) {
      value = value * 10 + (config[i] - '0');
    }
    if (digits == 0 || value > 127) return std::nullopt;
    return static_cast<char>(value);
  }
  return std::nullopt;
}

bool IsLapackTarget(std::string_view target, std::string_view routine) {
  // lapack_{s,d,c,z}<routine>_ffi
  return target.size() == routine.size() + 12 && target.substr(0, 7) == "lapack_" &&
         std::string_view("sdcz").find(target[7]) != std::string_view::npos &&
         target.substr(8, routine.size()) == routine && target.substr(8 + routine.size()) == "_ffi";
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
      } else if (IsLapackTarget(target, "trsm")) {
        replacement = Trsm(module, *comp, inst);
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
