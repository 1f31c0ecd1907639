// One instruction: "[shape] opcode(operands), attr=value, ...". Operands may be nested anonymous instructions;
// omitted shapes are inferred. Per-opcode attribute sets come from parse_schema.cc; the semantic checks mirror the
// ones XLA's parser makes while creating instructions (operand counts, async op chains, conditional branches, ...).
#include <algorithm>

#include "fmt/format.h"
#include "frontend/hlo/parse_impl.h"
#include "frontend/hlo/parse_schema.h"
#include "ir/shape_inference.h"

namespace xlac::hlo {

bool CanInferShape(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAdd:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kAtan2:
    case Opcode::kAtanh:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kBroadcast:
    case Opcode::kCall:
    case Opcode::kCeil:
    case Opcode::kCholesky:
    case Opcode::kClamp:
    case Opcode::kClz:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kConcatenate:
    case Opcode::kConditional:
    case Opcode::kConvolution:
    case Opcode::kCopy:
    case Opcode::kCos:
    case Opcode::kCosh:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDivide:
    case Opcode::kDomain:
    case Opcode::kDot:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFft:
    case Opcode::kFloor:
    case Opcode::kGather:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kGetTupleElement:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kAnd:
    case Opcode::kNot:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kMap:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMulhi:
    case Opcode::kMultiply:
    case Opcode::kNegate:
    case Opcode::kPad:
    case Opcode::kPartitionId:
    case Opcode::kPopulationCount:
    case Opcode::kPower:
    case Opcode::kRaggedDot:
    case Opcode::kReal:
    case Opcode::kReduce:
    case Opcode::kRemainder:
    case Opcode::kReplicaId:
    case Opcode::kReverse:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kScan:
    case Opcode::kScaledDot:
    case Opcode::kScatter:
    case Opcode::kSelect:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSinh:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kSubtract:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kTranspose:
    case Opcode::kTriangularSolve:
    case Opcode::kTuple:
    case Opcode::kWhile:
    case Opcode::kTopK:
      return true;
    default:
      return false;
  }
}

