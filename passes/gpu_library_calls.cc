#include "passes/gpu_library_calls.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <numbers>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/primitive_type.h"
#include "ir/status_macros.h"
#include "passes/replace_call.h"

namespace xlac {
namespace {

constexpr std::string_view kGemm = "__cublas$gemm";
constexpr std::string_view kLtMatmul = "__cublas$lt$matmul";
constexpr std::string_view kLtMatmulF8 = "__cublas$lt$matmul$f8";
constexpr std::string_view kConvForward = "__cudnn$convForward";
constexpr std::string_view kConvBackwardInput = "__cudnn$convBackwardInput";
constexpr std::string_view kConvBackwardFilter = "__cudnn$convBackwardFilter";
constexpr std::string_view kConvBiasActivation = "__cudnn$convBiasActivationForward";
constexpr std::string_view kConvGraph = "__cudnn$convForwardGraph";

absl::Status CallError(const Instruction& call, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("custom-call %{} (target \"{}\"): {}", call.name(),
                                                std::string(call.StringAttr("custom_call_target")), why));
}

// ---- The backend_config's JSON ----

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  double number = 0;
  bool boolean = false;
  std::string str;
  std::vector<Json> array;
  std::vector<std::string> keys;  // an object's: keys[i] names values[i]
  std::vector<Json> values;

  const Json* Find(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return &values[i];
    }
    return nullptr;
  }
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  std::optional<Json> ParseAll() {
    Json out;
    if (!Value(&out, 0)) return std::nullopt;
    Skip();
    if (at_ != text_.size()) return std::nullopt;
    return out;
  }

 private:
  void Skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool Eat(char c) {
    Skip();
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\' && at_ < text_.size()) {
        const char e = text_[at_++];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;  // \uXXXX does not occur in XLA's configs
      }
      *out += c;
    }
    return Eat('"');
  }
  bool Value(Json* out, int depth) {
    if (depth > 64) return false;
    Skip();
    if (at_ >= text_.size()) return false;
    const char c = text_[at_];
    if (c == '{') {
      out->kind = Json::Kind::kObject;
      ++at_;
      if (Eat('}')) return true;
      do {
        std::string key;
        Json value;
        if (!String(&key) || !Eat(':') || !Value(&value, depth + 1)) return false;
        out->keys.push_back(std::move(key));
        out->values.push_back(std::move(value));
      } while (Eat(','));
      return Eat('}');
    }
    if (c == '[') {
      out->kind = Json::Kind::kArray;
      ++at_;
      if (Eat(']')) return true;
      do {
        out->array.emplace_back();
        if (!Value(&out->array.back(), depth + 1)) return false;
      } while (Eat(','));
      return Eat(']');
    }
    if (c == '"') {
      out->kind = Json::Kind::kString;
      return String(&out->str);
    }
    for (std::string_view word : {"true", "false", "null"}) {
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        out->kind = word == "null" ? Json::Kind::kNull : Json::Kind::kBool;
        out->boolean = word == "true";
        return true;
      }
    }
    size_t end = at_;
    while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '-' ||
                                  text_[end] == '+' || text_[end] == '.')) {
      ++end;
    }
    std::optional<double> number = ParseNumber(text_.substr(at_, end - at_));
    if (!number) return false;
    out->kind = Json::Kind::kNumber;
    out->number = *number;
    at_ = end;
    return true;
  }

 public:
  // A JSON number, or a proto3 JSON int64 / double written as a string ("1", "NaN", "Infinity").
  static std::optional<double> ParseNumber(std::string_view s) {
    if (s == "NaN") return std::nan("");
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
    if (s.empty()) return std::nullopt;
    std::string copy(s);
    char* end = nullptr;
    const double v = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) return std::nullopt;
    return v;
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

// The message inside GpuBackendConfig (`{"gemm_backend_config": {...}, "operation_queue_id": "0"}`), or the whole
// config as older XLA printed it.
absl::StatusOr<Json> BackendConfig(const Instruction& call, std::string_view message) {
  std::optional<Json> json = JsonParser(call.backend_config()).ParseAll();
  if (!json || json->kind != Json::Kind::kObject) {
    return CallError(call, fmt::format("backend_config is not a JSON object (XLA:GPU's {} for this target)", message));
  }
  if (const Json* inner = json->Find(message); inner != nullptr) {
    if (inner->kind != Json::Kind::kObject) return CallError(call, fmt::format("{} must be an object", message));
    return *inner;
  }
  return *std::move(json);
}

std::optional<double> Number(const Json& config, std::string_view key) {
  const Json* v = config.Find(key);
  if (v == nullptr) return std::nullopt;
  if (v->kind == Json::Kind::kNumber) return v->number;
  if (v->kind == Json::Kind::kString) return JsonParser::ParseNumber(v->str);
  return std::nullopt;
}

