// Shardy (sdy dialect) syntax: the attributes #sdy.mesh<...>, #sdy.sharding<...>, #sdy.sharding_per_value<...>
// and #sdy<manual_axes{...}>, module-level `sdy.mesh @name = <...>`, and the custom assembly of the sdy ops JAX
// emits (sharding_constraint, reshard, manual_computation, named_computation, sharding_group, propagation_barrier,
// data_flow_edge, constant, return). Grammar as in shardy/dialect/sdy/ir/{attrs,ops}.td; the lowering is in
// lower_sdy.cc.
#include "fmt/format.h"
#include "frontend/stablehlo/parser_impl.h"

namespace xlac::shlo {
namespace {

std::shared_ptr<Attr> NewSdyAttr(Attr::Kind kind, size_t pos, SdyAttr payload) {
  auto a = std::make_shared<Attr>();
  a->kind = kind;
  a->pos = pos;
  a->sdy = std::make_shared<const SdyAttr>(std::move(payload));
  return a;
}

}  // namespace

// `"x"` or the sub-axis `"x":(pre)size`.
bool Parser::ParseSdyAxisRef(SdyAxisRef* out) {
  out->pos = pos();
  if (kind() != Tok::kString) {
    return TokenError(fmt::format("expected a mesh axis name, but found {}", DescribeToken()));
  }
  out->name = tok().str;
  Next();
  if (!Eat(Tok::kColon)) return true;
  const size_t sub_pos = pos();
  if (!Expect(Tok::kLParen, "to start the sub-axis pre-size") || !ParseInt64(&out->pre_size) ||
      !Expect(Tok::kRParen, "after the sub-axis pre-size") || !ParseInt64(&out->size)) {
    return false;
  }
  if (out->pre_size < 1 || out->size < 2) {
    return Error(sub_pos, fmt::format("invalid sub-axis \"{}\":({}){}: the pre-size must be at least 1 and the size "
                                      "at least 2",
                                      out->name, out->pre_size, out->size));
  }
  return true;
}

// `{"x", "y":(1)2}`
bool Parser::ParseSdyAxisList(std::vector<SdyAxisRef>* out) {
  if (!Expect(Tok::kLBrace, "to start a list of mesh axes")) return false;
  if (Eat(Tok::kRBrace)) return true;
  do {
    out->emplace_back();
    if (!ParseSdyAxisRef(&out->back())) return false;
  } while (Eat(Tok::kComma));
  return Expect(Tok::kRBrace, "to end the list of mesh axes");
}

// Inside `<...>`: `["x"=2, "y"=4]` with an optional `, device_ids=[...]`. Older Shardy wrote the axes without
// brackets (`<"x"=2, "y"=4>`); both are accepted.
bool Parser::ParseSdyMeshBody(SdyMesh* out) {
  out->pos = pos();
  auto parse_axis = [&]() -> bool {
    if (kind() != Tok::kString) {
      return TokenError(fmt::format("expected a mesh axis \"name\"=size, but found {}", DescribeToken()));
    }
    out->axis_pos.push_back(pos());
    std::string name = tok().str;
    Next();
    int64_t size = 0;
    if (!Expect(Tok::kEqual, "after the mesh axis name") || !ParseInt64(&size)) return false;
    out->axes.emplace_back(std::move(name), size);
    return true;
  };
  bool need_comma = false;
  if (Eat(Tok::kLSquare)) {
    if (kind() != Tok::kRSquare) {
      do {
        if (!parse_axis()) return false;
      } while (Eat(Tok::kComma));
    }
    if (!Expect(Tok::kRSquare, "to end the mesh axes")) return false;
    need_comma = true;
  } else if (kind() == Tok::kString) {
    if (!parse_axis()) return false;
    while (kind() == Tok::kComma && LookAhead() == Tok::kString) {
      Next();
      if (!parse_axis()) return false;
    }
    need_comma = true;
  }
  if (kind() == Tok::kGreater) return true;
  if (need_comma && !Expect(Tok::kComma, "after the mesh axes")) return false;
  out->device_ids_pos = pos();
  if (!ExpectKeyword("device_ids", "in the mesh") || !Expect(Tok::kEqual, "after 'device_ids'") ||
      !Expect(Tok::kLSquare, "to start the device ids")) {
    return false;
  }
  out->has_device_ids = true;
  if (kind() != Tok::kRSquare) {
    do {
      int64_t id = 0;
      if (!ParseInt64(&id)) return false;
      out->device_ids.push_back(id);
    } while (Eat(Tok::kComma));
  }
  return Expect(Tok::kRSquare, "to end the device ids");
}

// Inside `<...>`: `@mesh, [{"x"}, {"y", ?}p1, {}], replicated={"z"}, unreduced={"w"}`; the mesh may also be inlined
// as `mesh<[...]>` or given as a #sdy.mesh attribute (or alias).
bool Parser::ParseSdyShardingBody(SdySharding* out) {
  out->pos = pos();
  out->mesh_pos = pos();
  if (kind() == Tok::kAtId) {
    out->mesh_name = tok().str;
    Next();
  } else if (IsKeyword("mesh") && LookAhead() == Tok::kLess) {
    Next();
    Next();
    auto mesh = std::make_shared<SdyMesh>();
    if (!ParseSdyMeshBody(mesh.get()) || !Expect(Tok::kGreater, "to end the inlined mesh")) return false;
    out->mesh = std::move(mesh);
  } else if (kind() == Tok::kHashId) {
    AttrPtr attr;
    if (!ParseAttribute(&attr)) return false;
    if (attr->kind != Attr::Kind::kSdyMesh) return Error(out->mesh_pos, "expected a #sdy.mesh<...> attribute");
    out->mesh = std::shared_ptr<const SdyMesh>(attr->sdy, &attr->sdy->mesh);
  } else {
    return TokenError(
        fmt::format("expected a mesh (@name or mesh<[...]>) in the sharding, but found {}", DescribeToken()));
  }
  if (!Expect(Tok::kComma, "after the mesh of the sharding") ||
      !Expect(Tok::kLSquare, "to start the dimension shardings")) {
    return false;
  }
  if (kind() != Tok::kRSquare) {
    do {
      SdyDimSharding dim;
      dim.pos = pos();
      if (!Expect(Tok::kLBrace, "to start a dimension sharding")) return false;
      while (kind() != Tok::kRBrace) {
        if (Eat(Tok::kQuestion)) {
          dim.open = true;
          break;
        }
        dim.axes.emplace_back();
        if (!ParseSdyAxisRef(&dim.axes.back())) return false;
        if (!Eat(Tok::kComma)) break;
      }
      if (!Expect(Tok::kRBrace, "to end the dimension sharding")) return false;
      // Priority suffix: {"x"}p1
      if (kind() == Tok::kBareId && tok().str.size() > 1 && tok().str[0] == 'p' &&
          tok().str.find_first_not_of("0123456789", 1) == std::string::npos) {
        dim.priority = tok().str.size() > 10 ? 0 : std::stoll(tok().str.substr(1));
        Next();
      }
      out->dims.push_back(std::move(dim));
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRSquare, "to end the dimension shardings")) return false;
  while (Eat(Tok::kComma)) {
    const size_t key_pos = pos();
    if (IsKeyword("replicated") || IsKeyword("unreduced")) {
      const bool replicated = tok().str == "replicated";
      Next();
      std::vector<SdyAxisRef>& list = replicated ? out->replicated : out->unreduced;
      if (!list.empty()) return Error(key_pos, "the list of axes is given twice");
      if (!Expect(Tok::kEqual, "after the axis list name") || !ParseSdyAxisList(&list)) return false;
      continue;
    }
    return TokenError(
        fmt::format("expected 'replicated=' or 'unreduced=' in the sharding, but found {}", DescribeToken()));
  }
  return true;
}

// `[<@mesh, [...]>, <...>]`: the per-value shardings of #sdy.sharding_per_value and of the op forms.
bool Parser::ParseSdyShardingList(size_t start, AttrPtr* out) {
  SdyAttr payload;
  if (!Expect(Tok::kLSquare, "to start the list of shardings")) return false;
  if (kind() != Tok::kRSquare) {
    do {
      if (kind() == Tok::kHashId) {  // a full #sdy.sharding<...> attribute
        AttrPtr one;
        if (!ParseAttribute(&one)) return false;
        if (one->kind != Attr::Kind::kSdySharding) return Error(one->pos, "expected a #sdy.sharding<...>");
        payload.shardings.push_back(one->sdy->shardings[0]);
        continue;
      }
      payload.shardings.emplace_back();
      if (!Expect(Tok::kLess, "to start a sharding") || !ParseSdyShardingBody(&payload.shardings.back()) ||
          !Expect(Tok::kGreater, "to end the sharding")) {
        return false;
      }
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRSquare, "to end the list of shardings")) return false;
  *out = NewSdyAttr(Attr::Kind::kSdyShardingPerValue, start, std::move(payload));
  return true;
}

// After `#sdy.<mnemonic>`, at the `<`.
bool Parser::ParseSdyDialectAttr(const std::string& mnemonic, size_t start, AttrPtr* out) {
  if (!Expect(Tok::kLess, fmt::format("after #sdy.{}", mnemonic))) return false;
  if (mnemonic == "mesh") {
    SdyAttr payload;
    if (!ParseSdyMeshBody(&payload.mesh)) return false;
    *out = NewSdyAttr(Attr::Kind::kSdyMesh, start, std::move(payload));
  } else if (mnemonic == "sharding") {
    SdyAttr payload;
    payload.shardings.emplace_back();
    if (!ParseSdyShardingBody(&payload.shardings.back())) return false;
    payload.shardings.back().pos = start;
    *out = NewSdyAttr(Attr::Kind::kSdySharding, start, std::move(payload));
  } else {
    if (!ParseSdyShardingList(start, out)) return false;
  }
  return Expect(Tok::kGreater, fmt::format("to end #sdy.{}<...>", mnemonic));
}

// After `#sdy<`, at `manual_axes`.
bool Parser::ParseSdyManualAxesAttr(size_t start, AttrPtr* out) {
  Next();  // manual_axes
  SdyAttr payload;
  if (!ParseSdyAxisList(&payload.axes) || !Expect(Tok::kGreater, "to end #sdy<manual_axes...>")) return false;
  *out = NewSdyAttr(Attr::Kind::kSdyManualAxes, start, std::move(payload));
  return true;
}

// Module level: `sdy.mesh @name = <...> {attrs}`, or the generic "sdy.mesh"() <{mesh = ..., sym_name = ...}>.
bool Parser::ParseSdyMeshDef(ModuleAst* out) {
  MeshDef def;
  def.pos = pos();
  if (kind() == Tok::kString) {
    Op op;
    if (!ParseOperation(&op)) return false;
    const NamedAttr* name = op.FindAttr("sym_name");
    const NamedAttr* mesh = op.FindAttr("mesh");
    if (name == nullptr || name->value->kind != Attr::Kind::kString) {
      return Error(op.name_pos, "sdy.mesh needs a sym_name string");
    }
    if (mesh == nullptr || mesh->value->kind != Attr::Kind::kSdyMesh) {
      return Error(op.name_pos, "sdy.mesh needs a mesh = #sdy.mesh<...> attribute");
    }
    def.name = name->value->str;
    def.name_pos = name->pos;
    def.mesh = mesh->value;
    out->meshes.push_back(std::move(def));
    return true;
  }
  Next();  // sdy.mesh
  def.name_pos = pos();
  if (kind() != Tok::kAtId) return TokenError(fmt::format("expected the mesh name, but found {}", DescribeToken()));
  def.name = tok().str;
  Next();
  if (!Expect(Tok::kEqual, "after the mesh name")) return false;
  if (kind() == Tok::kLess) {
    const size_t start = pos();
    Next();
    SdyAttr payload;
    if (!ParseSdyMeshBody(&payload.mesh) || !Expect(Tok::kGreater, "to end the mesh")) return false;
    def.mesh = NewSdyAttr(Attr::Kind::kSdyMesh, start, std::move(payload));
  } else {
    const size_t start = pos();
    if (!ParseAttribute(&def.mesh)) return false;
    if (def.mesh->kind != Attr::Kind::kSdyMesh) return Error(start, "expected a mesh <[\"x\"=2, ...]>");
  }
  std::vector<NamedAttr> ignored;
  if (kind() == Tok::kLBrace && !ParseAttrDict(&ignored)) return false;
  Location loc;
  if (!ParseOptionalLocation(&loc)) return false;
  out->meshes.push_back(std::move(def));
  return true;
}

namespace {

// The collectives of Shardy's explicit-resharding form (a program partitioned by Shardy but still in the global
// view). Each keeps its operand's global value and gives it out_sharding; the axes they move along are written
// before the operand.
bool IsSdyCollective(std::string_view name) {
  for (const char* collective : {"sdy.all_gather", "sdy.all_slice", "sdy.all_to_all", "sdy.all_reduce",
                                 "sdy.reduce_scatter", "sdy.collective_permute"}) {
    if (name == collective) return true;
  }
  return false;
}

bool IsKnownSdyOp(std::string_view name) {
  for (const char* known :
       {"sdy.sharding_constraint", "sdy.reshard", "sdy.manual_computation", "sdy.named_computation",
        "sdy.sharding_group", "sdy.propagation_barrier", "sdy.data_flow_edge", "sdy.constant", "sdy.return"}) {
    if (name == known) return true;
  }
  return IsSdyCollective(name);
}

}  // namespace

// `(%a: T, %b: U)` before a region whose block has no label.
bool Parser::ParseSdyBlockArgs(std::vector<BlockArg>* out) {
  if (!Expect(Tok::kLParen, "to start the region arguments")) return false;
  if (kind() != Tok::kRParen) {
    do {
      BlockArg arg;
      arg.pos = pos();
      if (kind() != Tok::kPercentId) {
        return TokenError(fmt::format("expected a region argument, but found {}", DescribeToken()));
      }
      arg.name = tok().str;
      Next();
      if (!Expect(Tok::kColon, "after the region argument name") || !ParseType(&arg.type)) return false;
      Location ignored;
      if (!ParseOptionalLocation(&ignored)) return false;
      out->push_back(std::move(arg));
    } while (Eat(Tok::kComma));
  }
  return Expect(Tok::kRParen, "to end the region arguments");
}

bool Parser::ParseSdyOp(Op* op) {
  if (!IsKnownSdyOp(op->name)) {
    return Error(op->name_pos, fmt::format("unsupported Shardy op '{}': only sharding annotations (sdy.mesh, "
                                           "sdy.sharding, sdy.sharding_constraint, sdy.manual_computation, ...) and "
                                           "the explicit collectives (sdy.all_gather, sdy.all_slice, ...) are "
                                           "supported",
                                           op->name));
  }
  if (op->name == "sdy.return") return ParsePrettyGeneric(op);
  if (op->name == "sdy.constant") {
    if (!ParsePrettyGeneric(op)) return false;
    if (const NamedAttr* value = op->FindAttr("value");
        op->result_types.empty() && value != nullptr && value->value->type.has_value()) {
      op->result_types.push_back(*value->value->type);
    }
    return true;
  }
  // `key=value` pairs of the op forms; shardings are written without their #sdy.sharding prefix.
  auto parse_keyword_attr = [&](std::string_view key) -> bool {
    const size_t key_pos = pos();
    if (!ExpectKeyword(key, fmt::format("in {}", op->name)) || !Expect(Tok::kEqual, fmt::format("after '{}'", key))) {
      return false;
    }
    const size_t value_pos = pos();
    AttrPtr value;
    if (key == "in_shardings" || key == "out_shardings") {
      if (kind() == Tok::kHashId) {
        if (!ParseAttribute(&value)) return false;
        if (value->kind != Attr::Kind::kSdyShardingPerValue) {
          return Error(value_pos, "expected a list of shardings [<@mesh, [...]>, ...]");
        }
      } else if (!ParseSdyShardingList(value_pos, &value)) {
        return false;
      }
    } else if (key == "manual_axes") {
      SdyAttr payload;
      if (kind() == Tok::kHashId) {
        if (!ParseAttribute(&value)) return false;
        if (value->kind != Attr::Kind::kSdyManualAxes) return Error(value_pos, "expected a list of axes {\"x\", ...}");
      } else {
        if (!ParseSdyAxisList(&payload.axes)) return false;
        value = NewSdyAttr(Attr::Kind::kSdyManualAxes, value_pos, std::move(payload));
      }
    } else if (key == "sharding" || key == "out_sharding") {
      SdyAttr payload;
      payload.shardings.emplace_back();
      if (!Expect(Tok::kLess, "to start the sharding") || !ParseSdyShardingBody(&payload.shardings.back()) ||
          !Expect(Tok::kGreater, "to end the sharding")) {
        return false;
      }
      value = NewSdyAttr(Attr::Kind::kSdySharding, value_pos, std::move(payload));
    } else if (!ParseAttribute(&value, /*allow_type_suffix=*/false)) {
      return false;
    }
    op->attrs.push_back({std::string(key), std::move(value), key_pos});
    return true;
  };
  auto parse_operand_list = [&]() -> bool {
    if (!Expect(Tok::kLParen, fmt::format("to start the operands of {}", op->name))) return false;
    if (kind() != Tok::kRParen) {
      do {
        op->operands.emplace_back();
        if (!ParseValueRef(&op->operands.back())) return false;
      } while (Eat(Tok::kComma));
    }
    return Expect(Tok::kRParen, fmt::format("to end the operands of {}", op->name));
  };
  auto parse_region = [&]() -> bool {
    std::vector<BlockArg> args;
    Region region;
    if (!ParseSdyBlockArgs(&args) || !ParseRegion(&region)) return false;
    if (region.blocks.empty()) {
      region.blocks.emplace_back();
      region.blocks.back().pos = region.pos;
    }
    if (!region.blocks[0].args.empty()) return Error(region.blocks[0].pos, "the region arguments are given twice");
    region.blocks[0].args = std::move(args);
    op->regions.push_back(std::move(region));
    return true;
  };
  auto parse_tail = [&](bool functional) -> bool {
    if (kind() == Tok::kLBrace && !ParseAttrDict(&op->attrs)) return false;
    if (!Expect(Tok::kColon, fmt::format("before the type of {}", op->name))) return false;
    if (functional) {
      const size_t type_pos = pos();
      Type type;
      if (!ParseType(&type)) return false;
      if (type.kind != Type::Kind::kFunction) return Error(type_pos, "expected a function type (operands) -> results");
      op->operand_types = std::move(type.elements);
      op->result_types = std::move(type.results);
      return true;
    }
    Type type;
    if (!ParseType(&type)) return false;
    op->operand_types = {type};
    if (op->name != "sdy.sharding_group") op->result_types = {std::move(type)};
    return true;
  };

  if (op->name == "sdy.manual_computation" || op->name == "sdy.named_computation") {
    if (op->name == "sdy.named_computation") {
      const size_t name_pos = pos();
      if (!Expect(Tok::kLess, "before the computation name")) return false;
      if (kind() != Tok::kString) return TokenError("expected the computation name as a string");
      auto name = std::make_shared<Attr>();
      name->kind = Attr::Kind::kString;
      name->pos = name_pos;
      name->str = tok().str;
      Next();
      if (!Expect(Tok::kGreater, "after the computation name")) return false;
      op->attrs.push_back({"name", std::move(name), name_pos});
    }
    if (!parse_operand_list()) return false;
    if (op->name == "sdy.manual_computation") {
      if (!parse_keyword_attr("in_shardings") || !parse_keyword_attr("out_shardings") ||
          !parse_keyword_attr("manual_axes")) {
        return false;
      }
    } else {
      if (IsKeyword("in_shardings") && !parse_keyword_attr("in_shardings")) return false;
      if (IsKeyword("out_shardings") && !parse_keyword_attr("out_shardings")) return false;
    }
    return parse_region() && parse_tail(/*functional=*/true);
  }
  if (IsSdyCollective(op->name)) {
    // `[{}, {"x"}]`, `{"x"}` or `[{"x": 0->1}]`: which axes move, implied by the operand's and the result's shardings.
    if (kind() == Tok::kLSquare || kind() == Tok::kLBrace) {
      const Tok open = kind(), close = open == Tok::kLSquare ? Tok::kRSquare : Tok::kRBrace;
      int depth = 0;
      do {
        if (kind() == Tok::kEof) return TokenError(fmt::format("unterminated axes of {}", op->name));
        if (kind() == open) ++depth;
        if (kind() == close) --depth;
        Next();
      } while (depth > 0);
    }
    op->operands.emplace_back();
    if (!ParseValueRef(&op->operands.back()) || !parse_keyword_attr("out_sharding")) return false;
    return parse_tail(/*functional=*/false);
  }
  // Unary forms: `%x <@mesh, [...]>`, `%x group_id=0`, `%x allowed_direction=BACKWARD`, `%x sharding=<...>`.
  op->operands.emplace_back();
  if (!ParseValueRef(&op->operands.back())) return false;
  if (op->name == "sdy.sharding_constraint" || op->name == "sdy.reshard") {
    const size_t at = pos();
    SdyAttr payload;
    payload.shardings.emplace_back();
    if (kind() == Tok::kHashId) {
      AttrPtr value;
      if (!ParseAttribute(&value)) return false;
      if (value->kind != Attr::Kind::kSdySharding) return Error(at, "expected a sharding <@mesh, [...]>");
      op->attrs.push_back({"sharding", std::move(value), at});
    } else {
      if (!Expect(Tok::kLess, "to start the sharding") || !ParseSdyShardingBody(&payload.shardings.back()) ||
          !Expect(Tok::kGreater, "to end the sharding")) {
        return false;
      }
      op->attrs.push_back({"sharding", NewSdyAttr(Attr::Kind::kSdySharding, at, std::move(payload)), at});
    }
  } else if (op->name == "sdy.sharding_group") {
    if (!parse_keyword_attr("group_id")) return false;
  } else if (op->name == "sdy.propagation_barrier") {
    if (!parse_keyword_attr("allowed_direction")) return false;
  } else if (op->name == "sdy.data_flow_edge") {
    if (IsKeyword("sharding") && !parse_keyword_attr("sharding")) return false;
  }
  return parse_tail(/*functional=*/false);
}

}  // namespace xlac::shlo
