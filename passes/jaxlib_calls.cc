#include "passes/jaxlib_calls.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
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

absl::Status CallError(const Instruction& call, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("custom-call %{} (target \"{}\"): {}", call.name(),
                                                std::string(call.StringAttr("custom_call_target")), why));
}

// ---- Reading jaxlib's flatbuffer descriptors ----

// A flatbuffer's root table, read with bounds checks: fields by index (their order in the schema), absent fields
// taking the schema's default.
class FlatTable {
 public:
  static std::optional<FlatTable> Root(std::vector<uint8_t> bytes) {
    FlatTable t;
    t.bytes_ = std::move(bytes);
    uint32_t root = 0;
    int32_t to_vtable = 0;
    uint16_t vsize = 0;
    if (!t.Read(0, &root) || !t.Read(root, &to_vtable)) return std::nullopt;
    const int64_t vtable = static_cast<int64_t>(root) - to_vtable;
    if (vtable < 0 || !t.Read(static_cast<size_t>(vtable), &vsize) || vsize < 4) return std::nullopt;
    t.table_ = root;
    t.vtable_ = static_cast<size_t>(vtable);
    t.fields_ = (vsize - 4) / 2;
    return t;
  }

  // The field's position in the buffer, 0 when it is absent.
  std::optional<size_t> Field(size_t index) const {
    if (index >= fields_) return 0;
    uint16_t offset = 0;
    if (!Read(vtable_ + 4 + 2 * index, &offset)) return std::nullopt;
    return offset == 0 ? 0 : table_ + offset;
  }

  template <typename T>
  std::optional<T> Scalar(size_t index, T fallback) const {
    std::optional<size_t> at = Field(index);
    T value = fallback;
    if (!at.has_value() || (*at != 0 && !Read(*at, &value))) return std::nullopt;
    return value;
  }

  // A vector of unsigned integers of `T` (a missing vector is empty).
  template <typename T>
  std::optional<std::vector<int64_t>> Vector(size_t index) const {
    std::optional<size_t> at = Field(index);
    if (!at.has_value()) return std::nullopt;
    std::vector<int64_t> out;
    if (*at == 0) return out;
    uint32_t to_vector = 0, length = 0;
    if (!Read(*at, &to_vector) || !Read(*at + to_vector, &length)) return std::nullopt;
    const size_t first = *at + to_vector + 4;
    if (length > bytes_.size()) return std::nullopt;
    for (uint32_t i = 0; i < length; ++i) {
      T value = 0;
      if (!Read(first + i * sizeof(T), &value) || value > static_cast<T>(INT64_MAX)) return std::nullopt;
      out.push_back(static_cast<int64_t>(value));
    }
    return out;
  }

 private:
  template <typename T>
  bool Read(size_t at, T* out) const {
    if (at > bytes_.size() || bytes_.size() - at < sizeof(T)) return false;
    std::memcpy(out, bytes_.data() + at, sizeof(T));
    return true;
  }

  std::vector<uint8_t> bytes_;
  size_t table_ = 0;
  size_t vtable_ = 0;
  size_t fields_ = 0;
};

const Instruction* ThroughCopies(const Instruction* x) {
  while ((x->opcode() == Opcode::kCopy || x->opcode() == Opcode::kReshape || x->opcode() == Opcode::kBitcast) &&
         x->operand_count() == 1 && x->operand(0)->shape().IsArray() &&
         x->operand(0)->shape().element_type == x->shape().element_type) {
    x = x->operand(0);
  }
  return x;
}

// The bytes of a constant u8 / s8 array (the descriptor operand).
std::optional<std::vector<uint8_t>> ConstantBytes(const Instruction* x) {
  x = ThroughCopies(x);
  const Shape& s = x->shape();
  if (x->opcode() != Opcode::kConstant || !x->has_literal() || !s.IsArray() ||
      (s.element_type != PrimitiveType::kU8 && s.element_type != PrimitiveType::kS8)) {
    return std::nullopt;
  }
  const Literal& literal = x->literal();
  const uint8_t* data = literal.raw_data();
  if (data == nullptr && literal.element_count() > 0) return std::nullopt;
  return std::vector<uint8_t>(data, data + literal.element_count());
}