// An int64 list (proto3 JSON writes int64 as strings).
std::optional<std::vector<int64_t>> IntList(const Json* v) {
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  if (v->kind != Json::Kind::kArray) return std::nullopt;
  for (const Json& e : v->array) {
    std::optional<double> d = e.kind == Json::Kind::kNumber   ? std::optional<double>(e.number)
                              : e.kind == Json::Kind::kString ? JsonParser::ParseNumber(e.str)
                                                              : std::nullopt;
    if (!d || *d != std::floor(*d) || *d < 0 || *d > 1e9) return std::nullopt;
    out.push_back(static_cast<int64_t>(*d));
  }
  return out;
}

// An enum field: its name, or its number as proto3 JSON may also write it (as a number or a numeric string).
std::string EnumName(const Json& config, std::string_view key, const std::vector<std::string_view>& names) {
  const Json* v = config.Find(key);
  if (v == nullptr) return std::string(names[0]);
  std::optional<double> n =
      v->kind == Json::Kind::kNumber ? std::optional<double>(v->number) : JsonParser::ParseNumber(v->str);
  if (n && *n >= 0 && *n < static_cast<double>(names.size()) && *n == std::floor(*n)) {
    return std::string(names[static_cast<size_t>(*n)]);
  }
  if (n) return fmt::format("{}", *n);
  return v->str;
}

// precision_config {"operand_precision": ["HIGHEST", ...], "algorithm": "ALG_DOT_BF16_BF16_F32"} as the dot's and
// convolution's attributes.
void SetPrecision(const Json& config, Instruction* op) {
  const Json* precision = config.Find("precision_config");
  if (precision == nullptr || precision->kind != Json::Kind::kObject) return;
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  if (const Json* operands = precision->Find("operand_precision");
      operands != nullptr && operands->kind == Json::Kind::kArray && !operands->array.empty()) {
    std::vector<std::string> values;
    bool all_default = true;
    for (const Json& p : operands->array) {
      values.push_back(lower(p.str.empty() ? "default" : p.str));
      all_default = all_default && values.back() == "default";
    }
    if (!all_default) op->SetAttr("operand_precision", AttrValue::EnumList(std::move(values)));
  }
  if (op->opcode() != Opcode::kDot) return;
  if (const Json* algorithm = precision->Find("algorithm");
      algorithm != nullptr && algorithm->kind == Json::Kind::kString && algorithm->str.starts_with("ALG_") &&
      algorithm->str != "ALG_UNSET") {
    op->SetAttr("algorithm", AttrValue::Enum(lower(algorithm->str.substr(4))));
  }
}

// ---- Building HLO ----

class Builder {
 public:
  Builder(Module& module, Computation& comp, const Instruction& at) : module_(module), comp_(comp), at_(at) {}

  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands) {
    shape.layout.reset();
    return AddAtCall(module_, comp_, at_, op, std::move(shape), std::move(operands));
  }

  // `value` (+ `imag` i) of `type`, broadcast to `shape`'s dimensions.
  Instruction* Fill(const Shape& shape, PrimitiveType type, double value, double imag = 0) {
    Literal scalar(Shape::Scalar(type));
    if (type == PrimitiveType::kC64) {
      scalar.Set(0, std::complex<float>(static_cast<float>(value), static_cast<float>(imag)));
    } else if (type == PrimitiveType::kC128) {
      scalar.Set(0, std::complex<double>(value, imag));
    } else {
      scalar.SetFromDouble(0, value);
    }
    Instruction* c = Add(Opcode::kConstant, Shape::Scalar(type), {});
    c->set_literal(std::move(scalar));
    if (shape.rank() == 0) return c;
    Instruction* all = Add(Opcode::kBroadcast, Shape::Array(type, shape.dimensions), {c});
    all->SetAttr("dimensions", AttrValue::IntList({}));
    return all;
  }
  Instruction* Like(Instruction* x, double value) { return Fill(x->shape(), x->shape().element_type, value); }

  Instruction* Convert(Instruction* x, PrimitiveType type) {
    if (x->shape().element_type == type) return x;
    return Add(Opcode::kConvert, Shape::Array(type, x->shape().dimensions), {x});
  }
  Instruction* Binary(Opcode op, Instruction* x, Instruction* y) { return Add(op, x->shape(), {x, y}); }
  Instruction* Unary(Opcode op, Instruction* x) { return Add(op, x->shape(), {x}); }
  Instruction* Scale(Instruction* x, double value, double imag = 0) {
    if (value == 1 && imag == 0) return x;
    return Binary(Opcode::kMultiply, x, Fill(x->shape(), x->shape().element_type, value, imag));
  }

  // Result dimension i is x's dimension perm[i].
  Instruction* Transpose(Instruction* x, const std::vector<int64_t>& perm) {
    std::vector<int64_t> identity(perm.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (perm == identity) return x;
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(x->shape().dimensions[p]);
    Instruction* t = Add(Opcode::kTranspose, Shape::Array(x->shape().element_type, dims), {x});
    t->SetAttr("dimensions", AttrValue::IntList(perm));
    return t;
  }
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims) {
    return Add(Opcode::kReshape, Shape::Array(x->shape().element_type, std::move(dims)), {x});
  }
  Instruction* Broadcast(Instruction* x, const Shape& like, std::vector<int64_t> dimensions) {
    Instruction* b = Add(Opcode::kBroadcast, Shape::Array(x->shape().element_type, like.dimensions), {x});
    b->SetAttr("dimensions", AttrValue::IntList(std::move(dimensions)));
    return b;
  }

  // x in `shape`'s type and layout (a copy when the call's result asks for another layout).
  Instruction* As(Instruction* x, const Shape& shape) {
    x = Convert(x, shape.element_type);
    auto layout = [](const Shape& s) { return s.layout.has_value() ? *s.layout : Layout::Default(s.rank()); };
    if (!shape.layout.has_value() || layout(x->shape()) == layout(shape)) return x;
    auto copy = Instruction::Create(Opcode::kCopy, module_.UniqueInstructionName("copy"), shape, {x});
    copy->set_loc(at_.loc());
    return comp_.AddInstruction(std::move(copy));
  }

  // The call's result: `values` first, zeros for the rest (workspaces and scratch buffers).
  Instruction* Results(const Instruction& call, const std::vector<Instruction*>& values) {
    if (!call.shape().IsTuple()) return As(values[0], call.shape());
    std::vector<Instruction*> parts;
    for (size_t i = 0; i < call.shape().tuple_shapes.size(); ++i) {
      const Shape& leaf = call.shape().tuple_shapes[i];
      parts.push_back(As(i < values.size() ? values[i] : Fill(leaf, leaf.element_type, 0), leaf));
    }
    Shape tuple = call.shape();
    auto t = Instruction::Create(Opcode::kTuple, module_.UniqueInstructionName("tuple"), tuple, std::move(parts));
    t->set_loc(at_.loc());
    return comp_.AddInstruction(std::move(t));
  }

 private:
  Module& module_;
  Computation& comp_;
  const Instruction& at_;
};

