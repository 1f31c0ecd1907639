// reduce (variadic) and the scalar emission of embedded computations (reducers, comparators).
//
// In exact mode the accumulation order is the interpreter's: per output element, sequentially over the reduced
// elements in row-major order, the accumulators being the reducer's first arguments; every reducer op rounds to its
// element type. The default mode may reorder associative reducers (EmitReduction in codegen/elemental_emitter.h).
#include <algorithm>

#include "codegen/elemental_emitter.h"
#include "llvm/IR/Intrinsics.h"

namespace xlac::codegen::internal {

absl::StatusOr<std::vector<llvm::Value*>> IrEmitter::EmitScalarComputation(const Computation& comp,
                                                                           absl::Span<llvm::Value* const> args) {
  std::map<int64_t, std::vector<llvm::Value*>> values;  // by instruction unique id
  for (const Instruction* inst : comp.MakePostOrder()) {
    const Shape& shape = inst->shape();
    std::vector<llvm::Value*>& out = values[inst->unique_id()];
    switch (inst->opcode()) {
      case Opcode::kParameter:
        if (!shape.IsScalar() || inst->parameter_number() >= static_cast<int64_t>(args.size())) {
          return Unimplemented(*inst, "embedded computation with non-scalar parameters");
        }
        out = {args[inst->parameter_number()]};
        continue;
      case Opcode::kConstant:
        if (!shape.IsScalar() || inst->literal().is_unknown()) {
          return Unimplemented(*inst, "non-scalar constant in an embedded computation");
        }
        XLAC_RETURN_IF_ERROR(CheckComputeType(*inst, shape.element_type));
        out = {ConstantCompute(shape.element_type, inst->literal(), 0)};
        continue;
      case Opcode::kTuple:
        for (const Instruction* operand : inst->operands()) {
          const std::vector<llvm::Value*>& v = values[operand->unique_id()];
          out.insert(out.end(), v.begin(), v.end());
        }
        continue;
      case Opcode::kGetTupleElement: {
        const Shape& tuple = inst->operand(0)->shape();
        int64_t which = inst->IntAttr("index");
        for (const Shape& s : tuple.tuple_shapes) {
          if (!s.IsScalar()) return Unimplemented(*inst, "nested tuples in an embedded computation");
        }
        out = {values[inst->operand(0)->unique_id()].at(static_cast<size_t>(which))};
        continue;
      }
      case Opcode::kBitcastConvert: {
        // JAX's float sort comparators order by the total order through the bits (sign-magnitude to two's
        // complement).
        if (!shape.IsScalar()) return Unimplemented(*inst, "non-scalar bitcast-convert in an embedded computation");
        XLAC_ASSIGN_OR_RETURN(llvm::Value * v, EmitBitcastConvert(*inst, values[inst->operand(0)->unique_id()].at(0)));
        out = {v};
        continue;
      }
      default:
        break;
    }
    Opcode op = inst->opcode();
    bool elementwise = IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == Opcode::kCompare ||
                       op == Opcode::kSelect || op == Opcode::kClamp || op == Opcode::kConvert;
    if (!elementwise || !shape.IsScalar()) {
      return Unimplemented(*inst, "op in an embedded (scalar) computation");
    }
    std::vector<llvm::Value*> operands;
    for (const Instruction* operand : inst->operands()) {
      if (!operand->shape().IsScalar()) return Unimplemented(*inst, "non-scalar operand in an embedded computation");
      operands.push_back(values[operand->unique_id()].at(0));
    }
    int64_t typed = op == Opcode::kSelect || op == Opcode::kClamp ? 1 : 0;
    XLAC_ASSIGN_OR_RETURN(llvm::Value * v, EmitScalarOp(*inst, inst->operand(typed)->shape().element_type, operands));
    out = {RoundToType(v, shape.element_type)};
  }
  return values[comp.root()->unique_id()];
}

namespace {

// Reducers whose result does not depend on the order of the reduced elements (up to float rounding for sums and
// products): one binary op of the two scalar parameters.
enum class Associative { kNone, kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr };

Associative MatchAssociative(const Computation& reducer) {
  const Instruction* root = reducer.root();
  if (reducer.parameter_count() != 2 || root->operand_count() != 2 || !root->shape().IsScalar()) {
    return Associative::kNone;
  }
  const Instruction* a = root->operand(0);
  const Instruction* c = root->operand(1);
  if (a->opcode() != Opcode::kParameter || c->opcode() != Opcode::kParameter || a == c) return Associative::kNone;
  PrimitiveType t = root->shape().element_type;
  if (a->shape().element_type != t || c->shape().element_type != t || !a->shape().IsScalar()) {
    return Associative::kNone;
  }
  bool is_float = t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
  bool is_int = IsIntegralType(t) && t != PrimitiveType::kPred && !IrEmitter::IsNarrowType(t);
  if (!is_float && !is_int) return Associative::kNone;
  switch (root->opcode()) {
    case Opcode::kAdd:
      return Associative::kAdd;
    case Opcode::kMultiply:
      return Associative::kMultiply;
    case Opcode::kMaximum:
      return Associative::kMaximum;
    case Opcode::kMinimum:
      return Associative::kMinimum;
    case Opcode::kAnd:
      return is_int ? Associative::kAnd : Associative::kNone;
    case Opcode::kOr:
      return is_int ? Associative::kOr : Associative::kNone;
    default:
      return Associative::kNone;
  }
}

bool IsFloatReducer(const Computation& reducer) { return IsFloatingPointType(reducer.root()->shape().element_type); }

}  // namespace

absl::Status EmitReduction(IrEmitter& e, const Shape& input_shape, const std::vector<int64_t>& reduced_dims,
                           const std::vector<ReduceGroup>& groups, const ReduceValues& inits,
                           const ReduceValues& inputs) {
  llvm::IRBuilder<>& b = e.b();
  bool exact = e.options().exact;
  // Free to reorder: every reducer is associative and commutative, and either integer (same bits in any order) or
  // allowed to reassociate.
  bool reorder = true;
  bool reassociate_floats = !exact;
  std::vector<Associative> kinds;
  for (const ReduceGroup& g : groups) {
    const Computation& reducer = *g.reduce->called_computation(0);
    kinds.push_back(MatchAssociative(reducer));
    if (kinds.back() == Associative::kNone || (exact && IsFloatReducer(reducer))) reorder = false;
  }
  const std::vector<int64_t>& in_dims = input_shape.dimensions;
  std::vector<int64_t> reduced = reduced_dims;
  std::sort(reduced.begin(), reduced.end());
  auto is_reduced = [&](int64_t d) { return std::binary_search(reduced.begin(), reduced.end(), d); };
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(in_dims.size()); ++d) {
    if (!is_reduced(d)) kept.push_back(d);
  }
  std::vector<int64_t> physical = MajorToMinor(input_shape);
  // Reduced dimensions in the input's memory order; when that is increasing, walking the input in memory order
  // visits each output element's inputs in the interpreter's order.
  std::vector<int64_t> reduced_physical;
  for (int64_t d : physical) {
    if (is_reduced(d)) reduced_physical.push_back(d);
  }
  bool order_preserved = std::is_sorted(reduced_physical.begin(), reduced_physical.end());
  int64_t output_elements = 1;
  for (int64_t d : kept) output_elements *= in_dims[d];
  int64_t input_elements = 1;
  for (int64_t d : in_dims) input_elements *= d;