// The values of a small 1-D or scalar array computed from constants by converts, reshapes, broadcasts of scalars
// and concatenations (as JAX builds shape operands), or nullopt.
std::optional<std::vector<double>> ConstantValues(const Instruction* x, int depth = 0) {
  const Shape& s = x->shape();
  if (depth > 32 || !s.IsArray() || s.rank() > 1 || !s.IsStatic()) return std::nullopt;
  switch (x->opcode()) {
    case Opcode::kConstant: {
      if (!x->has_literal() || !(IsIntegralType(s.element_type) || IsFloatingPointType(s.element_type))) {
        return std::nullopt;
      }
      std::vector<double> out;
      for (int64_t i = 0; i < x->literal().element_count(); ++i) out.push_back(x->literal().GetAsDouble(i));
      return out;
    }
    case Opcode::kConvert:
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kBitcast:
      if (x->opcode() == Opcode::kBitcast && x->operand(0)->shape().element_type != s.element_type) return std::nullopt;
      return ConstantValues(x->operand(0), depth + 1);
    case Opcode::kBroadcast: {
      std::optional<std::vector<double>> v = ConstantValues(x->operand(0), depth + 1);
      if (!v.has_value() || v->size() != 1) return std::nullopt;
      return std::vector<double>(static_cast<size_t>(s.rank() == 0 ? 1 : s.dimensions[0]), (*v)[0]);
    }
    case Opcode::kConcatenate: {
      std::vector<double> out;
      for (const Instruction* part : x->operands()) {
        std::optional<std::vector<double>> v = ConstantValues(part, depth + 1);
        if (!v.has_value()) return std::nullopt;
        out.insert(out.end(), v->begin(), v->end());
      }
      return out;
    }
    default:
      return std::nullopt;
  }
}

// Row-major element strides of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// ---- ducc_fft, dynamic_ducc_fft ----

struct DuccFft {
  int64_t dtype = 0;     // COMPLEX64, COMPLEX128
  int64_t fft_type = 0;  // C2C, C2R, R2C
  std::vector<int64_t> shape, strides_in, strides_out, axes;
  bool forward = true;
  double scale = 1;
};

constexpr std::string_view kDuccSignature =
    "expected (descriptor u8[n], x) -> y with a DuccFftDescriptor flatbuffer, as jaxlib's ducc_fft";
constexpr std::string_view kDynamicDuccSignature =
    "expected (descriptor u8[n], x, shape, strides_in, strides_out, scale[1], result shape) -> y with a "
    "DynamicDuccFftDescriptor flatbuffer, as jaxlib's dynamic_ducc_fft";