bool IsNarrowFloat(PrimitiveType t) { return IsFloatingPointType(t) && BitWidth(t) < 32; }

// What cuBLAS and cuDNN accumulate and scale in: f32 for 16- and 8-bit floats, s32 for integers (f32 when the
// result is a float), the result's own type otherwise.
PrimitiveType ComputeType(PrimitiveType operand, PrimitiveType result) {
  if (IsIntegralType(operand)) return IsIntegralType(result) ? PrimitiveType::kS32 : PrimitiveType::kF32;
  if (IsNarrowFloat(operand) || IsNarrowFloat(result)) return PrimitiveType::kF32;
  return result;
}

// Clamps to the integer type's range before a convert, as XLA's int8 convolution patterns do.
Instruction* ToResultType(Builder& b, Instruction* x, PrimitiveType type) {
  if (IsIntegralType(type) && !IsIntegralType(x->shape().element_type) && BitWidth(type) < 32) {
    const bool is_signed = IsSignedIntegralType(type);
    const double lo = is_signed ? -std::ldexp(1.0, BitWidth(type) - 1) : 0;
    const double hi = is_signed ? std::ldexp(1.0, BitWidth(type) - 1) - 1 : std::ldexp(1.0, BitWidth(type)) - 1;
    x = b.Add(Opcode::kClamp, x->shape(), {b.Like(x, lo), x, b.Like(x, hi)});
  }
  return b.Convert(x, type);
}

// ---- cuBLAS ----

// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): cuBLASLt's GELU epilogue, the approximation XLA fuses into it.
Instruction* TanhGelu(Builder& b, Instruction* x) {
  Instruction* cube = b.Binary(Opcode::kMultiply, b.Binary(Opcode::kMultiply, x, x), x);
  Instruction* inner = b.Binary(Opcode::kAdd, x, b.Scale(cube, 0.044715));
  Instruction* t = b.Unary(Opcode::kTanh, b.Scale(inner, std::sqrt(2.0 / std::numbers::pi)));
  Instruction* one_plus = b.Binary(Opcode::kAdd, b.Like(t, 1), t);
  return b.Binary(Opcode::kMultiply, b.Scale(x, 0.5), one_plus);
}

