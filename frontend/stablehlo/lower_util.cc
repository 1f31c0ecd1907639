// Lowering helpers: MLIR types -> shapes, attribute accessors, instruction emission, and the op dispatcher.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {

// ---------------------------------------------------------------------------------------------------------------
// Types

bool Lowerer::ToShape(const Type& type, size_t pos, Shape* out) {
  switch (type.kind) {
    case Type::Kind::kTensor: {
      // A !quant.uniform element lowers as its storage type (`element`); lower_quant.cc does the arithmetic.
      if (type.quantized && !type.quant)
        return Error(pos, fmt::format("quantized types are not supported: {}", type.text));
      if (type.unranked) return Error(pos, fmt::format("unranked tensors are not supported: {}", type.text));
      if (type.element == PrimitiveType::kInvalid) return Error(pos, fmt::format("unsupported type {}", type.text));
      std::vector<int64_t> dims = type.dims;
      std::vector<bool> dynamic(dims.size(), false);
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] != Type::kDynamic) continue;
        if (type.bounds.size() != dims.size() || type.bounds[i] == Type::kDynamic) {
          // Refinement gives it a size when the op producing it is lowered (RefineNewInstructions).
          if (refining_) {
            dims[i] = Shape::kUnboundedSize;
            dynamic[i] = true;
            continue;
          }
          return Error(pos, fmt::format("dynamic shapes are not supported: {} (only bounded dimensions are; a "
                                        "shape-polymorphic export is refined from its entry arguments' shapes: give "
                                        "them with xla-run --input or xlac --arg-shape)",
                                        TypeToString(type)));
        }
        dims[i] = type.bounds[i];
        dynamic[i] = true;
      }
      *out = Shape(type.element, std::move(dims));
      out->dynamic_dimensions = std::move(dynamic);
      return true;
    }
    case Type::Kind::kToken:
      *out = Shape::Token();
      return true;
    case Type::Kind::kTuple: {
      std::vector<Shape> elements(type.elements.size());
      for (size_t i = 0; i < elements.size(); ++i) {
        if (!ToShape(type.elements[i], pos, &elements[i])) return false;
      }
      *out = Shape::Tuple(std::move(elements));
      return true;
    }
    case Type::Kind::kOther:
      if (type.quantized) return Error(pos, fmt::format("quantized types are not supported: {}", type.text));
      return Error(pos, fmt::format("type {} has no HLO equivalent", type.text));
    default:
      return Error(pos, fmt::format("type {} cannot be the type of a value", TypeToString(type)));
  }
}

bool Lowerer::ResultShape(const Op& op, size_t i, Shape* out) {
  if (i >= op.result_types.size()) {
    return OpError(op, fmt::format("'{}' needs {} result type{}", op.name, i + 1, i == 0 ? "" : "s"));
  }
  return ToShape(op.result_types[i], op.result_types[i].pos, out);
}