namespace {

bool IsSugar(const PendingInstruction& inst) { return inst.async_wrapped_opcode.has_value(); }

// The opcode an async chain wraps: the sugar's opcode, or the root of the called computation.
std::optional<Opcode> WrappedOpcodeOf(const Instruction* async_op) {
  if (async_op->async_wrapped_opcode().has_value()) return async_op->async_wrapped_opcode();
  if (!async_op->called_computations().empty() && async_op->called_computation(0)->root() != nullptr) {
    return async_op->called_computation(0)->root()->opcode();
  }
  return std::nullopt;
}

const Instruction* AsyncStartOf(const Instruction* inst) {
  while (inst->opcode() == Opcode::kAsyncUpdate && inst->operand_count() == 1) inst = inst->operand(0);
  return inst;
}

std::string AsyncThreadOf(const Instruction* inst) {
  std::string_view thread = AsyncStartOf(inst)->StringAttr("async_execution_thread");
  return thread.empty() ? "main" : std::string(thread);
}

Shape WithLayouts(Shape shape) {
  shape.EnsureLayout();
  return shape;
}

std::string AllowedAttributes(const OpSchema& schema, bool sugar_start) {
  std::vector<std::string> names = {"backend_config",
                                    "control-predecessors",
                                    "frontend_attributes",
                                    "metadata",
                                    "origin",
                                    "parameter_replication",
                                    "sharding",
                                    "statistics"};
  for (const OpAttrSpec& a : schema.attrs) names.emplace_back(a.name);
  for (const CompAttrSpec& c : schema.computations) names.emplace_back(c.name);
  if (schema.result_accuracy) names.emplace_back("result_accuracy");
  if (sugar_start) {
    names.emplace_back("async_execution_thread");
    names.emplace_back("output_to_operand_aliasing");
    names.emplace_back("async_group_id");
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return fmt::format("{}", fmt::join(names, ", "));
}

// The shape XLA's parser gives the instructions it builds from their operands (HloInstruction::CreateSend,
// CreateSendDone, CreateRecv, CreateRecvDone, CreateInfeed, CreateOutfeed, CreateAfterAll, CreateAddDependency):
// the shape written in the text is ignored, except for the data element of recv and infeed, which cannot be
// derived. Data shapes keep their layouts (InferShape drops them, and checks operands that XLA leaves to the
// verifier). std::nullopt for every other opcode; an error message when the operands cannot give a shape (XLA
// check-fails there).
std::optional<absl::StatusOr<Shape>> ShapeBuiltByXla(const Instruction& inst) {
  auto operand_shape = [&](int64_t i) -> const Shape* {
    return i < inst.operand_count() && inst.operand(i) != nullptr ? &inst.operand(i)->shape() : nullptr;
  };
  const Shape context = Shape::Scalar(PrimitiveType::kU32);
  switch (inst.opcode()) {
    case Opcode::kSend:
      if (operand_shape(0) == nullptr) return std::nullopt;  // operand counts are checked before
      return Shape::Tuple({*operand_shape(0), context, Shape::Token()});
    case Opcode::kRecv:
    case Opcode::kInfeed: {
      const Shape& written = inst.shape();  // CheckInstruction requires a non-empty tuple
      if (!written.IsTuple() || written.tuple_shapes.empty()) return std::nullopt;
      if (inst.opcode() == Opcode::kInfeed) return Shape::Tuple({written.tuple_shapes[0], Shape::Token()});
      return Shape::Tuple({written.tuple_shapes[0], context, Shape::Token()});
    }
    case Opcode::kRecvDone: {
      const Shape* operand = operand_shape(0);
      if (operand == nullptr) return std::nullopt;
      if (!operand->IsTuple() || operand->tuple_shapes.empty()) {
        return absl::InvalidArgumentError(
            fmt::format("recv-done takes the (data, context, token) tuple of a recv, but its operand has shape {}",
                        ShapeToString(*operand)));
      }
      return Shape::Tuple({operand->tuple_shapes[0], Shape::Token()});
    }
    case Opcode::kSendDone:
    case Opcode::kOutfeed:
    case Opcode::kAfterAll:
      return Shape::Token();
    case Opcode::kAddDependency:
      if (operand_shape(0) == nullptr) return std::nullopt;
      return *operand_shape(0);
    default:
      return std::nullopt;
  }
}

}  // namespace

// The attribute set for an instruction: the wrapped op's for async syntax sugar.
static const OpSchema& EffectiveSchema(const PendingInstruction& inst) {
  static const OpSchema kSugarUpdateDone = [] {
    OpSchema s;
    s.attrs.push_back(OpAttrSpec{"async_execution_thread", false, {}, false});
    s.attrs.push_back(OpAttrSpec{"async_group_id", false, {}, false});
    return s;
  }();
  if (!IsSugar(inst)) return GetOpSchema(inst.opcode);
  if (inst.opcode != Opcode::kAsyncStart) return kSugarUpdateDone;
  return GetOpSchema(*inst.async_wrapped_opcode);
}

Instruction* Parser::ParseInstructionRhs(const std::string& name, size_t name_pos, bool allow_attributes,
                                         std::optional<Shape> preparsed_shape, size_t shape_pos) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded(), nullptr;
  PendingInstruction inst;
  inst.allow_attributes = allow_attributes;
  if (preparsed_shape.has_value()) {
    inst.shape = std::move(preparsed_shape);
    inst.shape_pos = shape_pos;
  } else if (CanBeShape()) {
    inst.shape_pos = pos();
    inst.shape.emplace();
    if (!ParseShape(&*inst.shape)) return nullptr;
  }