absl::StatusOr<Instruction*> Gemm(Module& module, Computation& comp, Instruction* call) {
  const std::string_view target = call->StringAttr("custom_call_target");
  XLAC_ASSIGN_OR_RETURN(Json config, BackendConfig(*call, "gemm_backend_config"));
  static const std::vector<std::string_view> kEpilogues = {"DEFAULT", "BIAS",     "RELU",      "BIAS_RELU",
                                                           "GELU",    "GELU_AUX", "BIAS_GELU", "BIAS_GELU_AUX"};
  const std::string epilogue = EnumName(config, "epilogue", kEpilogues);
  if (std::find(kEpilogues.begin(), kEpilogues.end(), epilogue) == kEpilogues.end()) {
    return CallError(*call, fmt::format("epilogue {} is not supported (only {})", epilogue,
                                        "DEFAULT, BIAS, RELU, BIAS_RELU, GELU, GELU_AUX, BIAS_GELU, BIAS_GELU_AUX"));
  }
  if (std::optional<double> activation = Number(config, "activation_mode"); activation && *activation != 0) {
    return CallError(*call,
                     fmt::format("activation_mode {} is not supported (an early XLA field; only 0)", *activation));
  }
  if (const Json* f8 = config.Find("is_fp8"); f8 != nullptr && f8->boolean) {
    return CallError(*call, "is_fp8 (an FP8 matmul with scales) is not supported");
  }
  const bool bias = epilogue.starts_with("BIAS");
  const bool aux = epilogue.ends_with("_AUX");
  const bool relu = epilogue.ends_with("RELU");
  const bool gelu = epilogue.find("GELU") != std::string::npos;
  // Absent (hand-written configs): XLA always writes alpha_real, and a gemm scaled by 0 is nobody's intent.
  const double alpha = Number(config, "alpha_real").value_or(1), alpha_imag = Number(config, "alpha_imag").value_or(0);
  const double beta = Number(config, "beta").value_or(0);

  const Json* dnums = config.Find("dot_dimension_numbers");
  std::optional<std::vector<int64_t>> lc, rc, lb, rb;
  if (dnums != nullptr) {
    lc = IntList(dnums->Find("lhs_contracting_dimensions"));
    rc = IntList(dnums->Find("rhs_contracting_dimensions"));
    lb = IntList(dnums->Find("lhs_batch_dimensions"));
    rb = IntList(dnums->Find("rhs_batch_dimensions"));
  }
  if (!lc || !rc || !lb || !rb || lc->size() != rc->size() || lb->size() != rb->size()) {
    return CallError(*call, "backend_config needs dot_dimension_numbers with lhs/rhs contracting and batch dimensions");
  }
  const int64_t expected = 2 + (beta != 0 ? 1 : 0) + (bias ? 1 : 0);
  const std::vector<Shape> leaves = call->shape().IsTuple() ? call->shape().tuple_shapes : std::vector{call->shape()};
  const std::string signature =
      fmt::format("(a, b{}{}) -> d{}", beta != 0 ? ", c" : "", bias ? ", bias" : "", aux ? " with aux" : "");
  if (call->operand_count() != expected || leaves.empty() || !leaves[0].IsArray() || (aux && leaves.size() < 2)) {
    return CallError(*call,
                     fmt::format("expected {} (beta {}, epilogue {}), as XLA's {}", signature, beta, epilogue, target));
  }
  for (size_t i = aux ? 2 : 1; i < leaves.size(); ++i) {
    if (!leaves[i].IsArray() || leaves[i].rank() != 1 || BitWidth(leaves[i].element_type) != 8) {
      return CallError(
          *call, fmt::format("result {} should be the s8/u8 workspace, not {}", i, ShapeToString(leaves[i], false)));
    }
  }
  Instruction* a = call->operand(0);
  Instruction* b_op = call->operand(1);
  const Shape& d = leaves[0];
  if (!a->shape().IsArray() || !b_op->shape().IsArray()) return CallError(*call, "a and b must be arrays");
  const PrimitiveType compute = ComputeType(a->shape().element_type, d.element_type);

  Builder b(module, comp, *call);
  // Operands of two float types meet in the wider one, as XLA's dot operand converter makes them.
  if (a->shape().element_type != b_op->shape().element_type) {
    const PrimitiveType common = BitWidth(a->shape().element_type) >= BitWidth(b_op->shape().element_type)
                                     ? a->shape().element_type
                                     : b_op->shape().element_type;
    a = b.Convert(a, common);
    b_op = b.Convert(b_op, common);
  }
  Instruction* dot = b.Add(Opcode::kDot, Shape::Array(compute, d.dimensions), {a, b_op});
  dot->SetAttr("lhs_contracting_dims", AttrValue::IntList(*lc));
  dot->SetAttr("rhs_contracting_dims", AttrValue::IntList(*rc));
  if (!lb->empty()) dot->SetAttr("lhs_batch_dims", AttrValue::IntList(*lb));
  if (!rb->empty()) dot->SetAttr("rhs_batch_dims", AttrValue::IntList(*rb));
  SetPrecision(config, dot);
  Instruction* value = b.Scale(dot, alpha, alpha_imag);
  if (beta != 0) {
    Instruction* c = call->operand(2);
    if (!c->shape().IsArray() || c->shape().dimensions != d.dimensions) {
      return CallError(*call, fmt::format("c {} must have d's dimensions {}", ShapeToString(c->shape(), false),
                                          ShapeToString(d, false)));
    }
    value = b.Binary(Opcode::kAdd, value, b.Scale(b.Convert(c, compute), beta));
  }
  if (bias) {
    // The bias spans the rhs's free dimensions, which are d's most minor ones (XLA fuses it only so).
    Instruction* vector = call->operand(call->operand_count() - 1);
    const Shape& v = vector->shape();
    const int64_t columns = b_op->shape().rank() - static_cast<int64_t>(rb->size() + rc->size());
    const Layout d_layout = d.layout.value_or(Layout::Default(d.rank()));
    const Layout v_layout = v.IsArray() ? v.layout.value_or(Layout::Default(v.rank())) : Layout{};
    bool ok = v.IsArray() && v.rank() == columns && static_cast<int64_t>(d_layout.minor_to_major.size()) == d.rank() &&
              static_cast<int64_t>(v_layout.minor_to_major.size()) == v.rank();
    std::vector<int64_t> dims(ok ? static_cast<size_t>(v.rank()) : 0);
    for (int64_t i = 0; ok && i < columns; ++i) {
      const int64_t out_dim = d_layout.minor_to_major[i], bias_dim = v_layout.minor_to_major[i];
      dims[bias_dim] = out_dim;
      ok = v.dimensions[bias_dim] == d.dimensions[out_dim];
    }
    if (!ok) {
      return CallError(*call, fmt::format("bias {} must span d's {} most minor dimensions (the rhs's free ones) of {}",
                                          ShapeToString(v, false), columns, ShapeToString(d, false)));
    }
    value = b.Binary(Opcode::kAdd, value, b.Broadcast(b.Convert(vector, compute), value->shape(), dims));
  }
  Instruction* pre_activation = value;
  if (relu) value = b.Binary(Opcode::kMaximum, value, b.Like(value, 0));
  if (gelu) value = TanhGelu(b, value);
  std::vector<Instruction*> results = {ToResultType(b, value, d.element_type)};
  if (aux) results.push_back(ToResultType(b, pre_activation, leaves[1].element_type));
  return b.Results(*call, results);
}

