// ScalarComputation: applying reducers, comparators and mapped computations to single elements.
#include <cstring>
#include <variant>

#include "runtime/interpreter/kernels.h"

namespace xlac::interp {

// A computation whose root is one elementwise binary op or compare on its two scalar parameters.
struct ScalarComputation::Fast {
  bool is_compare = false;
  bool swapped = false;  // root(p1, p0)
  PrimitiveType type = PrimitiveType::kInvalid;
  NumKind kind = NumKind::kPred;
  std::variant<BinaryFn<bool>, BinaryFn<int64_t>, BinaryFn<uint64_t>, BinaryFn<float>, BinaryFn<double>,
               BinaryFn<c64>, BinaryFn<c128>>
      binary;
  std::variant<CompareFn<bool>, CompareFn<int64_t>, CompareFn<uint64_t>, CompareFn<float>, CompareFn<double>,
               CompareFn<c64>, CompareFn<c128>>
      compare;
};

namespace {

std::shared_ptr<const ScalarComputation::Fast> MakeFast(const Computation& comp);

}  // namespace

ScalarComputation::ScalarComputation(Evaluator& ev, const Computation& comp) : ev_(ev), comp_(comp) {
  fast_ = MakeFast(comp);
  if (fast_) return;
  for (int64_t i = 0; i < comp.parameter_count(); ++i) {
    Shape shape = comp.parameter(i)->shape();
    shape.ClearLayout();
    arg_literals_.emplace_back(shape);
  }
  for (const Literal& lit : arg_literals_) arg_ptrs_.push_back(&lit);
}

namespace {

std::shared_ptr<const ScalarComputation::Fast> MakeFast(const Computation& comp) {
  if (comp.parameter_count() != 2) return nullptr;
  const Instruction* root = comp.root();
  const Instruction* p0 = comp.parameter(0);
  const Instruction* p1 = comp.parameter(1);
  if (root == nullptr || root->operand_count() != 2 || !p0->shape().IsScalar() || !p1->shape().IsScalar()) {
    return nullptr;
  }
  PrimitiveType t = p0->shape().element_type;
  if (p1->shape().element_type != t) return nullptr;
  bool swapped;
  if (root->operand(0) == p0 && root->operand(1) == p1) {
    swapped = false;
  } else if (root->operand(0) == p1 && root->operand(1) == p0) {
    swapped = true;
  } else {
    return nullptr;
  }
  auto fast = std::make_shared<ScalarComputation::Fast>();
  fast->swapped = swapped;
  fast->type = t;
  fast->kind = KindOf(t);
  bool ok = false;
  if (root->opcode() == Opcode::kCompare && root->shape().IsScalar()) {
    std::optional<CompareDirection> dir = ParseDirection(root->StringAttr("direction"));
    if (!dir) return nullptr;
    bool total = root->StringAttr("type") == "TOTALORDER";
    fast->is_compare = true;
    DispatchKind(fast->kind, [&](auto tag) {
      using C = decltype(tag);
      CompareFn<C> fn = GetCompareFn<C>(*dir, total);
      fast->compare = fn;
      ok = fn != nullptr;
    });
  } else if (IsElementwiseBinary(root->opcode()) && root->opcode() != Opcode::kComplex &&
             root->shape().IsScalar() && root->shape().element_type == t) {
    DispatchKind(fast->kind, [&](auto tag) {
      using C = decltype(tag);
      BinaryFn<C> fn = GetBinaryFn<C>(root->opcode());
      fast->binary = fn;
      ok = fn != nullptr;
    });
  }
  if (!ok) return nullptr;
  return fast;
}

}  // namespace

absl::Status ScalarComputation::Apply(absl::Span<const In> args, absl::Span<const Out> outs) {
  if (fast_ && !fast_->is_compare) {
    const Fast& f = *fast_;
    const In& a = args[f.swapped ? 1 : 0];
    const In& b = args[f.swapped ? 0 : 1];
    DispatchKind(f.kind, [&](auto tag) {
      using C = decltype(tag);
      C r = std::get<BinaryFn<C>>(f.binary)(LoadOne<C>(*a.lit, a.index), LoadOne<C>(*b.lit, b.index), f.type);
      StoreOne<C>(*outs[0].lit, outs[0].index, r);
    });
    return absl::OkStatus();
  }
  if (fast_) {
    absl::StatusOr<bool> p = ApplyPred(args);
    if (!p.ok()) return p.status();
    StoreOne<bool>(*outs[0].lit, outs[0].index, *p);
    return absl::OkStatus();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    Literal& dst = arg_literals_[i];
    int64_t w = ByteWidth(dst.shape().element_type);
    CopyElement(*args[i].lit, args[i].index, dst, 0, w);
  }
  absl::StatusOr<Literal> result = ev_.Call(comp_, arg_ptrs_);
  if (!result.ok()) return result.status();
  if (result->is_tuple()) {
    if (result->tuple_elements().size() != outs.size()) {
      return absl::InvalidArgumentError(fmt::format("computation {} returns {} values, expected {}", comp_.name(),
                                                    result->tuple_elements().size(), outs.size()));
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      const Literal& e = result->tuple_elements()[i];
      CopyElement(e, 0, *outs[i].lit, outs[i].index, ByteWidth(e.shape().element_type));
    }
  } else {
    CopyElement(*result, 0, *outs[0].lit, outs[0].index, ByteWidth(result->shape().element_type));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ScalarComputation::ApplyPred(absl::Span<const In> args) {
  if (fast_ && fast_->is_compare) {
    const Fast& f = *fast_;
    const In& a = args[f.swapped ? 1 : 0];
    const In& b = args[f.swapped ? 0 : 1];
    return DispatchKind(f.kind, [&](auto tag) {
      using C = decltype(tag);
      return std::get<CompareFn<C>>(f.compare)(LoadOne<C>(*a.lit, a.index), LoadOne<C>(*b.lit, b.index));
    });
  }
  if (fast_) {
    Literal out(Shape::Scalar(PrimitiveType::kPred));
    Out o{&out, 0};
    XLAC_RETURN_IF_ERROR(Apply(args, absl::MakeConstSpan(&o, 1)));
    return LoadOne<bool>(out, 0);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    Literal& dst = arg_literals_[i];
    CopyElement(*args[i].lit, args[i].index, dst, 0, ByteWidth(dst.shape().element_type));
  }
  absl::StatusOr<Literal> result = ev_.Call(comp_, arg_ptrs_);
  if (!result.ok()) return result.status();
  if (result->shape().element_type != PrimitiveType::kPred || result->element_count() != 1) {
    return absl::InvalidArgumentError(fmt::format("computation {} must return pred[]", comp_.name()));
  }
  return LoadOne<bool>(*result, 0);
}

bool ScalarComputation::FastBinary(Opcode* op, bool* swapped) const {
  if (!fast_ || fast_->is_compare) return false;
  *op = comp_.root()->opcode();
  *swapped = fast_->swapped;
  return true;
}

}  // namespace xlac::interp
