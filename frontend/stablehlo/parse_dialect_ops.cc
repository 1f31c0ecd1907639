// Custom assembly of the arith, math, tensor and shape ops that JAX, torch-mlir and onnx-mlir leave in StableHLO
// modules (`arith.constant dense<1> : tensor<1xi64>`, `arith.cmpi slt, %a, %b : i64`, `arith.index_cast %i : index
// to i64`, `tensor.extract %t[%i] : tensor<4xf32>`, `tensor.expand_shape %t [[0, 1]] output_shape [2, 3] : ... into
// ...`, `shape.const_shape [2, 3] : tensor<2xindex>`). Grammar as in mlir/include/mlir/Dialect/*/IR/*Ops.td. Ops are
// normalized to their generic attribute names (predicate, value, reassociation, static_offsets, ...) so the lowering
// (lower_dialect_ops.cc) reads both forms the same way.
#include <limits>

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

bool IsCastOp(std::string_view name) {
  for (std::string_view cast : {"arith.extf", "arith.truncf", "arith.extsi", "arith.extui", "arith.trunci",
                                "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui", "arith.index_cast",
                                "arith.index_castui", "arith.bitcast", "tensor.cast", "tensor.bitcast"}) {
    if (name == cast) return true;
  }
  return false;
}

Type ElementOf(const Type& t, PrimitiveType element) {
  Type out = t;
  out.element = element;
  out.text.clear();
  return out;
}

}  // namespace

// %a, %b (allows `%a` alone; stops before anything else).
bool Parser::ParseOperandList(Op* op) {
  if (kind() != Tok::kPercentId) return true;
  do {
    op->operands.emplace_back();
    if (!ParseValueRef(&op->operands.back())) return false;
  } while (Eat(Tok::kComma));
  return true;
}

// `[0, %i, 2]`: MLIR's custom<DynamicIndexList>. Constants go to `statics`, SSA values (ShapedType::kDynamic in the
// static list, as in the generic form) to the op's operands; returns how many SSA values there were.
bool Parser::ParseDynamicIndexList(Op* op, std::vector<int64_t>* statics, int32_t* num_values) {
  *num_values = 0;
  if (!Expect(Tok::kLSquare, "to start an index list")) return false;
  if (kind() != Tok::kRSquare) {
    do {
      if (kind() == Tok::kPercentId) {
        op->operands.emplace_back();
        if (!ParseValueRef(&op->operands.back())) return false;
        statics->push_back(std::numeric_limits<int64_t>::min());
        ++*num_values;
      } else {
        int64_t v;
        if (!ParseInt64(&v)) return false;
        statics->push_back(v);
      }
    } while (Eat(Tok::kComma));
  }
  return Expect(Tok::kRSquare, "to end an index list");
}