// ---- cuDNN ----

// x's dimensions in the order batch, feature, spatial... (input and output labels) or output feature, input
// feature, spatial... (kernel labels), for a transpose to that canonical form.
std::vector<int64_t> Order(int64_t first, int64_t second, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> order = {first, second};
  order.insert(order.end(), spatial.begin(), spatial.end());
  return order;
}

std::vector<int64_t> Inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inverse;
}

ConvolutionDimensionNumbers Canonical(size_t spatial) {
  ConvolutionDimensionNumbers dn;
  dn.input_batch_dimension = 0, dn.input_feature_dimension = 1;
  dn.kernel_output_feature_dimension = 0, dn.kernel_input_feature_dimension = 1;
  dn.output_batch_dimension = 0, dn.output_feature_dimension = 1;
  for (size_t i = 0; i < spatial; ++i) {
    dn.input_spatial_dimensions.push_back(static_cast<int64_t>(i + 2));
    dn.kernel_spatial_dimensions.push_back(static_cast<int64_t>(i + 2));
    dn.output_spatial_dimensions.push_back(static_cast<int64_t>(i + 2));
  }
  return dn;
}

struct ConvCall {
  Instruction* call = nullptr;
  Window window;
  ConvolutionDimensionNumbers dn;
  int64_t groups = 1;
  Json config;
  std::vector<int64_t> x_order, w_order, y_order;  // to canonical form
};

Instruction* Conv(Builder& b, Instruction* lhs, Instruction* rhs, const Window& window,
                  const ConvolutionDimensionNumbers& dn, int64_t feature_groups, int64_t batch_groups,
                  std::vector<int64_t> dims, PrimitiveType type, const ConvCall& cc) {
  Instruction* conv = b.Add(Opcode::kConvolution, Shape::Array(type, std::move(dims)), {lhs, rhs});
  conv->SetAttr("window", AttrValue::Of(window));
  conv->SetAttr("dim_labels", AttrValue::Of(dn));
  if (feature_groups != 1) conv->SetAttr("feature_group_count", AttrValue::Int(feature_groups));
  if (batch_groups != 1) conv->SetAttr("batch_group_count", AttrValue::Int(batch_groups));
  if (const AttrValue* precision = cc.call->FindAttr("operand_precision")) {
    conv->SetAttr("operand_precision", *precision);
  }
  SetPrecision(cc.config, conv);
  return conv;
}

std::vector<int64_t> Permuted(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t p : perm) out.push_back(dims[p]);
  return out;
}