  // Row reductions by float maximum or minimum track NaN on the side (below), so their steps need not propagate it.
  auto nan_tracked = [&](size_t group) {
    return reassociate_floats && (kinds[group] == Associative::kMaximum || kinds[group] == Associative::kMinimum) &&
           IsFloatReducer(*groups[group].reduce->called_computation(0));
  };
  // One reducer step on compute values: accumulators first, then inputs, for every group.
  auto step = [&](size_t group, std::vector<llvm::Value*> args,
                  bool nan_on_the_side = false) -> absl::StatusOr<std::vector<llvm::Value*>> {
    const ReduceGroup& g = groups[group];
    const Computation& reducer = *g.reduce->called_computation(0);
    if (nan_on_the_side) {
      // maxnum / minnum without NaNs or signed zeros: one vmaxps / vminps per vector, where llvm.maximum takes five
      // (NaN and -0 < +0 handling) and its final horizontal step branches per row. A NaN operand makes the result
      // poison, which the side flag then replaces; which zero a +-0 tie keeps is unspecified (the default mode's
      // tolerance counts them equal, docs/numerics.md).
      llvm::IRBuilder<>::FastMathFlagGuard guard(b);
      llvm::FastMathFlags flags;
      flags.setAllowReassoc();
      flags.setNoNaNs();
      flags.setNoSignedZeros();
      b.setFastMathFlags(flags);
      llvm::Intrinsic::ID id =
          kinds[group] == Associative::kMaximum ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum;
      return std::vector<llvm::Value*>{b.CreateBinaryIntrinsic(id, args[0], args[1])};
    }
    if (reassociate_floats && kinds[group] != Associative::kNone && IsFloatReducer(reducer)) {
      // Reassociable ops LLVM's vectorizer turns into several vector accumulators and a final tree combine.
      llvm::IRBuilder<>::FastMathFlagGuard guard(b);
      llvm::FastMathFlags flags;
      flags.setAllowReassoc();
      b.setFastMathFlags(flags);
      switch (kinds[group]) {
        case Associative::kAdd:
          return std::vector<llvm::Value*>{b.CreateFAdd(args[0], args[1])};
        case Associative::kMultiply:
          return std::vector<llvm::Value*>{b.CreateFMul(args[0], args[1])};
        case Associative::kMaximum:
          return std::vector<llvm::Value*>{b.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, args[0], args[1])};
        case Associative::kMinimum:
          return std::vector<llvm::Value*>{b.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, args[0], args[1])};
        default:
          break;
      }
    }
    XLAC_ASSIGN_OR_RETURN(std::vector<llvm::Value*> r, e.EmitScalarComputation(reducer, args));
    if (r.size() != g.outputs.size()) return Unimplemented(*g.reduce, "reducer result arity");
    return r;
  };
  auto split = [&](const std::vector<llvm::Value*>& all, size_t group) {
    size_t first = 0;
    for (size_t k = 0; k < group; ++k) first += groups[k].outputs.size();
    return std::vector<llvm::Value*>(all.begin() + static_cast<std::ptrdiff_t>(first),
                                     all.begin() + static_cast<std::ptrdiff_t>(first + groups[group].outputs.size()));
  };
  absl::Status status;
  auto fail = [&](const absl::Status& s) {
    if (status.ok()) status = s;
  };
  const Shape& out_shape = groups[0].outputs[0].shape;

  bool column =
      !physical.empty() && !is_reduced(physical.back()) && output_elements > 1 && (order_preserved || reorder);
  if (column) {
    // The output rows are the accumulators: initialize them, then walk the input in memory order, so the minor
    // (kept) dimension is the vectorizable inner loop and every output element still sees its inputs in order.
    XLAC_RETURN_IF_ERROR(e.ParallelShapeLoop(out_shape, "reduce.init", [&](const Index& out_index) {
      if (!status.ok()) return;
      absl::StatusOr<std::vector<llvm::Value*>> init = inits({});
      if (!init.ok()) return fail(init.status());
      for (size_t g = 0; g < groups.size(); ++g) {
        std::vector<llvm::Value*> v = split(*init, g);
        for (size_t i = 0; i < v.size(); ++i) e.StoreCompute(groups[g].outputs[i], out_index, v[i]);
      }
    }));
    // Threads split the kept dimensions only: every output element still sees its inputs in the same order.
    std::vector<bool> splittable(in_dims.size());
    for (int64_t d : kept) splittable[static_cast<size_t>(d)] = true;
    XLAC_RETURN_IF_ERROR(
        e.ParallelLoopNest(in_dims, physical, splittable, input_elements, "reduce", [&](const Index& in_index) {
          if (!status.ok()) return;
          Index out_index;
          for (int64_t d : kept) out_index.push_back(in_index[d]);
          absl::StatusOr<std::vector<llvm::Value*>> in = inputs(in_index);
          if (!in.ok()) return fail(in.status());
          for (size_t g = 0; g < groups.size(); ++g) {
            std::vector<llvm::Value*> args;
            for (const IrArray& out : groups[g].outputs) args.push_back(e.LoadCompute(out, out_index));
            std::vector<llvm::Value*> v = split(*in, g);
            args.insert(args.end(), v.begin(), v.end());
            absl::StatusOr<std::vector<llvm::Value*>> r = step(g, args);
            if (!r.ok()) return fail(r.status());
            for (size_t i = 0; i < r->size(); ++i) e.StoreCompute(groups[g].outputs[i], out_index, (*r)[i]);
          }
        }));
    return status;
  }

  // Row order: per output element, accumulators in registers (allocas in the entry block, promoted by mem2reg) over
  // the reduced elements: in row-major order when the order matters, in memory order (minor innermost, contiguous)
  // when it does not.
  std::vector<llvm::AllocaInst*> accs;
  // Per group: whether an init value or input so far was NaN (nan_tracked groups only, else null).
  std::vector<llvm::AllocaInst*> nans(groups.size(), nullptr);
  std::vector<int64_t> sizes;
  for (int64_t d : reduced) sizes.push_back(in_dims[d]);
  std::vector<int64_t> red_order;
  for (int64_t d : reorder ? reduced_physical : reduced) {
    red_order.push_back(std::lower_bound(reduced.begin(), reduced.end(), d) - reduced.begin());
  }
  // Threads split the output elements; each thread has its own accumulators (in the function the body is emitted
  // into: the loop may be outlined).
  XLAC_RETURN_IF_ERROR(e.ParallelLoopNest(
      out_shape.dimensions, MajorToMinor(out_shape), std::vector<bool>(out_shape.dimensions.size(), true),
      input_elements, "reduce", [&](const Index& out_index) {
        if (!status.ok()) return;
        llvm::Function* fn = b.GetInsertBlock()->getParent();
        llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
        for (const ReduceGroup& g : groups) {
          for (const IrArray& out : g.outputs)
            accs.push_back(entry.CreateAlloca(e.ComputeType(out.shape.element_type)));
        }
        absl::StatusOr<std::vector<llvm::Value*>> init = inits({});
        if (!init.ok()) return fail(init.status());
        for (size_t i = 0; i < accs.size(); ++i) b.CreateStore((*init)[i], accs[i]);
        for (size_t g = 0, first = 0; g < groups.size(); first += groups[g].outputs.size(), ++g) {
          if (!nan_tracked(g)) continue;
          nans[g] = entry.CreateAlloca(b.getInt1Ty());
          b.CreateStore(b.CreateFCmpUNO((*init)[first], (*init)[first]), nans[g]);
        }
        e.LoopNest(sizes, red_order, [&](const Index& red_index) {
          if (!status.ok()) return;
          Index in_index(in_dims.size());
          for (size_t k = 0; k < kept.size(); ++k) in_index[kept[k]] = out_index[k];
          for (size_t k = 0; k < reduced.size(); ++k) in_index[reduced[k]] = red_index[k];
          absl::StatusOr<std::vector<llvm::Value*>> in = inputs(in_index);
          if (!in.ok()) return fail(in.status());
          size_t first = 0;
          for (size_t g = 0; g < groups.size(); ++g) {
            size_t n = groups[g].outputs.size();
            std::vector<llvm::Value*> args;
            for (size_t i = 0; i < n; ++i)
              args.push_back(b.CreateLoad(accs[first + i]->getAllocatedType(), accs[first + i]));
            std::vector<llvm::Value*> v = split(*in, g);
            args.insert(args.end(), v.begin(), v.end());
            absl::StatusOr<std::vector<llvm::Value*>> r = step(g, args, nans[g] != nullptr);
            if (!r.ok()) return fail(r.status());
            for (size_t i = 0; i < n; ++i) b.CreateStore((*r)[i], accs[first + i]);
            if (nans[g] != nullptr) {
              llvm::Value* seen = b.CreateLoad(b.getInt1Ty(), nans[g]);
              b.CreateStore(b.CreateOr(seen, b.CreateFCmpUNO(v[0], v[0])), nans[g]);
            }
            first += n;
          }
        });
        size_t first = 0;
        for (size_t g = 0; g < groups.size(); ++g) {
          for (size_t i = 0; i < groups[g].outputs.size(); ++i, ++first) {
            llvm::Value* value = b.CreateLoad(accs[first]->getAllocatedType(), accs[first]);
            if (nans[g] != nullptr) {
              value = b.CreateSelect(b.CreateLoad(b.getInt1Ty(), nans[g]), llvm::ConstantFP::getNaN(value->getType()),
                                     value);
            }
            e.StoreCompute(groups[g].outputs[i], out_index, value);
          }
        }
      }));
  return status;
}