bool Lowerer::ResultShapes(const Op& op, std::vector<Shape>* out) {
  out->resize(op.result_types.size());
  for (size_t i = 0; i < out->size(); ++i) {
    if (!ToShape(op.result_types[i], op.result_types[i].pos, &(*out)[i])) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Attributes

const Attr* Lowerer::FindAttr(const Op& op, std::string_view name) const {
  const NamedAttr* a = op.FindAttr(name);
  return a == nullptr ? nullptr : a->value.get();
}

bool Lowerer::RequireAttr(const Op& op, std::string_view name, const Attr** out) {
  *out = FindAttr(op, name);
  if (*out == nullptr) return OpError(op, fmt::format("'{}' requires the attribute '{}'", op.name, name));
  return true;
}

bool Lowerer::AttrToI64List(const Attr& attr, std::vector<int64_t>* out) {
  out->clear();
  switch (attr.kind) {
    case Attr::Kind::kDenseArray:
    case Attr::Kind::kArray:
      for (const AttrPtr& e : attr.elements) {
        if (e->kind != Attr::Kind::kInt && e->kind != Attr::Kind::kBool) {
          return Error(e->pos, "expected an integer");
        }
        out->push_back(e->int_value);
      }
      return true;
    case Attr::Kind::kDense: {
      const Literal& lit = *attr.dense;
      if (lit.is_unknown()) return Error(attr.pos, kElidedValues);
      if (!IsIntegralType(lit.shape().element_type) && !IsPredType(lit.shape().element_type)) {
        return Error(attr.pos, "expected integer elements");
      }
      for (int64_t i = 0; i < lit.element_count(); ++i) out->push_back(lit.GetAsInt64(i));
      return true;
    }
    case Attr::Kind::kInt:
      out->push_back(attr.int_value);
      return true;
    default:
      return Error(attr.pos, "expected a list of integers");
  }
}

bool Lowerer::GetI64List(const Op& op, std::string_view name, std::vector<int64_t>* out, bool required) {
  const Attr* a = FindAttr(op, name);
  if (a == nullptr) {
    out->clear();
    return required ? OpError(op, fmt::format("'{}' requires the attribute '{}'", op.name, name)) : true;
  }
  return AttrToI64List(*a, out);
}

bool Lowerer::GetI64Pairs(const Op& op, std::string_view name, std::vector<std::pair<int64_t, int64_t>>* out) {
  out->clear();
  const Attr* a = FindAttr(op, name);
  if (a == nullptr) return true;
  std::vector<int64_t> flat;
  if (a->kind == Attr::Kind::kArray && !a->elements.empty() && a->elements[0]->kind != Attr::Kind::kInt) {
    for (const AttrPtr& row : a->elements) {
      std::vector<int64_t> values;
      if (!AttrToI64List(*row, &values)) return false;
      if (values.size() != 2) return Error(row->pos, fmt::format("'{}' needs pairs of integers", name));
      flat.insert(flat.end(), values.begin(), values.end());
    }
  } else {
    if (!AttrToI64List(*a, &flat)) return false;
    if (a->kind == Attr::Kind::kDense) {
      const Shape& s = a->dense->shape();
      if (!(s.rank() == 2 && s.dimensions[1] == 2) && !(s.rank() == 1 && s.dimensions[0] == 0) &&
          !(s.rank() == 2 && s.dimensions[0] == 0)) {
        return Error(a->pos, fmt::format("'{}' must have shape [N, 2]", name));
      }
    }
  }
  if (flat.size() % 2 != 0) return Error(a->pos, fmt::format("'{}' needs pairs of integers", name));
  for (size_t i = 0; i < flat.size(); i += 2) out->emplace_back(flat[i], flat[i + 1]);
  return true;
}

bool Lowerer::GetBoolList(const Op& op, std::string_view name, std::vector<bool>* out) {
  out->clear();
  const Attr* a = FindAttr(op, name);
  if (a == nullptr) return true;
  std::vector<int64_t> values;
  if (!AttrToI64List(*a, &values)) return false;
  for (int64_t v : values) out->push_back(v != 0);
  return true;
}

bool Lowerer::GetInt(const Op& op, std::string_view name, int64_t* out, std::optional<int64_t> default_value) {
  const Attr* a = FindAttr(op, name);
  if (a == nullptr) {
    if (!default_value.has_value()) return OpError(op, fmt::format("'{}' requires the attribute '{}'", op.name, name));
    *out = *default_value;
    return true;
  }
  if (a->kind == Attr::Kind::kInt) {
    *out = a->int_value;
    return true;
  }
  if (a->kind == Attr::Kind::kDense && a->dense->is_unknown()) return Error(a->pos, kElidedValues);
  if (a->kind == Attr::Kind::kDense && a->dense->element_count() == 1 &&
      IsIntegralType(a->dense->shape().element_type)) {
    *out = a->dense->GetAsInt64(0);
    return true;
  }
  return Error(a->pos, fmt::format("'{}' must be an integer", name));
}

bool Lowerer::IsUnitOrTrue(const Attr& attr) {
  return attr.kind == Attr::Kind::kUnit || (attr.kind == Attr::Kind::kBool && attr.bool_value);
}

bool Lowerer::GetBool(const Op& op, std::string_view name, bool* out, bool default_value) {
  const Attr* a = FindAttr(op, name);
  if (a == nullptr) {
    *out = default_value;
    return true;
  }
  if (a->kind == Attr::Kind::kUnit || a->kind == Attr::Kind::kBool) {
    *out = IsUnitOrTrue(*a);
    return true;
  }
  return Error(a->pos, fmt::format("'{}' must be a boolean", name));
}

bool Lowerer::GetString(const Op& op, std::string_view name, std::string* out, std::optional<std::string> def) {
  const Attr* a = FindAttr(op, name);
  if (a == nullptr) {
    if (!def.has_value()) return OpError(op, fmt::format("'{}' requires the attribute '{}'", op.name, name));
    *out = *def;
    return true;
  }
  if (a->kind == Attr::Kind::kString || a->kind == Attr::Kind::kSymbol) {
    *out = a->str;
    return true;
  }
  return Error(a->pos, fmt::format("'{}' must be a string", name));
}

bool Lowerer::GetEnum(const Op& op, std::string_view name, std::string* out, std::optional<std::string> def) {
  const Attr* a = FindAttr(op, name);
  if (a == nullptr) {
    if (!def.has_value()) return OpError(op, fmt::format("'{}' requires the attribute '{}'", op.name, name));
    *out = *def;
    return true;
  }
  switch (a->kind) {
    case Attr::Kind::kEnum:
    case Attr::Kind::kKeyword:
    case Attr::Kind::kString:
      *out = a->str;
      return true;
    case Attr::Kind::kDict:
      // #stablehlo.result_accuracy_mode<DEFAULT>-style wrappers hold the value positionally.
      if (a->dict.size() == 1 && a->dict[0].first.empty() && a->dict[0].second->kind == Attr::Kind::kKeyword) {
        *out = a->dict[0].second->str;
        return true;
      }
      break;
    case Attr::Kind::kInt:
      *out = std::to_string(a->int_value);
      return true;
    default:
      break;
  }
  return Error(a->pos, fmt::format("'{}' must be an enum value", name));
}

bool Lowerer::DictI64List(const Attr& dict, std::string_view key, std::vector<int64_t>* out) {
  out->clear();
  const Attr* a = dict.Find(key);
  return a == nullptr || AttrToI64List(*a, out);
}

bool Lowerer::DictInt(const Attr& dict, std::string_view key, int64_t* out, int64_t default_value) {
  const Attr* a = dict.Find(key);
  if (a == nullptr) {
    *out = default_value;
    return true;
  }
  if (a->kind != Attr::Kind::kInt) return Error(a->pos, fmt::format("'{}' must be an integer", key));
  *out = a->int_value;
  return true;
}

bool Lowerer::GetReplicaGroups(const Op& op, ReplicaGroups* out) {
  const Attr* a = FindAttr(op, "replica_groups");
  if (a == nullptr) return true;
  if (a->kind == Attr::Kind::kDense) {
    const Literal& lit = *a->dense;
    const Shape& s = lit.shape();
    if (lit.is_unknown()) return Error(a->pos, kElidedValues);
    if (s.rank() != 2) return Error(a->pos, "replica_groups must be a rank-2 tensor");
    for (int64_t r = 0; r < s.dimensions[0]; ++r) {
      std::vector<int64_t> group;
      for (int64_t c = 0; c < s.dimensions[1]; ++c) {
        int64_t v = lit.GetAsInt64(r * s.dimensions[1] + c);
        if (v >= 0) group.push_back(v);  // -1 pads groups of unequal size
      }
      out->groups.push_back(std::move(group));
    }
    return true;
  }
  if (a->kind == Attr::Kind::kArray) {
    for (const AttrPtr& row : a->elements) {
      std::vector<int64_t> group;
      if (!AttrToI64List(*row, &group)) return false;
      out->groups.push_back(std::move(group));
    }
    return true;
  }
  return Error(a->pos, "unsupported replica_groups form");
}

bool Lowerer::SetChannelId(const Op& op, Instruction* inst) {
  if (const Attr* handle = FindAttr(op, "channel_handle")) {
    if (handle->kind != Attr::Kind::kDict)
      return Error(handle->pos, "channel_handle must be #stablehlo.channel_handle");
    int64_t id = 0;
    if (!DictInt(*handle, "handle", &id, 0)) return false;
    if (id > 0) inst->SetAttr("channel_id", AttrValue::Int(id));
    return true;
  }
  if (const Attr* id = FindAttr(op, "channel_id"); id != nullptr && id->kind == Attr::Kind::kInt && id->int_value > 0) {
    inst->SetAttr("channel_id", AttrValue::Int(id->int_value));
  }
  return true;
}

bool Lowerer::GetPrecisionConfig(const Op& op, std::vector<std::string>* out) {
  out->clear();
  const Attr* a = FindAttr(op, "precision_config");
  if (a == nullptr) return true;
  if (a->kind != Attr::Kind::kArray) return Error(a->pos, "precision_config must be a list");
  for (const AttrPtr& e : a->elements) {
    if (e->kind != Attr::Kind::kEnum && e->kind != Attr::Kind::kKeyword) {
      return Error(e->pos, "expected a precision (DEFAULT, HIGH, HIGHEST)");
    }
    std::string v = e->str;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    if (v != "default" && v != "high" && v != "highest" && v != "packed_nibble") {
      return Error(e->pos, fmt::format("unknown precision {}", e->str));
    }
    out->push_back(std::move(v));
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Emission

Instruction* Lowerer::Emit(Opcode opcode, Shape shape, std::vector<Instruction*> operands) {
  auto inst = Instruction::Create(opcode, NewName(OpcodeName(opcode)), std::move(shape), std::move(operands));
  inst->set_loc(cur_loc_);
  if (cur_metadata_.has_value()) *inst->mutable_metadata() = *cur_metadata_;
  return scope_->comp->AddInstruction(std::move(inst));
}

Instruction* Lowerer::EmitConstant(Literal literal) {
  auto inst = Instruction::CreateConstant(NewName("constant"), std::move(literal));
  inst->set_loc(cur_loc_);
  if (cur_metadata_.has_value()) *inst->mutable_metadata() = *cur_metadata_;
  return scope_->comp->AddInstruction(std::move(inst));
}

Instruction* Lowerer::EmitGte(Instruction* tuple, int64_t index) {
  Instruction* gte = Emit(Opcode::kGetTupleElement, tuple->shape().tuple_shapes[static_cast<size_t>(index)], {tuple});
  gte->SetAttr("index", AttrValue::Int(index));
  return gte;
}

Instruction* Lowerer::EmitTuple(std::vector<Instruction*> elements) {
  std::vector<Shape> shapes;
  for (Instruction* e : elements) shapes.push_back(e->shape());
  return Emit(Opcode::kTuple, Shape::Tuple(std::move(shapes)), std::move(elements));
}

std::vector<Instruction*> Lowerer::SplitTuple(Instruction* tuple, int64_t n) {
  split_source_ = tuple;
  std::vector<Instruction*> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(EmitGte(tuple, i));
  return out;
}

Instruction* Lowerer::ConstScalar(PrimitiveType type, double v) {
  Literal lit(Shape::Scalar(type));
  lit.SetFromDouble(0, v);
  return EmitConstant(std::move(lit));
}

Instruction* Lowerer::BroadcastTo(Instruction* x, const Shape& shape, std::vector<int64_t> dims) {
  Instruction* b = Emit(Opcode::kBroadcast, Shape(x->shape().element_type, shape.dimensions), {x});
  b->mutable_shape()->dynamic_dimensions = shape.dynamic_dimensions;
  b->SetAttr("dimensions", AttrValue::IntList(std::move(dims)));
  return b;
}

Instruction* Lowerer::BroadcastInDim(Instruction* x, const Shape& shape, const std::vector<int64_t>& dims) {
  const Shape& in = x->shape();
  if (static_cast<int64_t>(dims.size()) != in.rank()) {
    return Error(cur_op_ != nullptr ? cur_op_->name_pos : 0,
                 fmt::format("broadcast dimensions has {} entries for a rank-{} operand", dims.size(), in.rank())),
           nullptr;
  }
  std::vector<int64_t> kept_dims, kept_sizes;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= shape.rank()) {
      return Error(cur_op_ != nullptr ? cur_op_->name_pos : 0,
                   fmt::format("broadcast dimension {} is out of range for the result", dims[i])),
             nullptr;
    }
    const int64_t out_size = shape.dimensions[static_cast<size_t>(dims[i])];
    if (in.dimensions[i] == out_size) {
      kept_dims.push_back(dims[i]);
      kept_sizes.push_back(in.dimensions[i]);
    } else if (in.dimensions[i] != 1) {
      return Error(cur_op_ != nullptr ? cur_op_->name_pos : 0,
                   fmt::format("cannot broadcast dimension {} of size {} to size {}", i, in.dimensions[i], out_size)),
             nullptr;
    }
  }
  if (kept_dims.size() != dims.size()) x = Emit(Opcode::kReshape, Shape(in.element_type, kept_sizes), {x});
  return BroadcastTo(x, shape, std::move(kept_dims));
}

Instruction* Lowerer::ConstLike(double v, const Instruction* like) {
  Instruction* c = ConstScalar(like->shape().element_type, v);
  return like->shape().rank() == 0 ? c : BroadcastTo(c, like->shape(), {});
}

Instruction* Lowerer::ConstLikeBits(uint64_t bits, const Instruction* like) {
  Literal lit(Shape::Scalar(like->shape().element_type));
  std::memcpy(lit.mutable_raw_data(), &bits, static_cast<size_t>(ByteWidth(like->shape().element_type)));
  Instruction* c = EmitConstant(std::move(lit));
  return like->shape().rank() == 0 ? c : BroadcastTo(c, like->shape(), {});
}

Instruction* Lowerer::Unary(Opcode op, Instruction* x) {
  Shape shape = x->shape();
  if (op == Opcode::kIsFinite) shape.element_type = PrimitiveType::kPred;
  return Emit(op, std::move(shape), {x});
}

Instruction* Lowerer::Binary(Opcode op, Instruction* a, Instruction* b) { return Emit(op, a->shape(), {a, b}); }

Instruction* Lowerer::Compare(Instruction* a, Instruction* b, std::string_view direction) {
  Shape shape = a->shape();
  shape.element_type = PrimitiveType::kPred;
  Instruction* c = Emit(Opcode::kCompare, std::move(shape), {a, b});
  c->SetAttr("direction", AttrValue::Enum(std::string(direction)));
  return c;
}

Instruction* Lowerer::Select(Instruction* pred, Instruction* a, Instruction* b) {
  return Emit(Opcode::kSelect, a->shape(), {pred, a, b});
}

Instruction* Lowerer::Convert(Instruction* x, PrimitiveType type) {
  if (x->shape().element_type == type) return x;
  Shape shape = x->shape();
  shape.element_type = type;
  return Emit(Opcode::kConvert, std::move(shape), {x});
}

// ---------------------------------------------------------------------------------------------------------------
// Dispatch

namespace {

const OpTable& Handlers() {
  static const OpTable table = [] {
    OpTable t;
    RegisterElementwiseOps(&t);
    RegisterDataOps(&t);
    RegisterRegionOps(&t);
    RegisterMiscOps(&t);
    RegisterChloOps(&t);
    RegisterSdyOps(&t);
    RegisterDialectOps(&t);
    RegisterLegacyOps(&t);
    return t;
  }();
  return table;
}

}  // namespace

OpHandler FindOpHandler(std::string_view name) {
  std::string key(name);
  if (key.rfind("mhlo.", 0) == 0) key = "stablehlo." + key.substr(5);
  const OpTable& table = Handlers();
  auto it = table.find(key);
  return it == table.end() ? nullptr : it->second;
}

bool Lowerer::LowerOp(const Op& op, Results* results) {
  cur_op_ = &op;
  cur_loc_ = Loc(op.pos);
  cur_metadata_ = MetadataFor(op.loc);
  split_source_ = nullptr;
  results->clear();
  // An MHLO op StableHLO lacks, sent as a custom call: lowered as the op itself (what XLA's
  // stablehlo-legalize-to-hlo does), the op-level attributes (shardings) taken from the op it decodes to.
  Op decoded;
  const Op* lowered = &op;
  if (IsMhloExtensionCall(op)) {
    if (!DecodeMhloExtensionCall(*this, op, &decoded)) return false;
    lowered = &decoded;
  }
  OpHandler handler = FindOpHandler(lowered->name);
  if (handler == nullptr) return OpError(op, fmt::format("unsupported op '{}'", op.name));
  const size_t first_new = scope_->comp->instructions().size();
  bool handled = false;
  if (!LowerQuantAware(*lowered, handler, results, &handled)) return false;
  if (!handled && !handler(*this, *lowered, results)) return false;
  for (size_t i = 0; i < results->size() && i < lowered->result_types.size(); ++i) {
    NoteQuant((*results)[i], lowered->result_types[i]);
  }
  if (refining_ && !RefineNewInstructions(op, first_new)) return false;
  return ApplyOpLevelAttributes(*lowered, *results);
}

bool Lowerer::ApplyOpLevelAttributes(const Op& op, const Results& results) {
  Instruction* primary = split_source_ != nullptr ? split_source_ : (results.size() == 1 ? results[0] : nullptr);
  if (primary == nullptr) return true;
  for (const NamedAttr& a : op.attrs) {
    if (a.name == "mhlo.sharding") {
      std::optional<Sharding> sharding;
      if (!ParseShardingAttr(*a.value, &sharding)) return false;
      if (sharding.has_value()) primary->set_sharding(std::move(sharding));
    } else if (a.name == "sdy.sharding") {
      if (!ApplySdyOpSharding(*a.value, results, primary)) return false;
    } else if (a.name == "mhlo.frontend_attributes" && a.value->kind == Attr::Kind::kDict) {
      StringMap* attrs = primary->mutable_frontend_attributes();
      for (const auto& [key, value] : a.value->dict) {
        if (value->kind == Attr::Kind::kString) attrs->emplace_back(key, value->str);
      }
      std::sort(attrs->begin(), attrs->end());
    }
  }
  return ApplyRoundTripOpSharding(op, results, primary);
}

}  // namespace xlac::shlo