// dx = the gradient of conv(x, w) with respect to x, from dy: dy dilated by the strides, convolved with w
// reversed and with its feature dimensions exchanged (regrouped when grouped), padded so the result has x's size.
Instruction* BackwardInput(Builder& b, const ConvCall& cc, const Shape& x, PrimitiveType type) {
  Instruction* dy = b.Transpose(cc.call->operand(0), cc.y_order);
  Instruction* w = b.Transpose(cc.call->operand(1), cc.w_order);  // [o, i/g, k...]
  const size_t spatial = cc.window.dimensions.size();
  std::vector<int64_t> reversed(spatial);
  std::iota(reversed.begin(), reversed.end(), 2);
  if (!reversed.empty()) {
    w = b.Add(Opcode::kReverse, w->shape(), {w});
    w->SetAttr("dimensions", AttrValue::IntList(reversed));
  }
  ConvolutionDimensionNumbers dn = Canonical(spatial);
  std::swap(dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension);  // w is [o, i/g]: o is dy's
  const int64_t g = cc.groups;
  if (g > 1) {
    // [o, i/g, k] -> [g, o/g, i/g, k] -> [g, i/g, o/g, k] -> [i, o/g, k]: output feature group by group.
    std::vector<int64_t> dims = w->shape().dimensions;
    const int64_t o = dims[0], ig = dims[1];
    std::vector<int64_t> split = {g, o / g, ig};
    split.insert(split.end(), dims.begin() + 2, dims.end());
    std::vector<int64_t> perm(split.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[1], perm[2]);
    std::vector<int64_t> merged = {g * ig, o / g};
    merged.insert(merged.end(), dims.begin() + 2, dims.end());
    w = b.Reshape(b.Transpose(b.Reshape(w, split), perm), merged);
    dn = Canonical(spatial);
    dn.kernel_output_feature_dimension = 0, dn.kernel_input_feature_dimension = 1;
  }
  const std::vector<int64_t> x_dims = Permuted(x.dimensions, cc.x_order);
  Window window;
  for (size_t i = 0; i < spatial; ++i) {
    const WindowDimension& f = cc.window.dimensions[i];
    const int64_t dy_size = dy->shape().dimensions[i + 2], dx_size = x_dims[i + 2];
    WindowDimension wd;
    wd.size = f.size;
    wd.stride = 1;
    wd.base_dilation = f.stride;
    wd.window_dilation = f.window_dilation;
    wd.padding_low = (f.size - 1) * f.window_dilation - f.padding_low;
    wd.padding_high = dx_size - (dy_size - 1) * f.stride - 1 + f.padding_low;
    window.dimensions.push_back(wd);
  }
  Instruction* dx = Conv(b, dy, w, window, dn, g, 1, x_dims, type, cc);
  return b.Transpose(dx, Inverse(cc.x_order));
}

// dw = the gradient of conv(x, w) with respect to w: x and dy convolved over the batch (x's batch as the feature
// dimension, its features as the batch, dy as the kernel), the strides becoming dilations; grouped by batch groups.
Instruction* BackwardFilter(Builder& b, const ConvCall& cc, const Shape& w_shape, PrimitiveType type) {
  Instruction* x = b.Transpose(cc.call->operand(0), cc.x_order);
  Instruction* dy = b.Transpose(cc.call->operand(1), cc.y_order);
  const size_t spatial = cc.window.dimensions.size();
  ConvolutionDimensionNumbers dn = Canonical(spatial);
  dn.input_batch_dimension = 1, dn.input_feature_dimension = 0;
  dn.kernel_input_feature_dimension = 0, dn.kernel_output_feature_dimension = 1;
  dn.output_batch_dimension = 1, dn.output_feature_dimension = 0;
  Window window;
  for (size_t i = 0; i < spatial; ++i) {
    const WindowDimension& f = cc.window.dimensions[i];
    const int64_t x_size = x->shape().dimensions[i + 2], dy_size = dy->shape().dimensions[i + 2];
    WindowDimension wd;
    wd.size = dy_size;
    wd.stride = f.window_dilation;
    wd.window_dilation = f.stride;
    wd.padding_low = f.padding_low;
    wd.padding_high = (f.size - 1) * f.window_dilation + (dy_size - 1) * f.stride + 1 - x_size - f.padding_low;
    window.dimensions.push_back(wd);
  }
  Instruction* dw = Conv(b, x, dy, window, dn, 1, cc.groups, Permuted(w_shape.dimensions, cc.w_order), type, cc);
  return b.Transpose(dw, Inverse(cc.w_order));
}

// The forward convolution's output dimensions (canonical order) for x and w (canonical order), or nullopt when they
// do not fit the window and groups.
std::optional<std::vector<int64_t>> ForwardDims(const ConvCall& cc, const std::vector<int64_t>& x,
                                                const std::vector<int64_t>& w) {
  if (cc.groups < 1 || x[1] != w[1] * cc.groups || w[0] % cc.groups != 0) return std::nullopt;
  std::vector<int64_t> y = {x[0], w[0]};
  for (size_t i = 0; i < cc.window.dimensions.size(); ++i) {
    const WindowDimension& f = cc.window.dimensions[i];
    const int64_t span = x[i + 2] + f.padding_low + f.padding_high - (f.size - 1) * f.window_dilation - 1;
    if (f.size != w[i + 2] || f.stride < 1 || span < 0) return std::nullopt;
    y.push_back(span / f.stride + 1);
  }
  return y;
}