bool Parser::ParseDialectOp(Op* op) {
  const std::string& name = op->name;
  auto attr_dict = [&]() { return kind() != Tok::kLBrace || ParseAttrDict(&op->attrs); };
  // `fastmath<fast>`, `overflow<nsw>`: flags that do not change what HLO computes.
  auto skip_flags = [&]() -> bool {
    while ((IsKeyword("fastmath") || IsKeyword("overflow") || IsKeyword("exact")) && LookAhead() == Tok::kLess) {
      const std::string flag = tok().str;
      Next();
      if (!SkipDialectBody(fmt::format("{}<...>", flag))) return false;
    }
    return true;
  };
  auto one_type = [&](Type* out) {
    return Expect(Tok::kColon, fmt::format("before the type of {}", name)) && ParseType(out);
  };
  auto i64_array = [&](const std::vector<int64_t>& values, size_t at) {
    auto a = NewAttr(Attr::Kind::kDenseArray, at);
    Type i64;
    i64.kind = Type::Kind::kTensor;
    i64.is_scalar_type = true;
    i64.element = PrimitiveType::kS64;
    i64.text = "i64";
    a->type = i64;
    for (int64_t v : values) {
      auto e = NewAttr(Attr::Kind::kInt, at);
      e->int_value = v;
      a->elements.push_back(std::move(e));
    }
    return a;
  };

  if (name == "arith.constant" || name == "util.unfoldable_constant") {
    // attr-dict $value: the value carries its type (`0 : index`, `dense<1> : tensor<1xi64>`, `true`). IREE's
    // util.unfoldable_constant (its e2e tests' inputs) is a constant the compiler may not fold: the same value.
    if (!attr_dict()) return false;
    const size_t at = pos();
    AttrPtr value;
    if (!ParseAttribute(&value)) return false;
    if (!value->type.has_value()) {
      if (value->kind != Attr::Kind::kBool) return Error(at, "arith.constant needs a typed value (`1 : i32`)");
      Type i1;
      i1.kind = Type::Kind::kTensor;
      i1.is_scalar_type = true;
      i1.element = PrimitiveType::kPred;
      i1.text = "i1";
      i1.pos = at;
      op->result_types.push_back(i1);
    } else {
      op->result_types.push_back(*value->type);
    }
    op->attrs.push_back({"value", std::move(value), at});
    return true;
  }
  if (name == "arith.cmpi" || name == "arith.cmpf") {
    // $predicate, $lhs, $rhs : type($lhs)
    const size_t at = pos();
    if (kind() != Tok::kBareId) {
      return TokenError(fmt::format("expected a comparison predicate, but found {}", DescribeToken()));
    }
    auto predicate = NewAttr(Attr::Kind::kKeyword, at);
    predicate->str = tok().str;
    Next();
    op->attrs.push_back({"predicate", std::move(predicate), at});
    if (!Expect(Tok::kComma, "after the predicate") || !ParseOperandList(op) || !skip_flags() || !attr_dict()) {
      return false;
    }
    Type t;
    if (!one_type(&t)) return false;
    op->operand_types = {t, t};
    op->result_types = {ElementOf(t, PrimitiveType::kPred)};
    return true;
  }
  if (IsCastOp(name)) {
    // $in attr-dict : type($in) to type($out)
    op->operands.emplace_back();
    if (!ParseValueRef(&op->operands.back()) || !attr_dict()) return false;
    Type from, to;
    if (!one_type(&from) || !ExpectKeyword("to", fmt::format("in {}", name)) || !ParseType(&to)) return false;
    op->operand_types = {from};
    op->result_types = {to};
    return true;
  }
  if (name == "arith.select") {
    // %c, %t, %f : type   or   : cond_type, type
    if (!ParseOperandList(op) || !attr_dict()) return false;
    std::vector<Type> types;
    if (!Expect(Tok::kColon, "before the type of arith.select") || !ParseTypeList(&types)) return false;
    op->result_types = {types.back()};
    // With one type the condition is i1 or a tensor of i1 of the same shape: the lowering accepts either.
    if (op->operands.size() == 3 && types.size() == 2) op->operand_types = {types[0], types[1], types[1]};
    return true;
  }
  if (name.rfind("arith.", 0) == 0 || name.rfind("math.", 0) == 0) {
    // $lhs, $rhs [flags] attr-dict : type($result); math.fpowi spells both operand types.
    if (!ParseOperandList(op) || !skip_flags() || !attr_dict()) return false;
    std::vector<Type> types;
    if (!Expect(Tok::kColon, fmt::format("before the type of {}", name)) || !ParseTypeList(&types)) return false;
    op->result_types = {types[0]};
    if (types.size() == op->operands.size()) {
      op->operand_types = types;
    } else if (types.size() == 1) {
      op->operand_types.assign(op->operands.size(), types[0]);
    }
    return true;
  }
  if (name == "tensor.dim") {
    // $source, $index attr-dict : type($source)
    if (!ParseOperandList(op) || !attr_dict()) return false;
    Type t;
    if (!one_type(&t)) return false;
    Type index;
    index.kind = Type::Kind::kTensor;
    index.is_scalar_type = true;
    index.element = PrimitiveType::kS64;
    index.text = "index";
    index.pos = t.pos;
    if (op->operands.size() == 2) op->operand_types = {t, index};
    op->result_types = {index};
    return true;
  }
  if (name == "tensor.empty") {
    // (dynamic sizes) attr-dict : type
    if (!Expect(Tok::kLParen, "after tensor.empty") || !ParseOperandList(op) ||
        !Expect(Tok::kRParen, "to end the sizes of tensor.empty") || !attr_dict()) {
      return false;
    }
    op->result_types.emplace_back();
    return one_type(&op->result_types.back());
  }
  if (name == "tensor.extract" || name == "tensor.insert") {
    // tensor.extract %t[%i, %j] : T      tensor.insert %scalar into %t[%i, %j] : T
    op->operands.emplace_back();
    if (!ParseValueRef(&op->operands.back())) return false;
    if (name == "tensor.insert") {
      op->operands.emplace_back();
      if (!ExpectKeyword("into", "in tensor.insert") || !ParseValueRef(&op->operands.back())) return false;
    }
    if (!Expect(Tok::kLSquare, fmt::format("to start the indices of {}", name))) return false;
    if (kind() != Tok::kRSquare && !ParseOperandList(op)) return false;
    if (!Expect(Tok::kRSquare, fmt::format("to end the indices of {}", name)) || !attr_dict()) return false;
    Type t;
    if (!one_type(&t)) return false;
    if (name == "tensor.extract") {
      Type scalar = t;
      scalar.dims.clear();
      scalar.is_scalar_type = true;
      scalar.text.clear();
      op->result_types = {scalar};
    } else {
      op->result_types = {t};
    }
    return true;
  }
  if (name == "tensor.from_elements" || name == "tensor.splat") {
    // %a, %b attr-dict : type($result)   /   %x[dynamic sizes] attr-dict : type($result)
    if (!ParseOperandList(op)) return false;
    if (name == "tensor.splat" && Eat(Tok::kLSquare)) {
      if (kind() != Tok::kRSquare && !ParseOperandList(op)) return false;
      if (!Expect(Tok::kRSquare, "to end the sizes of tensor.splat")) return false;
    }
    if (!attr_dict()) return false;
    op->result_types.emplace_back();
    return one_type(&op->result_types.back());
  }
  if (name == "tensor.expand_shape" || name == "tensor.collapse_shape") {
    // $src [[0, 1], [2]] [output_shape [2, 3, 4]] attr-dict : type($src) into type($result)
    op->operands.emplace_back();
    if (!ParseValueRef(&op->operands.back())) return false;
    const size_t at = pos();
    AttrPtr reassociation;
    if (!ParseAttribute(&reassociation, /*allow_type_suffix=*/false)) return false;
    op->attrs.push_back({"reassociation", std::move(reassociation), at});
    if (EatKeyword("output_shape")) {
      std::vector<int64_t> statics;
      int32_t num_values;
      const size_t shape_pos = pos();
      if (!ParseDynamicIndexList(op, &statics, &num_values)) return false;
      op->attrs.push_back({"static_output_shape", i64_array(statics, shape_pos), shape_pos});
    }
    if (!attr_dict()) return false;
    Type from, to;
    if (!one_type(&from) || !ExpectKeyword("into", fmt::format("in {}", name)) || !ParseType(&to)) return false;
    op->operand_types = {from};
    op->result_types = {to};
    return true;
  }
  if (name == "tensor.extract_slice" || name == "tensor.insert_slice") {
    // $source [into $dest] [offsets] [sizes] [strides] attr-dict : type($source) (to|into) type($result)
    op->operands.emplace_back();
    if (!ParseValueRef(&op->operands.back())) return false;
    const bool insert = name == "tensor.insert_slice";
    if (insert) {
      op->operands.emplace_back();
      if (!ExpectKeyword("into", "in tensor.insert_slice") || !ParseValueRef(&op->operands.back())) return false;
    }
    const char* lists[] = {"static_offsets", "static_sizes", "static_strides"};
    std::vector<int64_t> segments = {1};
    if (insert) segments.push_back(1);
    for (const char* list : lists) {
      std::vector<int64_t> statics;
      int32_t num_values;
      const size_t list_pos = pos();
      if (!ParseDynamicIndexList(op, &statics, &num_values)) return false;
      op->attrs.push_back({list, i64_array(statics, list_pos), list_pos});
      segments.push_back(num_values);
    }
    op->attrs.push_back({"operandSegmentSizes", i64_array(segments, op->name_pos), op->name_pos});
    if (!attr_dict()) return false;
    Type from, to;
    if (!one_type(&from) || !ExpectKeyword(insert ? "into" : "to", fmt::format("in {}", name)) || !ParseType(&to)) {
      return false;
    }
    op->result_types = {to};
    return true;
  }
  if (name == "tensor.concat") {
    // dim(0) %a, %b attr-dict : (types) -> type
    const size_t at = pos();
    auto dim = NewAttr(Attr::Kind::kInt, at);
    if (!ExpectKeyword("dim", "in tensor.concat") || !Expect(Tok::kLParen, "after 'dim'") ||
        !ParseInt64(&dim->int_value) || !Expect(Tok::kRParen, "after the concatenation dimension")) {
      return false;
    }
    op->attrs.push_back({"dim", std::move(dim), at});
    if (!ParseOperandList(op) || !attr_dict()) return false;
    return Expect(Tok::kColon, "before the type of tensor.concat") && ParseOpTypeSpec(op);
  }
  if (name == "tensor.reshape") {
    // $source($shape) attr-dict : (types) -> type
    op->operands.emplace_back();
    if (!ParseValueRef(&op->operands.back()) || !Expect(Tok::kLParen, "before the shape of tensor.reshape")) {
      return false;
    }
    op->operands.emplace_back();
    if (!ParseValueRef(&op->operands.back()) || !Expect(Tok::kRParen, "after the shape of tensor.reshape") ||
        !attr_dict()) {
      return false;
    }
    return Expect(Tok::kColon, "before the type of tensor.reshape") && ParseOpTypeSpec(op);
  }
  if (name == "shape.const_shape") {
    // [2, 3] attr-dict : type   (onnx-mlir's ONNX -> StableHLO, mhlo-era exports)
    const size_t at = pos();
    std::vector<int64_t> extents;
    if (!Expect(Tok::kLSquare, "to start the extents of shape.const_shape")) return false;
    if (kind() != Tok::kRSquare) {
      do {
        extents.push_back(0);
        if (!ParseInt64(&extents.back())) return false;
      } while (Eat(Tok::kComma));
    }
    if (!Expect(Tok::kRSquare, "to end the extents of shape.const_shape") || !attr_dict()) return false;
    op->attrs.push_back({"shape", i64_array(extents, at), at});
    op->result_types.emplace_back();
    return one_type(&op->result_types.back());
  }
  if (name == "shape.shape_of" || name == "shape.broadcast" || name == "shape.to_extent_tensor") {
    // $operands attr-dict : type($operands) -> type($result)
    if (!ParseOperandList(op) || !attr_dict()) return false;
    std::vector<Type> types;
    Type result;
    if (!Expect(Tok::kColon, fmt::format("before the types of {}", name)) || !ParseTypeList(&types) ||
        !Expect(Tok::kArrow, fmt::format("before the result type of {}", name)) || !ParseType(&result)) {
      return false;
    }
    if (types.size() == op->operands.size()) op->operand_types = types;
    op->result_types = {result};
    return true;
  }
  // Other ops of these dialects: the generic pretty shape; the lowering names what it does not support.
  return ParsePrettyGeneric(op);
}

}  // namespace xlac::shlo
