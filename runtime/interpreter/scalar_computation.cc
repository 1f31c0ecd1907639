// ScalarComputation: applying reducers, comparators and mapped computations to single elements.
//
// A computation whose instructions are all scalar (or tuples of scalars) elementwise ops compiles to a register
// program: each register holds one value in its compute type, each step applies one kernel and narrows the result
// to its element type, exactly as the array ops do.
#include <cstring>

#include "runtime/interpreter/kernels.h"

namespace xlac::interp {

namespace {

struct Reg {
  alignas(16) unsigned char bytes[16];
};

template <typename C>
inline C Get(const Reg& r) {
  C v;
  std::memcpy(&v, r.bytes, sizeof(C));
  return v;
}
template <typename C>
inline void Set(Reg& r, C v) {
  std::memcpy(r.bytes, &v, sizeof(C));
}

using AnyFn = void (*)();

}  // namespace

struct ScalarComputation::Program {
  enum class StepKind : uint8_t { kUnary, kBinary, kCompare, kSelect, kClamp, kConvert, kBitcast, kCopy };
  struct Step {
    StepKind kind;
    NumKind num;           // compute type of the operands
    PrimitiveType type;    // element type of the result (operand type for compare)
    PrimitiveType from;    // kConvert: operand element type
    int32_t dst, a, b, c;  // kBitcast: c indexes bitcasts
    AnyFn fn;
  };
  // A bitcast step's value goes through the storage bytes of a scalar of its source type into one of its result
  // type (same width), as the array op moves them.
  struct Bitcast {
    Literal from, to;
  };
  std::vector<Bitcast> bitcasts;
  std::vector<PrimitiveType> reg_types;
  std::vector<Reg> regs;  // constants preloaded; reused across calls
  std::vector<int32_t> params, outputs;
  std::vector<Step> steps;
  // Single binary op on (p0, p1) or (p1, p0): lets reduce vectorize.
  bool single_binary = false;
  bool swapped = false;
  Opcode root_op = Opcode::kAdd;