absl::StatusOr<Instruction*> Activation(Builder& b, const ConvCall& cc, Instruction* x) {
  static const std::vector<std::string_view> kModes = {"kNone", "kSigmoid",  "kRelu", "kRelu6",     "kReluX",
                                                       "kTanh", "kBandPass", "kElu",  "kLeakyRelu", "kGeluExact"};
  const std::string mode = EnumName(cc.config, "activation_mode", kModes);
  if (mode == "kNone") return x;
  if (mode == "kSigmoid") return b.Unary(Opcode::kLogistic, x);
  if (mode == "kRelu") return b.Binary(Opcode::kMaximum, x, b.Like(x, 0));
  if (mode == "kRelu6") return b.Add(Opcode::kClamp, x->shape(), {b.Like(x, 0), x, b.Like(x, 6)});
  if (mode == "kTanh") return b.Unary(Opcode::kTanh, x);
  Instruction* negative =
      b.Add(Opcode::kCompare, Shape::Array(PrimitiveType::kPred, x->shape().dimensions), {x, b.Like(x, 0)});
  negative->SetAttr("direction", AttrValue::Enum("LT"));
  if (mode == "kElu") return b.Add(Opcode::kSelect, x->shape(), {negative, b.Unary(Opcode::kExpm1, x), x});
  if (mode == "kLeakyRelu") {
    const double alpha = Number(cc.config, "leakyrelu_alpha").value_or(0);
    return b.Add(Opcode::kSelect, x->shape(), {negative, b.Scale(x, alpha), x});
  }
  if (mode == "kGeluExact") {
    Instruction* cdf = b.Binary(Opcode::kAdd, b.Like(x, 1), b.Unary(Opcode::kErf, b.Scale(x, 1 / std::sqrt(2.0))));
    return b.Binary(Opcode::kMultiply, b.Scale(x, 0.5), cdf);
  }
  return CallError(*cc.call, fmt::format("activation_mode {} is not supported (only kNone, kSigmoid, kRelu, kRelu6, "
                                         "kTanh, kElu, kLeakyRelu, kGeluExact)",
                                         mode));
}