absl::StatusOr<DuccFft> ReadDuccFft(const Instruction& call, bool dynamic) {
  const std::string_view signature = dynamic ? kDynamicDuccSignature : kDuccSignature;
  if (call.operand_count() != (dynamic ? 7 : 2) || !call.shape().IsArray()) return CallError(call, signature);
  std::optional<std::vector<uint8_t>> bytes = ConstantBytes(call.operand(0));
  if (!bytes.has_value()) return CallError(call, fmt::format("{}; the descriptor is not a constant", signature));
  std::optional<FlatTable> table = FlatTable::Root(std::move(*bytes));
  DuccFft fft;
  auto malformed = [&] { return CallError(call, "the descriptor does not parse as jaxlib's flatbuffer"); };
  if (!table.has_value()) return malformed();
  if (!dynamic) {
    std::optional<int8_t> dtype = table->Scalar<int8_t>(0, 0), type = table->Scalar<int8_t>(1, 0);
    std::optional<std::vector<int64_t>> shape = table->Vector<uint64_t>(2), in = table->Vector<uint64_t>(3),
                                        out = table->Vector<uint64_t>(4), axes = table->Vector<uint32_t>(5);
    std::optional<uint8_t> forward = table->Scalar<uint8_t>(6, 0);
    std::optional<double> scale = table->Scalar<double>(7, 0.0);
    if (!dtype || !type || !shape || !in || !out || !axes || !forward || !scale) return malformed();
    fft = {*dtype, *type, *shape, *in, *out, *axes, *forward != 0, *scale};
    return fft;
  }
  std::optional<uint32_t> ndims = table->Scalar<uint32_t>(0, 0);
  std::optional<int8_t> dtype = table->Scalar<int8_t>(1, 0), type = table->Scalar<int8_t>(2, 0);
  std::optional<std::vector<int64_t>> axes = table->Vector<uint32_t>(3);
  std::optional<uint8_t> forward = table->Scalar<uint8_t>(4, 0);
  if (!ndims || !dtype || !type || !axes || !forward) return malformed();
  fft.dtype = *dtype;
  fft.fft_type = *type;
  fft.axes = *axes;
  fft.forward = *forward != 0;
  // The sizes and the scale are operands: they must be known now.
  std::vector<std::vector<double>> known;
  for (int64_t i = 2; i <= 5; ++i) {
    std::optional<std::vector<double>> v = ConstantValues(call.operand(i));
    if (!v.has_value()) {
      return CallError(call, fmt::format("operand {} (the {}) must fold to a constant", i,
                                         i == 2   ? "shape"
                                         : i == 3 ? "input strides"
                                         : i == 4 ? "output strides"
                                                  : "scale"));
    }
    known.push_back(std::move(*v));
  }
  auto ints = [](const std::vector<double>& v) {
    std::vector<int64_t> out;
    for (double d : v) out.push_back(static_cast<int64_t>(d));
    return out;
  };
  fft.shape = ints(known[0]);
  fft.strides_in = ints(known[1]);
  fft.strides_out = ints(known[2]);
  if (known[3].size() != 1 || fft.shape.size() != *ndims) return CallError(call, signature);
  fft.scale = known[3][0];
  return fft;
}

