// Pretty (custom assembly) forms of StableHLO, CHLO, func and check ops. Most ops follow one shape, parsed by
// ParsePrettyGeneric: `[attr-dict] [(items)] items [attr-dict] [: types]` where an item is an operand (`%x`,
// `%x#1`, `%x[0]`, `%x [0:4:2]`), `keyword = value`, a bare keyword (compare's `EQ`), a string or a dense literal.
// The few ops with their own grammar (reduce, while, custom_call, func.call, chlo.scan) have their own parsers.
// Afterwards the keywords are renamed to the attribute names of the generic form, so the lowering sees one shape.
#include "fmt/format.h"
#include "frontend/stablehlo/parser_impl.h"

namespace xlac::shlo {
namespace {

std::shared_ptr<Attr> NewAttr(Attr::Kind kind, size_t pos) {
  auto a = std::make_shared<Attr>();
  a->kind = kind;
  a->pos = pos;
  return a;
}

std::shared_ptr<Attr> I64Array(const std::vector<int64_t>& values, size_t pos) {
  auto a = NewAttr(Attr::Kind::kDenseArray, pos);
  Type i64;
  i64.kind = Type::Kind::kTensor;
  i64.is_scalar_type = true;
  i64.element = PrimitiveType::kS64;
  i64.text = "i64";
  a->type = i64;
  for (int64_t v : values) {
    auto e = NewAttr(Attr::Kind::kInt, pos);
    e->int_value = v;
    a->elements.push_back(std::move(e));
  }
  return a;
}

void Rename(Op* op, std::string_view from, std::string_view to) {
  for (NamedAttr& a : op->attrs) {
    if (a.name == from) a.name = std::string(to);
  }
}

}  // namespace

bool Parser::ParsePrettyOp(Op* op) {
  if (op->name == "func.call") return ParseCallOp(op);
  // MHLO's custom assembly of these is StableHLO's (XLA's MHLO exports and older Shardy round-trip inputs).
  if (IsHloOp(*op, "reduce") && kind() == Tok::kLParen) return ParseReduceOp(op);
  if (IsHloOp(*op, "while") && kind() == Tok::kLParen) return ParseWhileOp(op);
  if (IsHloOp(*op, "custom_call") && kind() == Tok::kAtId) return ParseCustomCallOp(op);
  if (op->name == "chlo.scan") return ParseScanOp(op);
  if (op->name.rfind("sdy.", 0) == 0) return ParseSdyOp(op);
  if (op->name.rfind("arith.", 0) == 0 || op->name.rfind("math.", 0) == 0 || op->name.rfind("tensor.", 0) == 0 ||
      op->name.rfind("shape.", 0) == 0 || op->name == "util.unfoldable_constant") {
    return ParseDialectOp(op);
  }
  return ParsePrettyGeneric(op);
}

bool Parser::ParsePrettyGeneric(Op* op) {
  pretty_keywords_.clear();
  pretty_strings_.clear();
  if (kind() == Tok::kLBrace && !ParseAttrDict(&op->attrs)) return false;
  if (Eat(Tok::kLParen)) {
    if (kind() != Tok::kRParen && !ParsePrettyItems(op, true)) return false;
    if (!Expect(Tok::kRParen, "to end the operand list")) return false;
  }
  if (!ParsePrettyItems(op, false)) return false;
  if (kind() == Tok::kLBrace && !ParseAttrDict(&op->attrs)) return false;
  if (Eat(Tok::kColon) && !ParseOpTypeSpec(op)) return false;
  NormalizePrettyAttrs(op);
  return true;
}

bool Parser::ParsePrettyItems(Op* op, bool in_parens) {
  auto item_start = [&]() {
    switch (kind()) {
      case Tok::kPercentId:
      case Tok::kString:
        return true;
      case Tok::kCaretId:
        // A successor (`cf.br ^bb1`), reported below; at the start of a line, the label of the next block.
        return Source(prev_end(), pos()).find('\n') == std::string_view::npos;
      case Tok::kBareId:
        // Not the start of the next statement's trailing `loc(...)`.
        return !(tok().str == "loc" && LookAhead() == Tok::kLParen);
      default:
        return false;
    }
  };
  if (!in_parens && !item_start()) return true;
  bool last_was_string = false;
  do {
    const size_t item_pos = pos();
    last_was_string = kind() == Tok::kString;
    if (kind() == Tok::kPercentId) {
      op->operands.emplace_back();
      if (!ParseValueRef(&op->operands.back())) return false;
      if (kind() == Tok::kLSquare) {
        if (IsHloOp(*op, "slice")) {
          if (!ParseSliceRanges(op)) return false;
        } else if (IsHloOp(*op, "get_tuple_element")) {
          Next();
          auto index = NewAttr(Attr::Kind::kInt, pos());
          if (!ParseInt64(&index->int_value) || !Expect(Tok::kRSquare, "after the tuple index")) return false;
          op->attrs.push_back({"index", std::move(index), item_pos});
        } else {
          return TokenError(fmt::format("unexpected '[' after an operand of '{}'", op->name));
        }
      }
    } else if (kind() == Tok::kString) {
      pretty_strings_.emplace_back(tok().str, item_pos);
      Next();
    } else if (kind() == Tok::kBareId && LookAhead() == Tok::kEqual) {
      std::string key = tok().str;
      Next();
      Next();
      if (!ParsePrettyKeywordValue(op, key, item_pos)) return false;
    } else if (IsKeyword("dense") || IsKeyword("array") || IsKeyword("dense_resource")) {
      AttrPtr value;
      if (!ParseAttribute(&value)) return false;
      op->attrs.push_back({"", std::move(value), item_pos});
    } else if (kind() == Tok::kBareId) {
      pretty_keywords_.emplace_back(tok().str, item_pos);
      Next();
    } else if (kind() == Tok::kCaretId) {
      return SuccessorError(*op);
    } else {
      return TokenError(
          fmt::format("expected an operand or attribute of '{}', but found {}", op->name, DescribeToken()));
    }
    // `stablehlo.composite "name" %a, %b`: no comma after the name.
  } while (Eat(Tok::kComma) || (last_was_string && kind() == Tok::kPercentId));
  return true;
}

bool Parser::ParsePrettyKeywordValue(Op* op, const std::string& key, size_t key_pos) {
  AttrPtr value;
  if (key == "contracting_dims" || key == "batching_dims") {
    auto pair = NewAttr(Attr::Kind::kArray, pos());
    AttrPtr lhs, rhs;
    if (!ParseI64ArrayAttr(&lhs) || !ExpectKeyword("x", fmt::format("in {}", key)) || !ParseI64ArrayAttr(&rhs)) {
      return false;
    }
    pair->elements = {std::move(lhs), std::move(rhs)};
    value = std::move(pair);
  } else if (key == "dim_numbers") {
    auto dims = NewAttr(Attr::Kind::kConvDims, pos());
    if (!ParseConvDimsBody(dims.get())) return false;
    value = std::move(dims);
  } else if (key == "window" && kind() == Tok::kLBrace) {
    return ParseWindowAttrs(op);
  } else if ((key == "dims" || key == "sizes" || key == "low" || key == "high" || key == "interior" ||
              key == "length") &&
             kind() == Tok::kLSquare) {
    if (!ParseI64ArrayAttr(&value)) return false;
  } else if (!ParseAttribute(&value, /*allow_type_suffix=*/false)) {
    return false;
  }
  for (const NamedAttr& a : op->attrs) {
    if (a.name == key) return Error(key_pos, fmt::format("'{}' is given more than once", key));
  }
  op->attrs.push_back({key, std::move(value), key_pos});
  return true;
}

// window = {stride = [2, 2], pad = [[0, 1], [1, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [0, 0]}
bool Parser::ParseWindowAttrs(Op* op) {
  Next();  // '{'
  if (Eat(Tok::kRBrace)) return true;
  do {
    const size_t key_pos = pos();
    if (kind() != Tok::kBareId) return TokenError("expected a window attribute name");
    std::string key = tok().str;
    Next();
    if (!Expect(Tok::kEqual, "after the window attribute name")) return false;
    AttrPtr value;
    if (!ParseAttribute(&value, /*allow_type_suffix=*/false)) return false;
    std::string name;
    if (key == "stride") {
      name = "window_strides";
    } else if (key == "pad") {
      name = "padding";
    } else if (key == "lhs_dilate") {
      name = "lhs_dilation";
    } else if (key == "rhs_dilate") {
      name = "rhs_dilation";
    } else if (key == "reverse") {
      name = "window_reversal";
    } else {
      return Error(key_pos, fmt::format("unknown window attribute '{}'", key));
    }
    op->attrs.push_back({name, std::move(value), key_pos});
  } while (Eat(Tok::kComma));
  return Expect(Tok::kRBrace, "to end the window attributes");
}

// [0:4, 1:3:2]
bool Parser::ParseSliceRanges(Op* op) {
  const size_t start = pos();
  Next();  // '['
  std::vector<int64_t> starts, limits, strides;
  if (kind() != Tok::kRSquare) {
    do {
      int64_t s, l, st = 1;
      if (!ParseInt64(&s) || !Expect(Tok::kColon, "in a slice range") || !ParseInt64(&l)) return false;
      if (Eat(Tok::kColon) && !ParseInt64(&st)) return false;
      starts.push_back(s);
      limits.push_back(l);
      strides.push_back(st);
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRSquare, "to end the slice ranges")) return false;
  op->attrs.push_back({"start_indices", I64Array(starts, start), start});
  op->attrs.push_back({"limit_indices", I64Array(limits, start), start});
  op->attrs.push_back({"strides", I64Array(strides, start), start});
  return true;
}

// call @callee(%a, %b) : (T, T) -> T
bool Parser::ParseCallOp(Op* op) {
  if (kind() != Tok::kAtId) return TokenError(fmt::format("expected the callee symbol, but found {}", DescribeToken()));
  auto callee = NewAttr(Attr::Kind::kSymbol, pos());
  callee->str = tok().str;
  op->attrs.push_back({"callee", std::move(callee), pos()});
  Next();
  if (!Expect(Tok::kLParen, "to start the call operands")) return false;
  if (kind() != Tok::kRParen) {
    do {
      op->operands.emplace_back();
      if (!ParseValueRef(&op->operands.back())) return false;
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRParen, "to end the call operands")) return false;
  if (kind() == Tok::kLBrace && !ParseAttrDict(&op->attrs)) return false;
  return Expect(Tok::kColon, "before the call type") && ParseOpTypeSpec(op);
}

// stablehlo.custom_call @target(%a, %b) {attrs} : (T, T) -> T
bool Parser::ParseCustomCallOp(Op* op) {
  auto target = NewAttr(Attr::Kind::kString, pos());
  target->str = tok().str;
  op->attrs.push_back({"call_target_name", std::move(target), pos()});
  Next();
  if (!Expect(Tok::kLParen, "to start the custom call operands")) return false;
  if (kind() != Tok::kRParen) {
    do {
      op->operands.emplace_back();
      if (!ParseValueRef(&op->operands.back())) return false;
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRParen, "to end the custom call operands")) return false;
  if (kind() == Tok::kLBrace && !ParseAttrDict(&op->attrs)) return false;
  return Expect(Tok::kColon, "before the custom call type") && ParseOpTypeSpec(op);
}

// stablehlo.reduce(%in init: %init), ... applies stablehlo.add across dimensions = [0] : (...) -> ...
// stablehlo.reduce(%in init: %init) across dimensions = [0] : (...) -> ... reducer(%a: T, %b: T) { ... }
bool Parser::ParseReduceOp(Op* op) {
  std::vector<ValueRef> inputs, inits;
  do {
    if (!Expect(Tok::kLParen, "to start a reduce operand")) return false;
    inputs.emplace_back();
    inits.emplace_back();
    if (!ParseValueRef(&inputs.back()) || !ExpectKeyword("init", "in a reduce operand") ||
        !Expect(Tok::kColon, "after 'init'") || !ParseValueRef(&inits.back()) ||
        !Expect(Tok::kRParen, "to end a reduce operand")) {
      return false;
    }
  } while (Eat(Tok::kComma));
  op->operands = inputs;
  op->operands.insert(op->operands.end(), inits.begin(), inits.end());
  std::string applies;
  size_t applies_pos = 0;
  if (EatKeyword("applies")) {
    applies_pos = pos();
    if (kind() != Tok::kBareId) return TokenError("expected the reduction operation after 'applies'");
    applies = tok().str;
    Next();
  }
  const size_t dims_pos = pos();
  AttrPtr dims;
  if (!ExpectKeyword("across", fmt::format("in {}", op->name)) || !ExpectKeyword("dimensions", "after 'across'") ||
      !Expect(Tok::kEqual, "after 'dimensions'") || !ParseI64ArrayAttr(&dims)) {
    return false;
  }
  op->attrs.push_back({"dimensions", std::move(dims), dims_pos});
  if (kind() == Tok::kLBrace && !ParseAttrDict(&op->attrs)) return false;
  if (!Expect(Tok::kColon, "before the reduce type") || !ParseOpTypeSpec(op)) return false;
  const size_t n = inputs.size();
  if (op->operand_types.size() != 2 * n) {
    return Error(op->name_pos, fmt::format("{} with {} inputs needs {} operand types", op->name, n, 2 * n));
  }

  Region region;
  region.pos = pos();
  Block block;
  block.pos = pos();
  if (!applies.empty()) {
    if (n != 1) return Error(applies_pos, "'applies' needs exactly one reduce input");
    // The body applies the op to (accumulator, element): both of the init value's type.
    const Type& t = op->operand_types[1];
    block.args = {{"__reduce_lhs", t, applies_pos}, {"__reduce_rhs", t, applies_pos}};
    Op body;
    body.name = applies == "return" ? "func.return" : applies;
    body.pos = body.name_pos = applies_pos;
    body.results = {{"__reduce_result", 1, applies_pos}};
    body.operands = {{"__reduce_lhs", 0, applies_pos}, {"__reduce_rhs", 0, applies_pos}};
    body.operand_types = {t, t};
    body.result_types = {t};
    Op ret;
    ret.name = "stablehlo.return";
    ret.pos = ret.name_pos = applies_pos;
    ret.operands = {{"__reduce_result", 0, applies_pos}};
    block.ops.push_back(std::move(body));
    block.ops.push_back(std::move(ret));
    region.blocks.push_back(std::move(block));
    op->regions.push_back(std::move(region));
    return true;
  }
  if (!ExpectKeyword("reducer", fmt::format("(or 'applies') in {}", op->name))) return false;
  std::vector<BlockArg> lhs, rhs;
  for (size_t i = 0; i < n; ++i) {
    BlockArg a, b;
    if (!Expect(Tok::kLParen, "to start reducer arguments")) return false;
    a.pos = pos();
    if (kind() != Tok::kPercentId) return TokenError("expected a reducer argument");
    a.name = tok().str;
    Next();
    Location ignored;
    if (!Expect(Tok::kColon, "after a reducer argument") || !ParseType(&a.type) || !ParseOptionalLocation(&ignored) ||
        !Expect(Tok::kComma, "between reducer arguments")) {
      return false;
    }
    b.pos = pos();
    if (kind() != Tok::kPercentId) return TokenError("expected a reducer argument");
    b.name = tok().str;
    Next();
    if (!Expect(Tok::kColon, "after a reducer argument") || !ParseType(&b.type) || !ParseOptionalLocation(&ignored) ||
        !Expect(Tok::kRParen, "to end reducer arguments")) {
      return false;
    }
    lhs.push_back(std::move(a));
    rhs.push_back(std::move(b));
  }
  if (!ParseRegion(&region)) return false;
  if (region.blocks.empty()) return Error(region.pos, "the reducer region is empty");
  if (!region.blocks[0].args.empty()) return Error(region.blocks[0].pos, "the reducer arguments are given twice");
  region.blocks[0].args = std::move(lhs);
  region.blocks[0].args.insert(region.blocks[0].args.end(), rhs.begin(), rhs.end());
  op->regions.push_back(std::move(region));
  return true;
}

// stablehlo.while(%iterArg = %init, ...) : T, ... [attributes {...}] cond { ... } do { ... }
bool Parser::ParseWhileOp(Op* op) {
  Next();  // '('
  std::vector<BlockArg> iter_args;
  if (kind() != Tok::kRParen) {
    do {
      BlockArg arg;
      arg.pos = pos();
      if (kind() != Tok::kPercentId) return TokenError("expected a loop-carried value name");
      arg.name = tok().str;
      Next();
      op->operands.emplace_back();
      Location ignored;
      if (!Expect(Tok::kEqual, "after the loop-carried value name") || !ParseValueRef(&op->operands.back()) ||
          !ParseOptionalLocation(&ignored)) {
        return false;
      }
      iter_args.push_back(std::move(arg));
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRParen, "to end the loop operands")) return false;
  std::vector<Type> types;
  if (Eat(Tok::kColon) && !ParseTypeList(&types)) return false;
  if (types.size() != iter_args.size()) {
    return Error(op->name_pos,
                 fmt::format("{} has {} operands but {} types", op->name, iter_args.size(), types.size()));
  }
  for (size_t i = 0; i < types.size(); ++i) iter_args[i].type = types[i];
  op->operand_types = types;
  op->result_types = types;
  if (EatKeyword("attributes") && !ParseAttrDict(&op->attrs)) return false;
  op->regions.resize(2);
  const std::string context = fmt::format("in {}", op->name);
  if (!ExpectKeyword("cond", context) || !ParseRegion(&op->regions[0]) || !ExpectKeyword("do", context) ||
      !ParseRegion(&op->regions[1])) {
    return false;
  }
  for (Region& r : op->regions) {
    if (r.blocks.empty()) return Error(r.pos, "empty while region");
    if (r.blocks[0].args.empty()) r.blocks[0].args = iter_args;
  }
  return true;
}

// chlo.scan(%inputs) inits(%inits) dimension=0 [is_reverse=true ...] { ^bb0(...): ... } : (...) -> (...)
bool Parser::ParseScanOp(Op* op) {
  std::vector<ValueRef> inputs, inits;
  auto parse_list = [&](std::vector<ValueRef>* out) {
    if (!Expect(Tok::kLParen, "to start a value list")) return false;
    if (kind() != Tok::kRParen) {
      do {
        out->emplace_back();
        if (!ParseValueRef(&out->back())) return false;
      } while (Eat(Tok::kComma));
    }
    return Expect(Tok::kRParen, "to end a value list");
  };
  if (!parse_list(&inputs) || !ExpectKeyword("inits", "in chlo.scan") || !parse_list(&inits)) return false;
  op->operands = inputs;
  op->operands.insert(op->operands.end(), inits.begin(), inits.end());
  auto num_inputs = NewAttr(Attr::Kind::kInt, pos());
  num_inputs->int_value = static_cast<int64_t>(inputs.size());
  op->attrs.push_back({"__num_inputs", std::move(num_inputs), pos()});
  while (kind() == Tok::kBareId && LookAhead() == Tok::kEqual) {
    const size_t key_pos = pos();
    std::string key = tok().str;
    Next();
    Next();
    if (!ParsePrettyKeywordValue(op, key, key_pos)) return false;
    Eat(Tok::kComma);
  }
  if (kind() == Tok::kLBrace && LookAhead() != Tok::kCaretId && !ParseAttrDict(&op->attrs)) return false;
  op->regions.emplace_back();
  if (!ParseRegion(&op->regions.back())) return false;
  if (kind() == Tok::kLBrace && !ParseAttrDict(&op->attrs)) return false;
  return Expect(Tok::kColon, "before the scan type") && ParseOpTypeSpec(op);
}

void Parser::NormalizePrettyAttrs(Op* op) {
  // Positional values: the constant's value, check.*_const's expected value.
  for (NamedAttr& a : op->attrs) {
    if (a.name.empty()) a.name = "value";
  }
  if (IsHloOp(*op, "constant") && op->result_types.empty()) {
    if (const NamedAttr* value = op->FindAttr("value"); value != nullptr && value->value->type.has_value()) {
      op->result_types.push_back(*value->value->type);
    }
  }
  if (IsHloOp(*op, "broadcast_in_dim") || IsHloOp(*op, "dynamic_broadcast_in_dim"))
    Rename(op, "dims", "broadcast_dimensions");
  if (IsHloOp(*op, "transpose")) Rename(op, "dims", "permutation");
  if (IsHloOp(*op, "reverse")) Rename(op, "dims", "dimensions");
  if (IsHloOp(*op, "broadcast")) Rename(op, "sizes", "broadcast_sizes");
  if (IsHloOp(*op, "dynamic_slice")) Rename(op, "sizes", "slice_sizes");
  if (IsHloOp(*op, "iota") || IsHloOp(*op, "dynamic_iota")) Rename(op, "dim", "iota_dimension");
  if (IsHloOp(*op, "concatenate") || IsHloOp(*op, "get_dimension_size") || IsHloOp(*op, "set_dimension_size")) {
    Rename(op, "dim", "dimension");
  }
  if (IsHloOp(*op, "pad")) {
    Rename(op, "low", "edge_padding_low");
    Rename(op, "high", "edge_padding_high");
    Rename(op, "interior", "interior_padding");
  }
  if (IsHloOp(*op, "fft")) {
    Rename(op, "type", "fft_type");
    Rename(op, "length", "fft_length");
  }
  if (IsHloOp(*op, "rng_bit_generator")) Rename(op, "algorithm", "rng_algorithm");
  if (IsHloOp(*op, "rng")) Rename(op, "distribution", "rng_distribution");
  if (IsHloOp(*op, "einsum") || IsHloOp(*op, "unary_einsum")) Rename(op, "config", "einsum_config");
  if (IsHloOp(*op, "convolution")) Rename(op, "dim_numbers", "dimension_numbers");
  if (IsHloOp(*op, "dot_general") || IsHloOp(*op, "dot")) {
    Rename(op, "precision", "precision_config");
    // contracting_dims = [1] x [0], batching_dims = [0] x [0] -> #stablehlo.dot<...>
    const NamedAttr* contracting = op->FindAttr("contracting_dims");
    const NamedAttr* batching = op->FindAttr("batching_dims");
    if (contracting != nullptr || batching != nullptr) {
      auto dnums = NewAttr(Attr::Kind::kDict, contracting ? contracting->pos : batching->pos);
      dnums->dialect = "dot";
      if (batching != nullptr) {
        dnums->dict.emplace_back("lhs_batching_dimensions", batching->value->elements[0]);
        dnums->dict.emplace_back("rhs_batching_dimensions", batching->value->elements[1]);
      }
      if (contracting != nullptr) {
        dnums->dict.emplace_back("lhs_contracting_dimensions", contracting->value->elements[0]);
        dnums->dict.emplace_back("rhs_contracting_dimensions", contracting->value->elements[1]);
      }
      const size_t at = dnums->pos;
      std::erase_if(op->attrs,
                    [](const NamedAttr& a) { return a.name == "contracting_dims" || a.name == "batching_dims"; });
      op->attrs.push_back({"dot_dimension_numbers", std::move(dnums), at});
    }
  }
  if (IsHloOp(*op, "reduce_precision")) {
    for (NamedAttr& a : op->attrs) {
      if (a.name != "format" || a.value->kind != Attr::Kind::kKeyword) continue;
      // e<exponent bits>m<mantissa bits>
      const std::string& f = a.value->str;
      int64_t bits[2] = {0, 0};
      size_t i = 0;
      bool ok = true;
      for (int part = 0; part < 2 && ok; ++part) {
        ok = i < f.size() && f[i] == (part == 0 ? 'e' : 'm');
        ++i;
        size_t digits = 0;
        while (ok && i < f.size() && f[i] >= '0' && f[i] <= '9' && digits < 4) {
          bits[part] = bits[part] * 10 + (f[i] - '0');
          ++i;
          ++digits;
        }
        ok = ok && digits > 0;
      }
      if (!ok || i != f.size()) continue;
      auto exponent = NewAttr(Attr::Kind::kInt, a.pos);
      exponent->int_value = bits[0];
      auto mantissa = NewAttr(Attr::Kind::kInt, a.pos);
      mantissa->int_value = bits[1];
      a.name = "exponent_bits";
      a.value = std::move(exponent);
      op->attrs.push_back({"mantissa_bits", std::move(mantissa), a.pos});
      break;
    }
  }
  if (IsHloOp(*op, "compare") || op->name == "chlo.broadcast_compare") {
    // `EQ, %a, %b, FLOAT`: direction, then the optional comparison type.
    static const char* kNames[] = {"comparison_direction", "compare_type"};
    for (size_t i = 0; i < pretty_keywords_.size() && i < 2; ++i) {
      auto e = NewAttr(Attr::Kind::kEnum, pretty_keywords_[i].second);
      e->dialect = kNames[i];
      e->str = pretty_keywords_[i].first;
      op->attrs.push_back({kNames[i], std::move(e), pretty_keywords_[i].second});
    }
    pretty_keywords_.clear();
  }
  if (IsHloOp(*op, "composite") && !pretty_strings_.empty()) {
    auto s = NewAttr(Attr::Kind::kString, pretty_strings_[0].second);
    s->str = pretty_strings_[0].first;
    op->attrs.push_back({"name", std::move(s), pretty_strings_[0].second});
    pretty_strings_.clear();
  }
  // Anything positional that is left is kept under a synthetic name; the lowering reports it if unexpected.
  for (auto& [word, at] : pretty_keywords_) {
    auto k = NewAttr(Attr::Kind::kKeyword, at);
    k->str = word;
    op->attrs.push_back({"__keyword", std::move(k), at});
  }
  for (auto& [text, at] : pretty_strings_) {
    auto s = NewAttr(Attr::Kind::kString, at);
    s->str = text;
    op->attrs.push_back({"__string", std::move(s), at});
  }
}

}  // namespace xlac::shlo