absl::StatusOr<Instruction*> Convolution(Module& module, Computation& comp, Instruction* call) {
  const std::string_view target = call->StringAttr("custom_call_target");
  if (target == kConvGraph) {
    return CallError(*call, "a cuDNN graph (serialized_graph of fused pointwise ops) is not supported");
  }
  ConvCall cc;
  cc.call = call;
  XLAC_ASSIGN_OR_RETURN(cc.config, BackendConfig(*call, "cudnn_conv_backend_config"));
  const AttrValue* window = call->FindAttr("window");
  const AttrValue* labels = call->FindAttr("dim_labels");
  if (labels == nullptr || labels->kind != AttrKind::kConvDnums ||
      (window != nullptr && window->kind != AttrKind::kWindow)) {
    return CallError(*call, "needs dim_labels= (and window=) describing the forward convolution, as XLA writes them");
  }
  cc.dn = labels->get<ConvolutionDimensionNumbers>();
  if (window != nullptr) cc.window = window->get<Window>();
  const size_t spatial = cc.dn.input_spatial_dimensions.size();
  cc.window.dimensions.resize(spatial);  // none given: a window of size 1 everywhere
  cc.groups = call->IntAttr("feature_group_count", 1);
  if (call->IntAttr("batch_group_count", 1) != 1) return CallError(*call, "batch_group_count is not supported");
  for (const WindowDimension& d : cc.window.dimensions) {
    if (d.base_dilation != 1 || d.window_reversal) {
      return CallError(*call, "a window with lhs dilation or reversal is not a cuDNN convolution");
    }
  }
  cc.x_order = Order(cc.dn.input_batch_dimension, cc.dn.input_feature_dimension, cc.dn.input_spatial_dimensions);
  cc.w_order = Order(cc.dn.kernel_output_feature_dimension, cc.dn.kernel_input_feature_dimension,
                     cc.dn.kernel_spatial_dimensions);
  cc.y_order = Order(cc.dn.output_batch_dimension, cc.dn.output_feature_dimension, cc.dn.output_spatial_dimensions);

  const bool fused = target == kConvBiasActivation;
  const std::vector<Shape> leaves = call->shape().IsTuple() ? call->shape().tuple_shapes : std::vector{call->shape()};
  const int64_t n = call->operand_count();
  std::string_view signature = target == kConvForward          ? "(x, w) -> (y, u8[scratch])"
                               : target == kConvBackwardInput  ? "(dy, w) -> (dx, u8[scratch])"
                               : target == kConvBackwardFilter ? "(x, dy) -> (dw, u8[scratch])"
                                                               : "(x, w[, bias[, side_input]]) -> (y, u8[scratch])";
  bool ok = !leaves.empty() && leaves[0].IsArray() && leaves[0].rank() == static_cast<int64_t>(spatial) + 2 &&
            (fused ? n >= 2 && n <= 4 : n == 2);
  for (int64_t i = 0; ok && i < std::min<int64_t>(n, 2); ++i) {
    ok = call->operand(i)->shape().IsArray() && call->operand(i)->shape().rank() == leaves[0].rank();
  }
  for (size_t i = 1; ok && i < leaves.size(); ++i) ok = leaves[i].IsArray() && leaves[i].rank() == 1;
  if (!ok) return CallError(*call, fmt::format("expected {}, as XLA's {}", signature, target));
  const Shape& result = leaves[0];
  const PrimitiveType compute = ComputeType(call->operand(0)->shape().element_type, result.element_type);
  // Integer convolutions accumulate in s32 and scale in f32.
  const PrimitiveType accumulate =
      IsIntegralType(call->operand(0)->shape().element_type) ? PrimitiveType::kS32 : compute;

  // The forward convolution the call describes must fit its operands and result, whichever of x, w, y it computes.
  const Shape& first = call->operand(0)->shape();
  const Shape& second = call->operand(1)->shape();
  const Shape& x = target == kConvBackwardInput ? result : first;
  const Shape& w = target == kConvBackwardFilter ? result : second;
  const Shape& y = target == kConvBackwardInput ? first : target == kConvBackwardFilter ? second : result;
  const std::optional<std::vector<int64_t>> expected =
      ForwardDims(cc, Permuted(x.dimensions, cc.x_order), Permuted(w.dimensions, cc.w_order));
  if (!expected || *expected != Permuted(y.dimensions, cc.y_order)) {
    return CallError(*call,
                     fmt::format("x {}, w {} and y {} do not fit the forward convolution the call's window, "
                                 "dim_labels and feature_group_count describe, for {}",
                                 ShapeToString(x, false), ShapeToString(w, false), ShapeToString(y, false), signature));
  }

  Builder b(module, comp, *call);
  Instruction* value = nullptr;
  if (target == kConvBackwardInput) {
    value = BackwardInput(b, cc, result, accumulate);
  } else if (target == kConvBackwardFilter) {
    value = BackwardFilter(b, cc, result, accumulate);
  } else {
    value =
        Conv(b, call->operand(0), call->operand(1), cc.window, cc.dn, cc.groups, 1, result.dimensions, accumulate, cc);
  }
  value = b.Convert(value, compute);
  // Unfused calls carry a scale too (1 as XLA writes it; absent in hand-written configs).
  value = b.Scale(value, Number(cc.config, "conv_result_scale").value_or(1));
  if (fused) {
    if (n >= 4) {
      Instruction* side = call->operand(3);
      if (!side->shape().IsArray() || side->shape().dimensions != result.dimensions) {
        return CallError(*call, fmt::format("side_input {} must have the result's dimensions {}",
                                            ShapeToString(side->shape(), false), ShapeToString(result, false)));
      }
      const double side_scale = Number(cc.config, "side_input_scale").value_or(0);
      if (side_scale != 0) value = b.Binary(Opcode::kAdd, value, b.Scale(b.Convert(side, compute), side_scale));
    }
    if (n >= 3) {
      Instruction* bias = call->operand(2);
      const int64_t features = result.dimensions[cc.dn.output_feature_dimension];
      if (!bias->shape().IsArray() || bias->shape().rank() != 1 || bias->shape().dimensions[0] != features) {
        return CallError(*call, fmt::format("bias {} must be a vector of the {} output features",
                                            ShapeToString(bias->shape(), false), features));
      }
      value = b.Binary(Opcode::kAdd, value,
                       b.Broadcast(b.Convert(bias, compute), value->shape(), {cc.dn.output_feature_dimension}));
    }
    XLAC_ASSIGN_OR_RETURN(value, Activation(b, cc, value));
  }
  return b.Results(*call, {ToResultType(b, value, result.element_type)});
}

}  // namespace

bool IsGpuLibraryTarget(std::string_view target) {
  return target == kGemm || target == kLtMatmul || target == kLtMatmulF8 || target == kConvForward ||
         target == kConvBackwardInput || target == kConvBackwardFilter || target == kConvBiasActivation ||
         target == kConvGraph;
}

absl::StatusOr<Instruction*> RewriteGpuLibraryCall(Module& module, Computation& comp, Instruction* call) {
  const std::string_view target = call->StringAttr("custom_call_target");
  if (target == kLtMatmulF8) {
    return CallError(*call, "FP8 matmuls (operand scales, an amax result) are not supported");
  }
  if (target == kGemm || target == kLtMatmul) return Gemm(module, comp, call);
  return Convolution(module, comp, call);
}

}  // namespace xlac