  inst.opcode_pos = pos();
  if (kind() != TokKind::kIdent) {
    TokenError(fmt::format("expects opcode, but sees {}",
                           kind() == TokKind::kEof ? std::string("end of input")
                                                   : fmt::format("'{}'", SourceText(tok().begin, tok().end))));
    return nullptr;
  }
  const std::string op_text = tok().str;
  if (std::optional<Opcode> op = xlac::ParseOpcode(op_text)) {
    inst.opcode = *op;
  } else {
    // Async syntax sugar: `<op>-start`, `<op>-update`, `<op>-done` for an <op> that has no such opcode of its own.
    bool is_sugar = false;
    for (auto [suffix, async_op] : {std::pair<std::string_view, Opcode>{"-start", Opcode::kAsyncStart},
                                    {"-update", Opcode::kAsyncUpdate},
                                    {"-done", Opcode::kAsyncDone}}) {
      std::string_view text = op_text;
      if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) continue;
      is_sugar = true;
      std::optional<Opcode> wrapped = xlac::ParseOpcode(text.substr(0, text.size() - suffix.size()));
      if (!wrapped.has_value()) {
        TokenError(fmt::format("expects async wrapped opcode but sees: {}", op_text));
        return nullptr;
      }
      if (IsAsyncOpcode(*wrapped) || *wrapped == Opcode::kParameter || *wrapped == Opcode::kConstant) {
        TokenError(fmt::format("{} cannot be wrapped in an async op", OpcodeName(*wrapped)));
        return nullptr;
      }
      inst.opcode = async_op;
      inst.async_wrapped_opcode = wrapped;
      break;
    }
    if (!is_sugar) {
      TokenError(fmt::format("unknown opcode: {}", op_text));
      return nullptr;
    }
  }
  Next();
  if (!inst.shape.has_value() && !CanInferShape(inst.opcode)) {
    Error(inst.opcode_pos, fmt::format("cannot infer shape for opcode: {}; the result shape must be written",
                                       IsSugar(inst) ? op_text : std::string(OpcodeName(inst.opcode))));
    return nullptr;
  }

  if (inst.opcode == Opcode::kParameter) {
    if (!Expect(TokKind::kLparen, "before the parameter number")) return nullptr;
    const size_t number_pos = pos();
    if (!ParseInt64(&inst.parameter_number)) return nullptr;
    if (inst.parameter_number < 0) return Error(number_pos, "parameter number must be >= 0"), nullptr;
    if (inst.parameter_number >= (int64_t{1} << 24)) return Error(number_pos, "parameter number is too large"), nullptr;
    if (!Expect(TokKind::kRparen, "after the parameter number")) return nullptr;
  } else if (inst.opcode == Opcode::kConstant) {
    if (!Expect(TokKind::kLparen, "before the constant literal")) return nullptr;
    inst.literal = std::make_unique<Literal>();
    if (!ParseLiteral(*inst.shape, inst.literal.get())) return nullptr;
    if (!Expect(TokKind::kRparen, "after the constant literal")) return nullptr;
  } else {
    if (!ParseOperands(&inst)) return nullptr;
  }
  if (!ParseInstructionAttributes(&inst) || !CheckInstruction(&inst)) return nullptr;
  return BuildInstruction(&inst, name, name_pos);
}

bool Parser::ParseOperands(PendingInstruction* inst) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  inst->operands_pos = pos();
  if (!Expect(TokKind::kLparen, "at the beginning of operands")) return false;
  if (kind() != TokKind::kRparen) {
    do {
      const size_t start = pos();
      std::optional<Shape> shape;
      if (CanBeShape()) {
        shape.emplace();
        if (!ParseShape(&*shape)) return false;
      }
      if (kind() == TokKind::kIdent && LookAhead() == TokKind::kLparen) {
        // A nested instruction: add(f32[] parameter(0), ...). It cannot have attributes: a comma after it
        // separates operands.
        Instruction* nested = ParseInstructionRhs("", start, /*allow_attributes=*/false, std::move(shape), start);
        if (nested == nullptr) return false;
        inst->operands.push_back({nested, start});
        continue;
      }
      if (kind() != TokKind::kIdent && kind() != TokKind::kName) {
        return TokenError("expects an operand: an instruction name or a nested instruction");
      }
      const size_t name_pos = pos();
      std::string name = tok().str;
      Next();
      Instruction* operand = FindInstruction(name);
      if (operand == nullptr) return Error(name_pos, fmt::format("instruction does not exist: {}", name));
      if (shape.has_value() && !ShapesCompatible(operand->shape(), *shape)) {
        return Error(start, fmt::format("the declared operand shape {} is not compatible with the shape of the "
                                        "operand instruction {}",
                                        ShapeToString(*shape), ShapeToString(operand->shape())));
      }
      inst->operands.push_back({operand, name_pos});
    } while (EatIfPresent(TokKind::kComma));
  }
  return Expect(TokKind::kRparen, "at the end of operands");
}

bool Parser::ParseInstructionAttributes(PendingInstruction* inst) {
  absl::flat_hash_set<std::string> seen;
  if (inst->allow_attributes) {
    while (EatIfPresent(TokKind::kComma)) {
      if (!ParseOneInstructionAttribute(inst, &seen)) return false;
    }
  }
  const OpSchema& schema = EffectiveSchema(*inst);
  for (const OpAttrSpec& spec : schema.attrs) {
    if (spec.required && !seen.contains(std::string(spec.name))) {
      return Error(inst->opcode_pos, fmt::format("attribute {} is expected but not seen", spec.name));
    }
  }
  for (const CompAttrSpec& spec : schema.computations) {
    if (spec.required && !seen.contains(std::string(spec.name))) {
      return Error(inst->opcode_pos, fmt::format("attribute {} is expected but not seen", spec.name));
    }
  }
  return true;
}