absl::StatusOr<Instruction*> DuccFftCall(Module& module, Computation& comp, Instruction* call, bool dynamic) {
  XLAC_ASSIGN_OR_RETURN(DuccFft d, ReadDuccFft(*call, dynamic));
  const Shape& x = call->operand(1)->shape();
  const Shape& y = call->shape();
  if (!x.IsArray()) return CallError(*call, dynamic ? kDynamicDuccSignature : kDuccSignature);
  if (d.dtype != 0 && d.dtype != 1) return CallError(*call, fmt::format("unknown descriptor dtype {}", d.dtype));
  const PrimitiveType complex = d.dtype == 0 ? PrimitiveType::kC64 : PrimitiveType::kC128;
  const PrimitiveType real = d.dtype == 0 ? PrimitiveType::kF32 : PrimitiveType::kF64;
  std::string type;
  PrimitiveType x_type = complex, y_type = complex;
  if (d.fft_type == 0) {
    type = d.forward ? "FFT" : "IFFT";
  } else if (d.fft_type == 2 && d.forward) {
    type = "RFFT", x_type = real;
  } else if (d.fft_type == 1 && !d.forward) {
    type = "IRFFT", y_type = real;
  } else {
    return CallError(*call, fmt::format("a {} {} transform is not one of HLO's FFTs",
                                        d.forward ? "forward" : "backward", d.fft_type == 1 ? "C2R" : "R2C"));
  }
  // HLO transforms the trailing dimensions, in order.
  const int64_t rank = static_cast<int64_t>(d.shape.size());
  const int64_t k = static_cast<int64_t>(d.axes.size());
  bool trailing = k >= 1 && k <= 3 && k <= rank;
  for (int64_t i = 0; trailing && i < k; ++i) trailing = d.axes[static_cast<size_t>(i)] == rank - k + i;
  if (!trailing) {
    return CallError(*call, fmt::format("the axes [{}] of a rank-{} transform must be 1 to 3 trailing dimensions",
                                        fmt::join(d.axes, ", "), rank));
  }
  // `shape` is the real side's (for C2C either side's); the complex side of a real transform is n/2+1 long.
  std::vector<int64_t> x_dims = d.shape, y_dims = d.shape;
  if (type == "RFFT") y_dims.back() = y_dims.back() / 2 + 1;
  if (type == "IRFFT") x_dims.back() = x_dims.back() / 2 + 1;
  const Shape want_x = Shape::Array(x_type, x_dims), want_y = Shape::Array(y_type, y_dims);
  if (!x.Compatible(want_x) || !y.IsArray() || !y.Compatible(want_y)) {
    return CallError(*call,
                     fmt::format("the descriptor's {} of shape [{}] takes {} to {}, not {} to {}", type,
                                 fmt::join(d.shape, ", "), ShapeToString(want_x, false), ShapeToString(want_y, false),
                                 ShapeToString(x, false), ShapeToString(y, false)));
  }
  if (d.strides_in != RowMajorStrides(x_dims) || d.strides_out != RowMajorStrides(y_dims)) {
    return CallError(*call, fmt::format("the strides [{}] -> [{}] are not row-major", fmt::join(d.strides_in, ", "),
                                        fmt::join(d.strides_out, ", ")));
  }
  std::vector<int64_t> lengths(d.shape.end() - k, d.shape.end());
  double n = 1;
  for (int64_t l : lengths) n *= static_cast<double>(l);
  const double want_scale = d.forward ? 1.0 : 1.0 / n;
  if (n > 0 && std::abs(d.scale - want_scale) > 1e-12 * want_scale) {
    return CallError(*call, fmt::format("scale {} is not the {} of HLO's {}", d.scale, d.forward ? "1" : "1/n", type));
  }
  Shape plain = y;
  plain.layout.reset();
  Instruction* fft = AddAtCall(module, comp, *call, Opcode::kFft, plain, {call->operand(1)});
  fft->SetAttr("fft_type", AttrValue::Enum(type));
  fft->SetAttr("fft_length", AttrValue::IntList(std::move(lengths)));
  if (!y.layout.has_value() || *y.layout == Layout::Default(y.rank())) return fft;
  return AddAtCall(module, comp, *call, Opcode::kCopy, y, {fft});
}

// ---- lu_pivots_to_permutation ----

// Appends instructions to a computation being built.
class Emitter {
 public:
  Emitter(Module& module, Computation& comp) : module_(module), comp_(comp) {}

  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands) {
    return comp_.AddInstruction(Instruction::Create(op, module_.UniqueInstructionName(std::string(OpcodeName(op))),
                                                    std::move(shape), std::move(operands)));
  }
  Instruction* S32(int32_t value) {
    Literal literal(Shape::Scalar(PrimitiveType::kS32));
    literal.Set<int32_t>(0, value);
    return comp_.AddInstruction(Instruction::CreateConstant(module_.UniqueInstructionName("constant"), literal));
  }
  Instruction* Broadcast(Instruction* x, const Shape& shape, std::vector<int64_t> dims) {
    Instruction* b = Add(Opcode::kBroadcast, shape, {x});
    b->SetAttr("dimensions", AttrValue::IntList(std::move(dims)));
    return b;
  }
  Instruction* Compare(Instruction* a, Instruction* b, std::string_view direction) {
    Shape pred = a->shape();
    pred.element_type = PrimitiveType::kPred;
    Instruction* c = Add(Opcode::kCompare, pred, {a, b});
    c->SetAttr("direction", AttrValue::Enum(std::string(direction)));
    return c;
  }
  Instruction* Gte(Instruction* tuple, int64_t index) {
    Instruction* gte = Add(Opcode::kGetTupleElement, tuple->shape().tuple_shapes[static_cast<size_t>(index)], {tuple});
    gte->SetAttr("index", AttrValue::Int(index));
    return gte;
  }
  // x[..., i:i+1] (its last dimension) as an array without that dimension.
  Instruction* Column(Instruction* x, Instruction* i) {
    const Shape& s = x->shape();
    std::vector<int64_t> sizes = s.dimensions;
    sizes.back() = 1;
    std::vector<Instruction*> operands = {x};
    for (int64_t d = 0; d + 1 < s.rank(); ++d) operands.push_back(S32(0));
    operands.push_back(i);
    Instruction* slice = Add(Opcode::kDynamicSlice, Shape::Array(s.element_type, sizes), std::move(operands));
    slice->SetAttr("dynamic_slice_sizes", AttrValue::IntList(sizes));
    sizes.pop_back();
    return Add(Opcode::kReshape, Shape::Array(s.element_type, sizes), {slice});
  }
  Computation* Adder() {
    auto comp = std::make_unique<Computation>(module_.UniqueComputationName("add"));
    const Shape scalar = Shape::Scalar(PrimitiveType::kS32);
    Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, module_.UniqueInstructionName("a"), scalar));
    Instruction* b = comp->AddInstruction(Instruction::CreateParameter(1, module_.UniqueInstructionName("b"), scalar));
    comp->set_root(
        comp->AddInstruction(Instruction::Create(Opcode::kAdd, module_.UniqueInstructionName("add"), scalar, {a, b})));
    return module_.AddComputation(std::move(comp));
  }

 private:
  Module& module_;
  Computation& comp_;
};