  void Run() {
    for (const Step& s : steps) {
      Reg& dst = regs[s.dst];
      switch (s.kind) {
        case StepKind::kCopy:
          dst = regs[s.a];
          break;
        case StepKind::kSelect:
          dst = Get<bool>(regs[s.a]) ? regs[s.b] : regs[s.c];
          break;
        case StepKind::kConvert:
          ConvertComputeValue(s.from, regs[s.a].bytes, s.type, dst.bytes);
          break;
        case StepKind::kBitcast: {
          Bitcast& bc = bitcasts[static_cast<size_t>(s.c)];
          DispatchKind(KindOf(s.from), [&](auto tag) { StoreOne(bc.from, 0, Get<decltype(tag)>(regs[s.a])); });
          CopyBytes(bc.to.mutable_raw_data(), bc.from.raw_data(), bc.from.byte_size());
          DispatchKind(KindOf(s.type), [&](auto tag) { Set(dst, LoadOne<decltype(tag)>(bc.to, 0)); });
          break;
        }
        default:
          DispatchKind(s.num, [&](auto tag) {
            using C = decltype(tag);
            switch (s.kind) {
              case StepKind::kUnary:
                Set<C>(dst, Normalize<C>(reinterpret_cast<UnaryFn<C>>(s.fn)(Get<C>(regs[s.a]), s.type), s.type));
                break;
              case StepKind::kBinary:
                Set<C>(dst,
                       Normalize<C>(reinterpret_cast<BinaryFn<C>>(s.fn)(Get<C>(regs[s.a]), Get<C>(regs[s.b]), s.type),
                                    s.type));
                break;
              case StepKind::kCompare:
                Set<bool>(dst, reinterpret_cast<CompareFn<C>>(s.fn)(Get<C>(regs[s.a]), Get<C>(regs[s.b])));
                break;
              case StepKind::kClamp:
                if constexpr (!kIsComplex<C>) {
                  Set<C>(dst, ClampValue<C>(Get<C>(regs[s.a]), Get<C>(regs[s.b]), Get<C>(regs[s.c])));
                }
                break;
              default:
                break;
            }
          });
      }
    }
  }
};

namespace {

using Program = ScalarComputation::Program;
using StepKind = Program::StepKind;

// Registers of a value: a scalar has one; a tuple lists its elements.
struct Node {
  int32_t reg = -1;
  std::vector<Node> elements;
};

bool Flatten(const Node& n, std::vector<int32_t>& out) {
  if (n.reg >= 0) {
    out.push_back(n.reg);
    return true;
  }
  for (const Node& e : n.elements) {
    if (e.reg < 0) return false;  // nested tuples are not produced by scalar computations we compile
    out.push_back(e.reg);
  }
  return true;
}

template <typename C>
void LoadReg(Reg& r, const Literal& lit, int64_t i) {
  Set<C>(r, LoadOne<C>(lit, i));
}

std::unique_ptr<Program> Compile(const Computation& comp) {
  auto p = std::make_unique<Program>();
  absl::flat_hash_map<const Instruction*, Node> nodes;
  auto new_reg = [&](PrimitiveType t) {
    p->reg_types.push_back(t);
    p->regs.emplace_back();
    return static_cast<int32_t>(p->regs.size() - 1);
  };
  p->params.assign(static_cast<size_t>(comp.parameter_count()), -1);
  for (const Instruction* inst : comp.MakePostOrder()) {
    const Shape& shape = inst->shape();
    Opcode op = inst->opcode();
    if (op == Opcode::kTuple) {
      Node n;
      for (const Instruction* o : inst->operands()) n.elements.push_back(nodes[o]);
      nodes[inst] = std::move(n);
      continue;
    }
    if (op == Opcode::kGetTupleElement) {
      const Node& t = nodes[inst->operand(0)];
      int64_t index = inst->IntAttr("index", 0);
      if (index < 0 || index >= static_cast<int64_t>(t.elements.size())) return nullptr;
      nodes[inst] = t.elements[static_cast<size_t>(index)];
      continue;
    }
    if (!shape.IsScalar()) return nullptr;
    PrimitiveType type = shape.element_type;
    for (const Instruction* o : inst->operands()) {
      if (!o->shape().IsScalar() || nodes[o].reg < 0) return nullptr;
    }
    auto operand_reg = [&](int64_t i) { return nodes[inst->operand(i)].reg; };
    Program::Step step{};
    step.type = type;
    step.b = step.c = -1;
    if (op == Opcode::kParameter) {
      int32_t r = new_reg(type);
      p->params[static_cast<size_t>(inst->parameter_number())] = r;
      nodes[inst].reg = r;
      continue;
    }
    if (op == Opcode::kConstant) {
      if (!inst->has_literal() || inst->literal().is_unknown()) return nullptr;
      int32_t r = new_reg(type);
      DispatchKind(KindOf(type), [&](auto tag) { LoadReg<decltype(tag)>(p->regs[r], inst->literal(), 0); });
      nodes[inst].reg = r;
      continue;
    }
    if (op == Opcode::kCopy || op == Opcode::kOptimizationBarrier) {
      nodes[inst].reg = operand_reg(0);
      continue;
    }
    step.a = inst->operand_count() > 0 ? operand_reg(0) : -1;
    NumKind operand_kind = inst->operand_count() > 0 ? KindOf(inst->operand(0)->shape().element_type) : KindOf(type);
    step.num = operand_kind;
    bool ok = true;
    if (op == Opcode::kCompare) {
      std::optional<CompareDirection> dir = ParseDirection(inst->StringAttr("direction"));
      if (!dir) return nullptr;
      bool total = inst->StringAttr("type") == "TOTALORDER";
      step.kind = StepKind::kCompare;
      step.type = inst->operand(0)->shape().element_type;
      step.b = operand_reg(1);
      DispatchKind(operand_kind, [&](auto tag) {
        CompareFn<decltype(tag)> fn = GetCompareFn<decltype(tag)>(*dir, total);
        step.fn = reinterpret_cast<AnyFn>(fn);
        ok = fn != nullptr;
      });
    } else if (op == Opcode::kSelect) {
      step.kind = StepKind::kSelect;
      step.b = operand_reg(1);
      step.c = operand_reg(2);
    } else if (op == Opcode::kClamp) {
      if (operand_kind == NumKind::kC64 || operand_kind == NumKind::kC128) return nullptr;
      step.kind = StepKind::kClamp;
      step.num = KindOf(type);
      step.b = operand_reg(1);
      step.c = operand_reg(2);
    } else if (op == Opcode::kConvert) {
      step.kind = StepKind::kConvert;
      step.from = inst->operand(0)->shape().element_type;
    } else if (op == Opcode::kBitcastConvert) {
      PrimitiveType from = inst->operand(0)->shape().element_type;
      auto plain = [](PrimitiveType t) {
        return t != PrimitiveType::kPred && !IsComplexType(t) && BitWidth(t) == ByteWidth(t) * 8;
      };
      if (!plain(from) || !plain(type) || BitWidth(from) != BitWidth(type)) return nullptr;
      step.kind = StepKind::kBitcast;
      step.from = from;
      step.c = static_cast<int32_t>(p->bitcasts.size());
      p->bitcasts.push_back({MakeArray(from, {}), MakeArray(type, {})});
    } else if (IsElementwiseBinary(op) && op != Opcode::kComplex && inst->operand(0)->shape().element_type == type) {
      step.kind = StepKind::kBinary;
      step.b = operand_reg(1);
      DispatchKind(operand_kind, [&](auto tag) {
        BinaryFn<decltype(tag)> fn = GetBinaryFn<decltype(tag)>(op);
        step.fn = reinterpret_cast<AnyFn>(fn);
        ok = fn != nullptr;
      });
    } else if (IsElementwiseUnary(op) && inst->operand(0)->shape().element_type == type && op != Opcode::kReal &&
               op != Opcode::kImag && op != Opcode::kIsFinite) {
      step.kind = StepKind::kUnary;
      DispatchKind(operand_kind, [&](auto tag) {
        UnaryFn<decltype(tag)> fn = GetUnaryFn<decltype(tag)>(op);
        step.fn = reinterpret_cast<AnyFn>(fn);
        ok = fn != nullptr;
      });
    } else {
      return nullptr;
    }
    if (!ok) return nullptr;
    step.dst = new_reg(type);
    nodes[inst].reg = step.dst;
    p->steps.push_back(step);
  }
  for (int32_t r : p->params) {
    if (r < 0) return nullptr;
  }
  if (!Flatten(nodes[comp.root()], p->outputs)) return nullptr;
  const Instruction* root = comp.root();
  if (p->steps.size() == 1 && p->steps[0].kind == StepKind::kBinary && p->params.size() == 2 &&
      root->operand_count() == 2 && root->operand(0)->opcode() == Opcode::kParameter &&
      root->operand(1)->opcode() == Opcode::kParameter && root->operand(0) != root->operand(1)) {
    p->single_binary = true;
    p->swapped = root->operand(0)->parameter_number() == 1;
    p->root_op = root->opcode();
  }
  return p;
}

}  // namespace

ScalarComputation::ScalarComputation(Evaluator& ev, const Computation& comp) : ev_(ev), comp_(comp) {
  program_ = Compile(comp);
  if (program_) return;
  for (int64_t i = 0; i < comp.parameter_count(); ++i) {
    Shape shape = comp.parameter(i)->shape();
    shape.ClearLayout();
    arg_literals_.emplace_back(shape);
  }
  for (const Literal& lit : arg_literals_) arg_ptrs_.push_back(&lit);
}

ScalarComputation::~ScalarComputation() = default;

bool ScalarComputation::FastBinary(Opcode* op, bool* swapped) const {
  if (!program_ || !program_->single_binary) return false;
  *op = program_->root_op;
  *swapped = program_->swapped;
  return true;
}

absl::StatusOr<const Literal*> ScalarComputation::CallGeneric(absl::Span<const In> args) {
  if (args.size() != arg_literals_.size()) return absl::InternalError("wrong number of scalar arguments");
  for (size_t i = 0; i < args.size(); ++i) {
    Literal& dst = arg_literals_[i];
    if (args[i].lit->shape().element_type != dst.shape().element_type) {
      return absl::InvalidArgumentError(fmt::format("computation {} parameter {} expects {}", comp_.name(), i,
                                                    PrimitiveTypeName(dst.shape().element_type)));
    }
    CopyElement(*args[i].lit, args[i].index, dst, 0, ByteWidth(dst.shape().element_type));
  }
  absl::StatusOr<Literal> result = ev_.Call(comp_, arg_ptrs_);
  if (!result.ok()) return result.status();
  last_result_ = *std::move(result);
  return &last_result_;
}

absl::Status ScalarComputation::Apply(absl::Span<const In> args, absl::Span<const Out> outs) {
  if (program_) {
    Program& p = *program_;
    if (args.size() != p.params.size() || outs.size() != p.outputs.size()) {
      return absl::InternalError("scalar computation called with the wrong arity");
    }
    for (size_t i = 0; i < args.size(); ++i) {
      int32_t r = p.params[i];
      DispatchKind(KindOf(p.reg_types[r]),
                   [&](auto tag) { LoadReg<decltype(tag)>(p.regs[r], *args[i].lit, args[i].index); });
    }
    p.Run();
    for (size_t i = 0; i < outs.size(); ++i) {
      int32_t r = p.outputs[i];
      DispatchKind(KindOf(p.reg_types[r]), [&](auto tag) {
        using C = decltype(tag);
        StoreOne<C>(*outs[i].lit, outs[i].index, Get<C>(p.regs[r]));
      });
    }
    return absl::OkStatus();
  }
  absl::StatusOr<const Literal*> result = CallGeneric(args);
  if (!result.ok()) return result.status();
  const Literal& r = **result;
  if (r.is_tuple()) {
    if (r.tuple_elements().size() != outs.size()) {
      return absl::InvalidArgumentError(fmt::format("computation {} returns {} values, expected {}", comp_.name(),
                                                    r.tuple_elements().size(), outs.size()));
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      const Literal& e = r.tuple_elements()[i];
      CopyElement(e, 0, *outs[i].lit, outs[i].index, ByteWidth(e.shape().element_type));
    }
  } else {
    CopyElement(r, 0, *outs[0].lit, outs[0].index, ByteWidth(r.shape().element_type));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ScalarComputation::ApplyPred(absl::Span<const In> args) {
  if (program_) {
    Program& p = *program_;
    if (args.size() != p.params.size() || p.outputs.size() != 1 || p.reg_types[p.outputs[0]] != PrimitiveType::kPred) {
      return absl::InvalidArgumentError(fmt::format("computation {} must return pred[]", comp_.name()));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      int32_t r = p.params[i];
      DispatchKind(KindOf(p.reg_types[r]),
                   [&](auto tag) { LoadReg<decltype(tag)>(p.regs[r], *args[i].lit, args[i].index); });
    }
    p.Run();
    return Get<bool>(p.regs[p.outputs[0]]);
  }
  absl::StatusOr<const Literal*> result = CallGeneric(args);
  if (!result.ok()) return result.status();
  const Literal& r = **result;
  if (r.shape().element_type != PrimitiveType::kPred || r.element_count() != 1) {
    return absl::InvalidArgumentError(fmt::format("computation {} must return pred[]", comp_.name()));
  }
  return LoadOne<bool>(r, 0);
}

}  // namespace xlac::interp