bool Parser::ParseOneInstructionAttribute(PendingInstruction* inst, absl::flat_hash_set<std::string>* seen) {
  const size_t name_pos = pos();
  std::string name;
  if (!ParseAttributeName(&name)) return false;
  if (!seen->insert(name).second) return Error(name_pos, fmt::format("attribute {} already exists", name));
  inst->attr_pos[name] = name_pos;
  const OpSchema& schema = EffectiveSchema(*inst);
  const bool sugar_start = IsSugar(*inst) && inst->opcode == Opcode::kAsyncStart;
  auto keep_raw = [&](const std::function<bool()>& parse) {
    const size_t begin = pos();
    if (!parse()) return false;
    inst->extra_attributes.emplace_back(name, std::string(SourceText(begin, prev_end())));
    return true;
  };

  // Attributes of every instruction.
  if (name == "sharding") {
    const size_t begin = pos();
    inst->sharding.emplace();
    TakeNamedShardingSeen();
    if (!ParseSharding(&*inst->sharding)) return false;
    // A named sharding means its converted tiled form, but prints back as written (print_attributes.cc).
    if (TakeNamedShardingSeen()) inst->extra_attributes.emplace_back(name, std::string(SourceText(begin, prev_end())));
    return true;
  }
  if (name == "metadata") {
    inst->metadata.emplace();
    return ParseMetadata(&*inst->metadata);
  }
  if (name == "frontend_attributes") {
    inst->frontend_attributes.emplace();
    return ParseFrontendAttributes(&*inst->frontend_attributes);
  }
  if (name == "backend_config") {
    inst->backend_config.emplace();
    return ParseBackendConfig(&inst->backend_config->first, &inst->backend_config->second);
  }
  if (name == "control-predecessors") {
    if (!Expect(TokKind::kLbrace, "at the beginning of the instruction name list")) return false;
    do {
      const size_t pred_pos = pos();
      std::string pred;
      if (!ParseName(&pred)) return false;
      Instruction* found = FindInstruction(pred);
      if (found == nullptr) return Error(pred_pos, fmt::format("instruction '{}' is not defined", pred));
      inst->control_predecessors.push_back(found);
    } while (EatIfPresent(TokKind::kComma));
    return Expect(TokKind::kRbrace, "at the end of the instruction name list");
  }
  if (name == "statistics") return keep_raw([&] { return ParseStatistics(); });
  if (name == "origin") {
    // The original value is a tree over the instruction's shape, so XLA needs the shape written out.
    if (!inst->shape.has_value()) {
      return Error(name_pos, "origin= requires the instruction's shape to be written explicitly");
    }
    return keep_raw([&] { return ParseOriginalValue(); });
  }
  if (name == "parameter_replication") {
    return keep_raw([&] {
      inst->parameter_replication.emplace();
      return ParseParameterReplication(&*inst->parameter_replication);
    });
  }
  if (name == "result_accuracy" && schema.result_accuracy) return keep_raw([&] { return ParseResultAccuracy(); });

  if (const CompAttrSpec* spec = FindCompAttrSpec(schema, name)) {
    std::vector<Computation*> comps;
    if (!ParseComputationRef(&comps, spec->is_list)) return false;
    inst->computation_attrs.emplace_back(name, std::move(comps));
    return true;
  }

  const OpAttrSpec* spec = FindAttrSpec(schema, name);
  OpAttrSpec async_spec;
  if (spec == nullptr && sugar_start &&
      (name == "async_execution_thread" || name == "output_to_operand_aliasing" || name == "async_group_id")) {
    async_spec.name = name;
    spec = &async_spec;
  }
  if (spec == nullptr) {
    std::string op_name =
        IsSugar(*inst) ? fmt::format("{} ({})", OpcodeName(inst->opcode), OpcodeName(*inst->async_wrapped_opcode))
                       : std::string(OpcodeName(inst->opcode));
    return Error(name_pos, fmt::format("unexpected attribute \"{}\" for {}. Allowed attributes: {}", name, op_name,
                                       AllowedAttributes(schema, sugar_start)));
  }
  std::optional<AttrKind> attr_kind = AttrKindForName(name);
  if (!attr_kind.has_value()) return Error(name_pos, fmt::format("internal error: no value kind for {}", name));
  const Opcode effective = sugar_start ? *inst->async_wrapped_opcode : inst->opcode;
  if (name == "slice_sizes" &&
      (effective == Opcode::kCollectivePermute || effective == Opcode::kCollectivePermuteStart)) {
    attr_kind = AttrKind::kIntListList;  // one list per in-place update operand
  }
  AttrValue value;
  if (name == "api_version" && kind() == TokKind::kIdent && tok().str == "API_VERSION_UNSPECIFIED") {
    // A valid protobuf enum name that XLA's parser refuses, but PyTorch/XLA (e.g. on Neuron) dumps write it for
    // custom-calls built without a version, which XLA runs with the original API: one meaning, so read it so.
    if (options_.strict) {
      return TokenError("invalid API version API_VERSION_UNSPECIFIED (XLA rejects it; write API_VERSION_ORIGINAL)");
    }
    // Once per module: exporters write it on every custom-call.
    if (!warned_unspecified_api_version_) {
      warned_unspecified_api_version_ = true;
      diags_.Report(Severity::kWarning, Loc(pos()),
                    "api_version=API_VERSION_UNSPECIFIED is read as API_VERSION_ORIGINAL, here and on every later "
                    "custom-call (XLA's parser rejects it; so does --strict)");
    }
    Next();
    inst->attrs.Set(name, AttrValue::Enum("API_VERSION_ORIGINAL"));
    return true;
  }
  if (!ParseAttrValue(name, *attr_kind, spec->enum_values, spec->enum_case_insensitive, &value)) return false;
  inst->attrs.Set(name, std::move(value));
  return true;
}