bool IsPivotTarget(std::string_view target) {
  return target == "cu_lu_pivots_to_permutation" || target == "hip_lu_pivots_to_permutation" ||
         target == "cuda_lu_pivots_to_permutation";
}

absl::StatusOr<Instruction*> PivotsToPermutation(Module& module, Computation& comp, Instruction* call) {
  const Shape& y = call->shape();
  bool ok = call->operand_count() == 1 && y.IsArray() && y.element_type == PrimitiveType::kS32 && y.rank() >= 1;
  const Shape* p = ok ? &call->operand(0)->shape() : nullptr;
  ok = ok && p->IsArray() && p->element_type == PrimitiveType::kS32 && p->rank() == y.rank() && p->IsStatic() &&
       y.IsStatic() && std::equal(p->dimensions.begin(), p->dimensions.end() - 1, y.dimensions.begin()) &&
       p->dimensions.back() <= y.dimensions.back();
  if (!ok) {
    return CallError(*call,
                     "expected pivots s32[batch..., k] -> permutation s32[batch..., m] with k <= m, as jaxlib's "
                     "lu_pivots_to_permutation");
  }
  const int64_t rank = y.rank(), k = p->dimensions.back(), m = y.dimensions.back();
  const Shape perm_shape = Shape::Array(PrimitiveType::kS32, y.dimensions);
  const Shape pivots_shape = Shape::Array(PrimitiveType::kS32, p->dimensions);
  Instruction* identity = AddAtCall(module, comp, *call, Opcode::kIota, perm_shape, {});
  identity->SetAttr("iota_dimension", AttrValue::Int(rank - 1));
  Instruction* result = identity;
  if (k > 0) {
    const Shape state = Shape::Tuple({Shape::Scalar(PrimitiveType::kS32), pivots_shape, perm_shape});
    std::vector<int64_t> batch_dims;
    for (int64_t d = 0; d + 1 < rank; ++d) batch_dims.push_back(d);

    Computation* cond =
        module.AddComputation(std::make_unique<Computation>(module.UniqueComputationName(call->name() + ".condition")));
    {
      Emitter e(module, *cond);
      Instruction* param =
          cond->AddInstruction(Instruction::CreateParameter(0, module.UniqueInstructionName("state"), state));
      cond->set_root(e.Compare(e.Gte(param, 0), e.S32(static_cast<int32_t>(k)), "LT"));
    }
    Computation* body =
        module.AddComputation(std::make_unique<Computation>(module.UniqueComputationName(call->name() + ".body")));
    {
      // Swap perm[..., i] and perm[..., pivot] where the pivot is in range: by masks over the last dimension, so
      // every batch element swaps its own pair.
      Emitter e(module, *body);
      Instruction* param =
          body->AddInstruction(Instruction::CreateParameter(0, module.UniqueInstructionName("state"), state));
      Instruction* i = e.Gte(param, 0);
      Instruction* pivots = e.Gte(param, 1);
      Instruction* perm = e.Gte(param, 2);
      Instruction* column = e.Add(Opcode::kIota, perm_shape, {});
      column->SetAttr("iota_dimension", AttrValue::Int(rank - 1));
      Instruction* pivot = e.Broadcast(e.Column(pivots, i), perm_shape, batch_dims);
      Instruction* at_i = e.Compare(column, e.Broadcast(i, perm_shape, {}), "EQ");
      Instruction* at_pivot = e.Compare(column, pivot, "EQ");
      const Shape pred = at_i->shape();
      Instruction* in_range =
          e.Add(Opcode::kAnd, pred,
                {e.Compare(pivot, e.Broadcast(e.S32(0), perm_shape, {}), "GE"),
                 e.Compare(pivot, e.Broadcast(e.S32(static_cast<int32_t>(m)), perm_shape, {}), "LT")});
      Instruction* zeros = e.Broadcast(e.S32(0), perm_shape, {});
      Instruction* picked = e.Add(Opcode::kSelect, perm_shape, {at_pivot, perm, zeros});
      std::vector<int64_t> batch(y.dimensions.begin(), y.dimensions.end() - 1);
      Instruction* sum = e.Add(Opcode::kReduce, Shape::Array(PrimitiveType::kS32, batch), {picked, e.S32(0)});
      sum->SetAttr("dimensions", AttrValue::IntList({rank - 1}));
      sum->set_called_computations({e.Adder()});
      Instruction* at_pivot_value = e.Broadcast(sum, perm_shape, batch_dims);
      Instruction* at_i_value = e.Broadcast(e.Column(perm, i), perm_shape, batch_dims);
      Instruction* swapped = e.Add(
          Opcode::kSelect, perm_shape,
          {e.Add(Opcode::kAnd, pred, {at_i, in_range}), at_pivot_value,
           e.Add(Opcode::kSelect, perm_shape, {e.Add(Opcode::kAnd, pred, {at_pivot, in_range}), at_i_value, perm})});
      Instruction* next = e.Add(Opcode::kAdd, i->shape(), {i, e.S32(1)});
      body->set_root(e.Add(Opcode::kTuple, state, {next, pivots, swapped}));
    }
    Instruction* zero = comp.AddInstruction(Instruction::CreateConstant(module.UniqueInstructionName("constant"),
                                                                        Literal(Shape::Scalar(PrimitiveType::kS32))));
    Instruction* init = AddAtCall(module, comp, *call, Opcode::kTuple, state, {zero, call->operand(0), identity});
    Instruction* loop = AddAtCall(module, comp, *call, Opcode::kWhile, state, {init});
    loop->set_called_computations({cond, body});
    result = AddAtCall(module, comp, *call, Opcode::kGetTupleElement, perm_shape, {loop});
    result->SetAttr("index", AttrValue::Int(2));
  }
  if (!y.layout.has_value() || *y.layout == Layout::Default(y.rank())) return result;
  return AddAtCall(module, comp, *call, Opcode::kCopy, y, {result});
}

}  // namespace

bool IsJaxlibTarget(std::string_view target) {
  return target == "ducc_fft" || target == "dynamic_ducc_fft" || IsPivotTarget(target);
}

absl::StatusOr<Instruction*> RewriteJaxlibCall(Module& module, Computation& comp, Instruction* call) {
  const std::string_view target = call->StringAttr("custom_call_target");
  if (target == "ducc_fft" || target == "dynamic_ducc_fft") {
    return DuccFftCall(module, comp, call, target == "dynamic_ducc_fft");
  }
  return PivotsToPermutation(module, comp, call);
}

}  // namespace xlac