absl::Status IrEmitter::EmitReduce(const Instruction& inst) {
  size_t n = static_cast<size_t>(inst.operand_count()) / 2;
  ReduceGroup group;
  group.reduce = &inst;
  std::vector<IrArray> inputs, inits;
  for (size_t i = 0; i < n; ++i) {
    inputs.push_back(ArrayFor(inst.operand(static_cast<int64_t>(i))));
    inits.push_back(ArrayFor(inst.operand(static_cast<int64_t>(n + i))));
    group.outputs.push_back(inst.shape().IsTuple() ? ArrayFor(&inst, {static_cast<int64_t>(i)}) : ArrayFor(&inst));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, inputs.back().shape.element_type));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, group.outputs.back().shape.element_type));
  }
  auto load_all = [&](const std::vector<IrArray>& arrays, const Index& index) {
    std::vector<llvm::Value*> values;
    for (const IrArray& a : arrays) values.push_back(LoadCompute(a, a.shape.rank() == 0 ? Index{} : index));
    return values;
  };
  return EmitReduction(
      *this, inputs[0].shape, inst.dimensions(), {group},
      [&](const Index&) -> absl::StatusOr<std::vector<llvm::Value*>> { return load_all(inits, {}); },
      [&](const Index& index) -> absl::StatusOr<std::vector<llvm::Value*>> { return load_all(inputs, index); });
}

}  // namespace xlac::codegen::internal