bool Parser::CheckInstruction(PendingInstruction* inst) {
  const Opcode op = inst->opcode;
  const int64_t n = static_cast<int64_t>(inst->operands.size());
  const bool sugar = IsSugar(*inst);
  auto attr_at = [&](std::string_view name) {
    auto it = inst->attr_pos.find(std::string(name));
    return it == inst->attr_pos.end() ? inst->opcode_pos : it->second;
  };
  auto operand_shape = [&](int64_t i) -> const Shape& { return inst->operands[i].inst->shape(); };
  auto int_list = [&](std::string_view name) -> const std::vector<int64_t>* {
    const AttrValue* v = inst->attrs.Find(name);
    return v != nullptr && v->kind == AttrKind::kIntList ? &v->get<std::vector<int64_t>>() : nullptr;
  };
  auto count_error = [&](int64_t expected) {
    return Error(inst->operands_pos, fmt::format("expects {} operands, but has {} operands", expected, n));
  };
  auto comps_of = [&](std::string_view name) -> const std::vector<Computation*>* {
    for (const auto& [attr, comps] : inst->computation_attrs) {
      if (attr == name) return &comps;
    }
    return nullptr;
  };

  if (op == Opcode::kParameter || op == Opcode::kConstant) return true;

  // Operand counts.
  if (op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone) {
    if (n != 1 || (inst->operands[0].inst->opcode() != Opcode::kAsyncStart &&
                   inst->operands[0].inst->opcode() != Opcode::kAsyncUpdate)) {
      return Error(inst->operands_pos, "AsyncUpdate and AsyncDone expect a single async op as their operand");
    }
  } else {
    const Opcode effective = sugar ? *inst->async_wrapped_opcode : op;
    std::optional<int> expected = OpcodeArity(effective);
    if (effective == Opcode::kConvolution) expected = 2;
    if (effective == Opcode::kDot) {
      int descriptors = 0;
      if (const AttrValue* sparsity = inst->attrs.Find("sparsity")) {
        const std::string& text = sparsity->get<std::string>();
        descriptors = 1 + static_cast<int>(std::count(text.begin(), text.end(), '_'));
      }
      expected = 2 + descriptors;
    }
    if (expected.has_value() && n != *expected) return count_error(*expected);
  }

  switch (sugar && op == Opcode::kAsyncStart ? *inst->async_wrapped_opcode : op) {
    case Opcode::kBroadcast:
      if (inst->attrs.Find("dimensions") == nullptr) {
        // XLA lets a broadcast of a scalar omit dimensions={}.
        if (!operand_shape(0).IsScalar()) {
          return Error(inst->opcode_pos, "attribute dimensions is expected but not seen");
        }
        inst->attrs.Set("dimensions", AttrValue::IntList({}));
      }
      break;
    case Opcode::kConditional: {
      if (n < 1) return count_error(2);
      const Shape& index = operand_shape(0);
      if (!index.IsScalar()) return Error(inst->operands[0].pos, "the first operand must be a scalar");
      const auto* t = comps_of("true_computation");
      const auto* f = comps_of("false_computation");
      const auto* branches = comps_of("branch_computations");
      size_t num_branches;
      if (index.element_type == PrimitiveType::kPred) {
        if (branches != nullptr) {
          return Error(attr_at("branch_computations"),
                       "a conditional with a pred branch index takes true_computation and false_computation, not "
                       "branch_computations");
        }
        if (t == nullptr) return Error(inst->opcode_pos, "attribute true_computation is expected but not seen");
        if (f == nullptr) return Error(inst->opcode_pos, "attribute false_computation is expected but not seen");
        num_branches = 2;
      } else if (index.element_type == PrimitiveType::kS32) {
        if (t != nullptr || f != nullptr) {
          return Error(attr_at(t != nullptr ? "true_computation" : "false_computation"),
                       "a conditional with an s32 branch index takes branch_computations");
        }
        if (branches == nullptr) {
          return Error(inst->opcode_pos, "attribute branch_computations is expected but not seen");
        }
        if (branches->empty()) return Error(attr_at("branch_computations"), "branch_computations is empty");
        num_branches = branches->size();
      } else {
        return Error(inst->operands[0].pos, "the first operand must be a scalar of PRED or S32");
      }
      if (static_cast<size_t>(n) != num_branches + 1) {
        return Error(inst->operands_pos,
                     fmt::format("conditional has {} branch computations but {} branch operands", num_branches, n - 1));
      }
      break;
    }
    case Opcode::kCustomCall: {
      if (comps_of("to_apply") != nullptr && comps_of("called_computations") != nullptr) {
        return Error(attr_at("called_computations"),
                     "a single instruction can't have both to_apply and called_computations");
      }
      if (const AttrValue* constraints = inst->attrs.Find("operand_layout_constraints")) {
        const auto& shapes = constraints->get<std::vector<Shape>>();
        const size_t at = attr_at("operand_layout_constraints");
        if (static_cast<int64_t>(shapes.size()) != n) {
          return Error(at, fmt::format("expected {} operand layout constraints, {} given", n, shapes.size()));
        }
        for (int64_t i = 0; i < n; ++i) {
          if (!ShapesCompatible(shapes[i], operand_shape(i))) {
            return Error(at, fmt::format("operand layout constraint shape {} for operand {} is not compatible with "
                                         "operand shape {}",
                                         ShapeToString(shapes[i]), i, ShapeToString(operand_shape(i))));
          }
        }
      }
      break;
    }
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart: {
      const auto& pairs = inst->attrs.Find("source_target_pairs")->get<std::vector<std::vector<int64_t>>>();
      for (const auto& pair : pairs) {
        if (pair.size() != 2) {
          return Error(attr_at("source_target_pairs"), "expects 'source_target_pairs=' to be a list of pairs");
        }
      }
      if (inst->attrs.Find("slice_sizes") != nullptr && n != 4) {
        return Error(inst->operands_pos,
                     "collective-permute with slice_sizes must have exactly four operands for dynamic-slice and "
                     "in-place update");
      }
      break;
    }
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
      if (const auto* dims = int_list("dimensions"); dims != nullptr && dims->size() != 1) {
        return Error(attr_at("dimensions"), "expects exactly one dimension (the split dimension)");
      }
      break;
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kSort:
    case Opcode::kConcatenate:
    case Opcode::kScan:
      if (const auto* dims = int_list("dimensions"); dims != nullptr && dims->size() != 1) {
        return Error(attr_at("dimensions"), "expects exactly one dimension");
      }
      if (op == Opcode::kScan) {
        const Computation* body = comps_of("to_apply")->front();
        if (n != body->parameter_count()) {
          return Error(inst->operands_pos, fmt::format("expects {} operands to match the number of parameters of "
                                                       "to_apply, but to_apply has {} parameters",
                                                       n, body->parameter_count()));
        }
        if (n < inst->attrs.Find("num_carries")->get<int64_t>() ||
            inst->attrs.Find("num_carries")->get<int64_t>() < 0) {
          return Error(attr_at("num_carries"), "num_carries must be between 0 and the number of operands");
        }
      }
      break;
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      if (n == 0 || n % 2 != 0) {
        return Error(inst->operands_pos, fmt::format("expects an even, non-zero number of operands, but has {} "
                                                     "operands",
                                                     n));
      }
      break;
    case Opcode::kScatter:
      if (n % 2 == 0) {
        return Error(inst->operands_pos, fmt::format("expects an odd number of operands, but has {} operands", n));
      }
      break;
    case Opcode::kDynamicSlice:
      if (n < 1) return Error(inst->operands_pos, "expected at least one operand");
      if (!(n == 2 && operand_shape(1).rank() == 1) && n != 1 + operand_shape(0).rank()) {
        return Error(inst->operands_pos, "wrong number of operands");
      }
      break;
    case Opcode::kDynamicUpdateSlice:
      if (n < 2) return Error(inst->operands_pos, "expected at least two operands");
      if (!(n == 3 && operand_shape(2).rank() == 1) && n != 2 + operand_shape(0).rank()) {
        return Error(inst->operands_pos, "wrong number of operands");
      }
      break;
    case Opcode::kInfeed:
      if (!inst->shape->IsTuple() || inst->shape->tuple_shapes.empty()) {
        return Error(inst->shape_pos, "infeed must have a non-empty tuple shape");
      }
      break;
    case Opcode::kRecv:
      if (!inst->shape->IsTuple() || inst->shape->tuple_shapes.empty()) {
        return Error(inst->shape_pos, "recv must have a tuple shape (data, context, token)");
      }
      break;
    case Opcode::kRecvDone:
    case Opcode::kSendDone: {
      const Instruction* operand = inst->operands[0].inst;
      const Opcode start = op == Opcode::kRecvDone ? Opcode::kRecv : Opcode::kSend;
      if (operand->opcode() == start) {
        const AttrValue* mine = inst->attrs.Find("channel_id");
        const AttrValue* theirs = operand->FindAttr("channel_id");
        if ((mine == nullptr) != (theirs == nullptr) ||
            (mine != nullptr && mine->get<int64_t>() != theirs->get<int64_t>())) {
          return Error(
              mine != nullptr ? attr_at("channel_id") : inst->opcode_pos,
              fmt::format("channel_id of {} does not match that of its operand {}", OpcodeName(op), operand->name()));
        }
      }
      break;
    }
    default:
      break;
  }

  // Async chains.
  if (op == Opcode::kAsyncStart) {
    const Shape& shape = *inst->shape;
    if (!shape.IsTuple() || shape.tuple_shapes.size() < 2 || !shape.tuple_shapes[0].IsTuple()) {
      return Error(inst->shape_pos,
                   "AsyncStart expects the op shape to be in the form of ((async-operands), async-outputs, state)");
    }
  }
  if (op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone) {
    const Instruction* operand = inst->operands[0].inst;
    if (op == Opcode::kAsyncUpdate && !(WithLayouts(operand->shape()) == WithLayouts(*inst->shape))) {
      return Error(inst->shape_pos, "AsyncUpdate expects the op shape to be the same as the operand shape");
    }
    if (sugar) {
      std::optional<Opcode> wrapped = WrappedOpcodeOf(operand);
      if (wrapped != inst->async_wrapped_opcode) {
        return Error(inst->opcode_pos, fmt::format("expect async wrapped opcode to be {}, but got {}",
                                                   wrapped.has_value() ? OpcodeName(*wrapped) : "none",
                                                   OpcodeName(*inst->async_wrapped_opcode)));
      }
    } else if (const auto* calls = comps_of("calls")) {
      if (operand->called_computations().empty() || calls->front() != operand->called_computation(0)) {
        return Error(
            attr_at("calls"),
            fmt::format("expect async_wrapped_computation to be {}, but got {}",
                        operand->called_computations().empty() ? "none" : operand->called_computation(0)->name(),
                        calls->front()->name()));
      }
    }
    if (const AttrValue* thread = inst->attrs.Find("async_execution_thread")) {
      std::string expected = AsyncThreadOf(operand);
      if (thread->get<std::string>() != expected) {
        return Error(
            attr_at("async_execution_thread"),
            fmt::format("expect async_execution_thread to be {}, but got {}", expected, thread->get<std::string>()));
      }
    }
  }
  return true;
}

