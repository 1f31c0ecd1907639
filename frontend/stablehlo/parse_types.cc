// MLIR types: tensor<2x?xf32, #stablehlo.bounds<?, 4>>, tuple<...>, complex<f32>, !stablehlo.token, function
// types, and the type specifications that end pretty op forms.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "fmt/format.h"
#include "frontend/stablehlo/parser_impl.h"

namespace xlac::shlo {

std::optional<PrimitiveType> ElementTypeFromMlir(std::string_view s) {
  auto digits_of = [](std::string_view rest) -> int {
    if (rest.empty() || rest.size() > 3) return -1;
    int v = 0;
    for (char c : rest) {
      if (c < '0' || c > '9') return -1;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  auto int_type = [](int bits, bool is_unsigned) -> std::optional<PrimitiveType> {
    switch (bits) {
      case 2:
        return is_unsigned ? PrimitiveType::kU2 : PrimitiveType::kS2;
      case 4:
        return is_unsigned ? PrimitiveType::kU4 : PrimitiveType::kS4;
      case 8:
        return is_unsigned ? PrimitiveType::kU8 : PrimitiveType::kS8;
      case 16:
        return is_unsigned ? PrimitiveType::kU16 : PrimitiveType::kS16;
      case 32:
        return is_unsigned ? PrimitiveType::kU32 : PrimitiveType::kS32;
      case 64:
        return is_unsigned ? PrimitiveType::kU64 : PrimitiveType::kS64;
      default:
        return std::nullopt;
    }
  };
  if (s == "i1") return PrimitiveType::kPred;
  if (s == "index") return PrimitiveType::kS64;
  if (s.size() > 1 && s[0] == 'i') return int_type(digits_of(s.substr(1)), false);
  if (s.size() > 2 && s.substr(0, 2) == "si") return int_type(digits_of(s.substr(2)), false);
  if (s.size() > 2 && s.substr(0, 2) == "ui") return int_type(digits_of(s.substr(2)), true);
  if (s.empty() || (s[0] != 'f' && s[0] != 'b')) return std::nullopt;
  // Float types: HLO's names are MLIR's lowercased (f8E4M3FN -> f8e4m3fn).
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::optional<PrimitiveType> type = ParsePrimitiveType(lower);
  if (type.has_value() && IsFloatingPointType(*type)) return type;
  return std::nullopt;
}

std::string TypeToString(const Type& type) {
  if (!type.text.empty()) return type.text;
  switch (type.kind) {
    case Type::Kind::kToken:
      return "!stablehlo.token";
    case Type::Kind::kTensor: {
      std::string out = "tensor<";
      for (int64_t d : type.dims) out += d == Type::kDynamic ? "?x" : fmt::format("{}x", d);
      return out + std::string(PrimitiveTypeName(type.element)) + ">";
    }
    case Type::Kind::kTuple: {
      std::string out = "tuple<";
      for (size_t i = 0; i < type.elements.size(); ++i) out += (i ? ", " : "") + TypeToString(type.elements[i]);
      return out + ">";
    }
    default:
      return "<type>";
  }
}

namespace {

bool IsTypeKeyword(std::string_view s) {
  static constexpr std::string_view kKeywords[] = {"tensor", "tuple", "complex", "memref", "vector", "none", "index"};
  for (std::string_view k : kKeywords) {
    if (s == k) return true;
  }
  if (ElementTypeFromMlir(s).has_value()) return true;
  return s == "tf32" || s == "f80" || s == "f128";
}

// `!quant.uniform<i8<-127:127>:f32:1, {0.5:3, 0.25}>`: storage type with optional range, expressed type, optional
// quantized dimension, then one scale[:zero_point] or a braced list of them (MLIR's quant dialect syntax).
bool ParseQuantUniform(std::string_view text, QuantParams* out, std::string* why) {
  size_t p = text.find('<');
  if (p == std::string_view::npos || text.empty() || text.back() != '>') return *why = "expected '<...>'", false;
  std::string_view body = text.substr(p + 1, text.size() - p - 2);
  size_t i = 0;
  auto skip = [&] {
    while (i < body.size() && std::isspace(static_cast<unsigned char>(body[i]))) ++i;
  };
  auto eat = [&](char c) {
    skip();
    if (i < body.size() && body[i] == c) {
      ++i;
      return true;
    }
    return false;
  };
  auto word = [&] {
    skip();
    size_t b = i;
    while (i < body.size() && (std::isalnum(static_cast<unsigned char>(body[i])) || body[i] == '_')) ++i;
    return body.substr(b, i - b);
  };
  auto integer = [&](int64_t* v) {
    skip();
    size_t b = i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i;
    if (i == b) return false;
    *v = std::strtoll(std::string(body.substr(b, i - b)).c_str(), nullptr, 10);
    return true;
  };
  auto number = [&](double* v) {
    skip();
    size_t b = i;
    while (i < body.size() &&
           (std::isalnum(static_cast<unsigned char>(body[i])) || body[i] == '.' || body[i] == '-' || body[i] == '+')) {
      ++i;
    }
    if (i == b) return false;
    const std::string num(body.substr(b, i - b));
    char* end = nullptr;
    *v = std::strtod(num.c_str(), &end);
    return end == num.c_str() + num.size();
  };
  const std::string_view storage = word();
  const bool is_unsigned = storage.size() > 1 && storage[0] == 'u';
  int64_t bits = 0;
  if (storage.size() < 2 || (storage[0] != 'i' && storage[0] != 'u') ||
      !absl::SimpleAtoi(std::string(storage.substr(1)), &bits)) {
    return *why = fmt::format("unsupported storage type '{}'", storage), false;
  }
  const std::optional<PrimitiveType> st = ElementTypeFromMlir(storage);
  if (!st.has_value() || bits < 2 || bits > 32) {
    return *why = fmt::format("unsupported storage type '{}'", storage), false;
  }
  out->storage = *st;
  const int64_t type_min = is_unsigned ? 0 : -(int64_t{1} << (bits - 1));
  const int64_t type_max = is_unsigned ? (int64_t{1} << bits) - 1 : (int64_t{1} << (bits - 1)) - 1;
  out->storage_min = type_min;
  out->storage_max = type_max;
  if (eat('<')) {
    if (!integer(&out->storage_min) || !eat(':') || !integer(&out->storage_max) || !eat('>')) {
      return *why = "expected '<min:max>' after the storage type", false;
    }
    if (out->storage_min < type_min || out->storage_max > type_max || out->storage_min > out->storage_max) {
      return *why = fmt::format("storage range [{}, {}] does not fit {}", out->storage_min, out->storage_max, storage),
             false;
    }
  }
  if (!eat(':')) return *why = "expected ':' before the expressed type", false;
  const std::string_view expressed = word();
  const std::optional<PrimitiveType> et = ElementTypeFromMlir(expressed);
  if (!et.has_value() || !IsFloatingPointType(*et)) {
    return *why = fmt::format("unsupported expressed type '{}'", expressed), false;
  }
  out->expressed = *et;
  if (eat(':')) {
    skip();
    if (i < body.size() && body[i] == '{') return *why = "sub-channel (blockwise) quantization is not supported", false;
    if (!integer(&out->axis) || out->axis < 0) return *why = "expected a quantized dimension", false;
  }
  if (!eat(',')) return *why = "expected ',' before the scale", false;
  auto scale_zp = [&]() {
    double scale;
    int64_t zp = 0;
    if (!number(&scale)) return false;
    if (eat(':') && !integer(&zp)) return false;
    if (!(scale > 0) || !std::isfinite(scale)) {
      *why = fmt::format("scale {} is not a positive finite number", scale);
      return false;
    }
    out->scales.push_back(scale);
    out->zero_points.push_back(zp);
    return true;
  };
  if (eat('{')) {
    skip();
    if (i < body.size() && body[i] == '{') return *why = "sub-channel quantization is not supported", false;
    do {
      if (!scale_zp()) return why->empty() ? (*why = "expected scale[:zero_point]", false) : false;
    } while (eat(','));
    if (!eat('}')) return *why = "expected '}' after the scales", false;
    if (out->axis < 0) return *why = "a list of scales needs a quantized dimension", false;
  } else {
    if (!scale_zp()) return why->empty() ? (*why = "expected scale[:zero_point]", false) : false;
    if (out->axis >= 0) return *why = "a per-axis type needs a braced list of scales", false;
  }
  skip();
  if (i != body.size()) return *why = fmt::format("unexpected '{}'", body.substr(i)), false;
  for (int64_t zp : out->zero_points) {
    if (zp < out->storage_min || zp > out->storage_max) {
      return *why = fmt::format("zero point {} is outside the storage range", zp), false;
    }
  }
  return true;
}

}  // namespace

bool Parser::IsTypeStart() const {
  switch (kind()) {
    case Tok::kBangId:
    case Tok::kLParen:
      return true;
    case Tok::kBareId:
      return IsTypeKeyword(tok().str);
    default:
      return false;
  }
}

bool Parser::ParseType(Type* out) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  const size_t start = pos();
  out->pos = start;
  auto finish = [&]() {
    out->text = std::string(Source(start, prev_end()));
    return true;
  };

  if (kind() == Tok::kLParen) {
    Next();
    out->kind = Type::Kind::kFunction;
    if (kind() != Tok::kRParen && !ParseTypeList(&out->elements)) return false;
    if (!Expect(Tok::kRParen, "to end the function inputs") || !Expect(Tok::kArrow, "in a function type")) {
      return false;
    }
    if (Eat(Tok::kLParen)) {
      if (kind() != Tok::kRParen && !ParseTypeList(&out->results)) return false;
      if (!Expect(Tok::kRParen, "to end the function results")) return false;
    } else {
      out->results.emplace_back();
      if (!ParseType(&out->results.back())) return false;
    }
    return finish();
  }

  if (kind() == Tok::kBangId) {
    const std::string name = tok().str;
    if (name == "stablehlo.token" || name == "mhlo.token") {
      Next();
      out->kind = Type::Kind::kToken;
      return finish();
    }
    if (auto it = type_aliases_.find(name); it != type_aliases_.end()) {
      Next();
      *out = it->second;
      out->pos = start;
      return finish();
    }
    Next();
    // A type of another dialect (!ttcore.tile<32x32, bf16>): kept for messages; where a value has it, ToShape
    // reports it by name.
    if (kind() == Tok::kLess && !SkipDialectBody(fmt::format("!{}<...>", name))) return false;
    out->kind = Type::Kind::kOther;
    out->quantized = name.rfind("quant.", 0) == 0;
    if (name == "quant.uniform") {
      auto params = std::make_shared<QuantParams>();
      std::string why;
      if (!ParseQuantUniform(Source(start, prev_end()), params.get(), &why)) {
        return Error(start, fmt::format("cannot read the quantized type: {}", why));
      }
      if (params) out->quant = std::move(params);
    }
    return finish();
  }

  if (kind() != Tok::kBareId) return TokenError(fmt::format("expected a type, but found {}", DescribeToken()));
  const std::string word = tok().str;

  if (word == "tensor") {
    Next();
    if (kind() != Tok::kLess) return TokenError("expected '<' after 'tensor'");
    out->kind = Type::Kind::kTensor;
    // The dimension list `2x?x3x` is scanned from the raw text: `2x3xf32` is not a token sequence.
    std::string_view text = this->text();
    size_t p = tok().end;
    auto skip_spaces = [&] {
      while (p < text.size() && (text[p] == ' ' || text[p] == '\t' || text[p] == '\n' || text[p] == '\r')) ++p;
    };
    skip_spaces();
    if (p < text.size() && text[p] == '*') {
      ++p;
      skip_spaces();
      if (p >= text.size() || text[p] != 'x') return Error(p, "expected 'x' after '*' in an unranked tensor type");
      ++p;
      out->unranked = true;
    } else {
      while (p < text.size()) {
        skip_spaces();
        if (p >= text.size()) break;  // `tensor<2x` at the end of the input: the element type is missing
        size_t dim_start = p;
        int64_t dim;
        if (text[p] == '?') {
          ++p;
          dim = Type::kDynamic;
        } else if (text[p] >= '0' && text[p] <= '9') {
          uint64_t value = 0;
          while (p < text.size() && text[p] >= '0' && text[p] <= '9') {
            value = value * 10 + static_cast<uint64_t>(text[p] - '0');
            if (value > (uint64_t{1} << 62)) return Error(dim_start, "tensor dimension is too large");
            ++p;
          }
          dim = static_cast<int64_t>(value);
        } else {
          break;
        }
        skip_spaces();
        if (p >= text.size() || text[p] != 'x') {
          return Error(p, "expected 'x' after a tensor dimension");
        }
        ++p;
        if (out->dims.size() >= 4096) return Error(dim_start, "tensor rank is too large");
        out->dims.push_back(dim);
      }
    }
    prev_end_ = p;
    ResetTo(p);
    // Element type.
    Type element;
    const size_t element_pos = pos();
    if (!ParseType(&element)) return false;
    if (element.quantized) {
      out->quantized = true;
      out->quant = element.quant;
      if (element.quant) out->element = element.quant->storage;
    } else if (element.kind != Type::Kind::kTensor || !element.is_scalar_type) {
      return Error(element_pos, fmt::format("'{}' is not a valid tensor element type", element.text));
    } else {
      out->element = element.element;
    }
    if (Eat(Tok::kComma)) {
      // Encoding: #stablehlo.bounds<4, ?> or #stablehlo.type_extensions<bounds = [4, ?]>.
      const size_t encoding_pos = pos();
      if (kind() == Tok::kHashId && (tok().str == "stablehlo.bounds" || tok().str == "mhlo.bounds")) {
        Next();
        if (!Expect(Tok::kLess, "to start the bounds")) return false;
        if (kind() != Tok::kGreater) {
          do {
            if (Eat(Tok::kQuestion)) {
              out->bounds.push_back(Type::kDynamic);
            } else {
              int64_t bound;
              if (!ParseInt64(&bound)) return false;
              out->bounds.push_back(bound);
            }
          } while (Eat(Tok::kComma));
        }
        if (!Expect(Tok::kGreater, "to end the bounds")) return false;
      } else {
        AttrPtr encoding;
        if (!ParseAttribute(&encoding)) return false;
        const Attr* bounds = encoding->kind == Attr::Kind::kDict ? encoding->Find("bounds") : nullptr;
        if (bounds != nullptr && bounds->kind == Attr::Kind::kArray) {
          for (const AttrPtr& b : bounds->elements) {
            out->bounds.push_back(b->kind == Attr::Kind::kInt ? b->int_value : Type::kDynamic);
          }
        } else if (encoding->kind == Attr::Kind::kOpaque && encoding->str.rfind("#sparse_tensor", 0) == 0) {
          return Error(encoding_pos, "sparse tensor encodings (#sparse_tensor.encoding) are not supported");
        } else if (encoding->kind != Attr::Kind::kDict && encoding->kind != Attr::Kind::kOpaque &&
                   encoding->kind != Attr::Kind::kString) {
          return Error(encoding_pos, "unsupported tensor encoding");
        }
        // Other dialects' encodings (#ttnn.ttnn_layout<...>) describe memory placement, not values: dropped.
      }
      if (!out->bounds.empty() && out->bounds.size() != out->dims.size()) {
        return Error(encoding_pos, fmt::format("expected {} bounds, one per dimension", out->dims.size()));
      }
    }
    if (!Expect(Tok::kGreater, "to end the tensor type")) return false;
    return finish();
  }

  if (word == "tuple") {
    Next();
    out->kind = Type::Kind::kTuple;
    if (!Expect(Tok::kLess, "after 'tuple'")) return false;
    if (kind() != Tok::kGreater && !ParseTypeList(&out->elements)) return false;
    if (!Expect(Tok::kGreater, "to end the tuple type")) return false;
    return finish();
  }

  if (word == "complex") {
    Next();
    if (!Expect(Tok::kLess, "after 'complex'")) return false;
    const size_t component_pos = pos();
    Type component;
    if (!ParseType(&component)) return false;
    if (!Expect(Tok::kGreater, "to end the complex type")) return false;
    out->kind = Type::Kind::kTensor;
    out->is_scalar_type = true;
    if (component.is_scalar_type && component.element == PrimitiveType::kF32) {
      out->element = PrimitiveType::kC64;
    } else if (component.is_scalar_type && component.element == PrimitiveType::kF64) {
      out->element = PrimitiveType::kC128;
    } else {
      return Error(component_pos, fmt::format("complex<{}> is not supported by HLO (only complex<f32> and "
                                              "complex<f64>)",
                                              component.text));
    }
    return finish();
  }

  if (std::optional<PrimitiveType> element = ElementTypeFromMlir(word)) {
    Next();
    out->kind = Type::Kind::kTensor;
    out->is_scalar_type = true;
    out->element = *element;
    return finish();
  }

  if (word == "memref" || word == "vector") {
    Next();
    if (kind() == Tok::kLess && !SkipDialectBody(fmt::format("{}<...>", word))) return false;
    out->kind = Type::Kind::kOther;
    return finish();
  }
  if (IsTypeKeyword(word)) {
    Next();
    out->kind = Type::Kind::kOther;
    return finish();
  }
  return TokenError(fmt::format("expected a type, but found {}", DescribeToken()));
}

bool Parser::ParseTypeList(std::vector<Type>* out) {
  do {
    out->emplace_back();
    if (!ParseType(&out->back())) return false;
    if (kind() != Tok::kComma) break;
    // A comma only continues the list if a type follows it.
    Lexer copy = lexer_;
    copy.Lex();
    bool type_follows = copy.kind() == Tok::kBangId || copy.kind() == Tok::kLParen ||
                        (copy.kind() == Tok::kBareId && IsTypeKeyword(copy.tok().str));
    if (!type_follows) break;
  } while (Eat(Tok::kComma));
  return true;
}

namespace {

bool DefinesNoResults(const Op& op) {
  return op.name == "func.return" || IsHloOp(op, "return") || op.name == "sdy.return" || IsHloOp(op, "trace") ||
         op.name.rfind("check.", 0) == 0;
}

}  // namespace

bool Parser::ParseOpTypeSpec(Op* op) {
  const size_t start = pos();
  std::vector<Type> list;
  if (!ParseTypeList(&list)) return false;
  if (list.size() == 1 && list[0].kind == Type::Kind::kFunction) {
    op->operand_types = std::move(list[0].elements);
    op->result_types = std::move(list[0].results);
    return true;
  }
  if (Eat(Tok::kArrow)) {
    op->operand_types = std::move(list);
    if (Eat(Tok::kLParen)) {
      if (kind() != Tok::kRParen && !ParseTypeList(&op->result_types)) return false;
      return Expect(Tok::kRParen, "to end the result types");
    }
    op->result_types.emplace_back();
    return ParseType(&op->result_types.back());
  }
  int64_t num_results = op->NumResults();
  if (num_results == 0 && !DefinesNoResults(*op)) num_results = 1;
  if (static_cast<int64_t>(list.size()) < num_results) {
    return Error(start, fmt::format("expected {} result types, but found {}", num_results, list.size()));
  }
  op->result_types.assign(list.end() - num_results, list.end());
  // `stablehlo.tuple %a : tuple<...>` spells only the result type.
  if (list.size() == op->operands.size() && !IsHloOp(*op, "tuple")) op->operand_types = std::move(list);
  return true;
}

}  // namespace xlac::shlo