Instruction* Parser::BuildInstruction(PendingInstruction* pending, const std::string& written_name, size_t name_pos) {
  std::vector<Instruction*> operands;
  operands.reserve(pending->operands.size());
  for (const ParsedOperand& operand : pending->operands) operands.push_back(operand.inst);
  Shape shape = pending->shape.has_value() ? *pending->shape : Shape();
  std::unique_ptr<Instruction> inst =
      pending->opcode == Opcode::kParameter
          ? Instruction::CreateParameter(pending->parameter_number, "", std::move(shape))
          : Instruction::Create(pending->opcode, "", std::move(shape), std::move(operands));
  auto fail = [&]() -> Instruction* {
    inst->DetachFromOperandsAndEdges();
    return nullptr;
  };

  inst->mutable_attrs() = std::move(pending->attrs);
  // Called computations in XLA's order, which is the schema's order of the computation attributes.
  std::vector<Computation*> called;
  const OpSchema& schema = EffectiveSchema(*pending);
  for (const CompAttrSpec& spec : schema.computations) {
    for (const auto& [attr, comps] : pending->computation_attrs) {
      if (attr == spec.name) called.insert(called.end(), comps.begin(), comps.end());
    }
  }
  if ((pending->opcode == Opcode::kAsyncUpdate || pending->opcode == Opcode::kAsyncDone) && called.empty()) {
    called = pending->operands[0].inst->called_computations();  // inherited from the async-start
  }
  inst->set_called_computations(std::move(called));
  if (pending->literal != nullptr) inst->set_literal(std::move(*pending->literal));
  inst->set_async_wrapped_opcode(pending->async_wrapped_opcode);
  if (pending->sharding.has_value()) inst->set_sharding(std::move(pending->sharding));
  if (pending->metadata.has_value()) *inst->mutable_metadata() = std::move(*pending->metadata);
  if (pending->frontend_attributes.has_value()) {
    *inst->mutable_frontend_attributes() = std::move(*pending->frontend_attributes);
  }
  if (pending->backend_config.has_value()) {
    inst->set_backend_config(std::move(pending->backend_config->first), pending->backend_config->second);
  }
  *inst->mutable_extra_attributes() = std::move(pending->extra_attributes);

  if (std::optional<absl::StatusOr<Shape>> built = ShapeBuiltByXla(*inst)) {
    if (!built->ok()) {
      Error(pending->operands_pos, std::string(built->status().message()));
      return fail();
    }
    inst->set_shape(**std::move(built));
  } else if (!pending->shape.has_value()) {
    absl::StatusOr<Shape> inferred = InferShape(*inst);
    if (!inferred.ok()) {
      Error(pending->opcode_pos, fmt::format("failed to infer shape for opcode: {}, error: {}",
                                             OpcodeName(pending->opcode), std::string(inferred.status().message())));
      return fail();
    }
    inst->set_shape(*std::move(inferred));
  }
  if (pending->parameter_replication.has_value()) {
    int64_t leaves = LeafCount(inst->shape());
    if (leaves != static_cast<int64_t>(pending->parameter_replication->size())) {
      Error(pending->attr_pos["parameter_replication"],
            fmt::format("parameter has {} leaf buffers, but parameter_replication has {} elements", leaves,
                        pending->parameter_replication->size()));
      return fail();
    }
  }

  std::string name = written_name.empty()
                         ? instruction_names_.GetUniqueName(fmt::format("{}.anon", OpcodeName(pending->opcode)))
                         : written_name;
  if (!written_name.empty()) instruction_names_.GetUniqueName(written_name);
  if (auto it = scope().names.find(name); it != scope().names.end()) {
    Error(name_pos, fmt::format("instruction already exists: {}", name));
    Note(it->second.second, "instruction previously defined here");
    return fail();
  }
  Computation* comp = scope().computation;
  if (pending->opcode == Opcode::kParameter) {
    const auto& params = comp->parameters();
    const int64_t number = pending->parameter_number;
    if (number < static_cast<int64_t>(params.size()) && params[number] != nullptr) {
      Error(name_pos, fmt::format("parameter number {} already allocated in this computation", number));
      diags_.Note(params[number]->loc(), fmt::format("parameter({}) previously defined here", number));
      return fail();
    }
  }
  inst->set_name(name);
  inst->set_loc(Loc(name_pos));
  Instruction* raw = comp->AddInstruction(std::move(inst));
  scope().names[name] = {raw, name_pos};
  scope().last_added = raw;
  for (Instruction* predecessor : pending->control_predecessors) predecessor->AddControlDependencyTo(raw);
  if (pending->opcode == Opcode::kFusion) {
    for (Computation* callee : raw->called_computations()) callee->set_is_fusion_computation(true);
  }
  if (pending->opcode == Opcode::kAsyncStart && !pending->async_wrapped_opcode.has_value()) {
    async_callers_[raw->called_computation(0)].push_back({raw, pending->attr_pos["calls"]});
  }
  return raw;
}

}  // namespace xlac::hlo
