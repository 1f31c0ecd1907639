// Shape inference tests, one group per op family. Instructions are built directly through the IR API so the
// tests do not depend on the parser.
#include "ir/shape_inference.h"

#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace xlac {
namespace {

using Attrs = std::vector<std::pair<std::string, AttrValue>>;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kF32, std::move(dims)); }
Shape Arr(PrimitiveType t, std::vector<int64_t> dims) { return Shape::Array(t, std::move(dims)); }
Shape Scalar(PrimitiveType t) { return Shape::Scalar(t); }

class ShapeInferenceTest : public ::testing::Test {
 protected:
  Instruction* Param(const Shape& shape) {
    int64_t n = static_cast<int64_t>(owned_.size());
    owned_.push_back(Instruction::CreateParameter(n, "p" + std::to_string(n), shape));
    return owned_.back().get();
  }

  Instruction* Make(Opcode op, const Shape& shape, std::vector<Instruction*> operands, Attrs attrs = {},
                    std::vector<Computation*> called = {}) {
    owned_.push_back(Instruction::Create(op, std::string(OpcodeName(op)), shape, std::move(operands)));
    for (auto& [name, value] : attrs) owned_.back()->SetAttr(name, value);
    owned_.back()->set_called_computations(std::move(called));
    return owned_.back().get();
  }

  // A computation (params...) -> root built by `body` from its parameters.
  Computation* Comp(const std::string& name, std::vector<Shape> params,
                    const std::function<Instruction*(Computation*, std::vector<Instruction*>)>& body) {
    comps_.push_back(std::make_unique<Computation>(name));
    Computation* comp = comps_.back().get();
    std::vector<Instruction*> ps;
    for (size_t i = 0; i < params.size(); ++i) {
      ps.push_back(comp->AddInstruction(
          Instruction::CreateParameter(static_cast<int64_t>(i), name + ".p" + std::to_string(i), params[i])));
    }
    comp->set_root(body(comp, ps));
    return comp;
  }

  // (T, T) -> T, the usual reducer.
  Computation* BinaryComp(PrimitiveType t, Opcode op = Opcode::kAdd) {
    return Comp("reducer", {Scalar(t), Scalar(t)}, [&](Computation* c, std::vector<Instruction*> p) {
      return c->AddInstruction(Instruction::Create(op, "r", Scalar(t), {p[0], p[1]}));
    });
  }

  // Returns the inferred shape as text, or "error: <message>".
  static std::string Infer(const Instruction* inst) {
    absl::StatusOr<Shape> shape = InferShape(*inst);
    if (!shape.ok()) return "error: " + std::string(shape.status().message());
    return ShapeToString(*shape, /*print_layout=*/false);
  }

  std::vector<std::unique_ptr<Instruction>> owned_;
  std::vector<std::unique_ptr<Computation>> comps_;
};

AttrValue Ints(std::vector<int64_t> v) { return AttrValue::IntList(std::move(v)); }

#define EXPECT_ERROR_CONTAINS(text, needle)                         \
  do {                                                              \
    std::string _t = (text);                                        \
    EXPECT_NE(_t.find("error: "), std::string::npos) << _t;         \
    EXPECT_NE(_t.find(needle), std::string::npos) << "got: " << _t; \
  } while (0)

// ---------------------------------------------------------------- elementwise

TEST_F(ShapeInferenceTest, UnaryTypeRules) {
  Instruction* c = Param(Arr(PrimitiveType::kC64, {3}));
  Instruction* z = Param(Arr(PrimitiveType::kC128, {2}));
  Instruction* f = Param(F32({2, 2}));
  Instruction* s = Param(Arr(PrimitiveType::kS32, {4}));
  Instruction* u = Param(Arr(PrimitiveType::kU32, {4}));
  Instruction* p = Param(Arr(PrimitiveType::kPred, {4}));
  EXPECT_EQ(Infer(Make(Opcode::kAbs, {}, {c})), "f32[3]");
  EXPECT_EQ(Infer(Make(Opcode::kAbs, {}, {s})), "s32[4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kAbs, {}, {u})), "abs: expected a signed, floating-point or complex");
  EXPECT_EQ(Infer(Make(Opcode::kReal, {}, {z})), "f64[2]");
  EXPECT_EQ(Infer(Make(Opcode::kImag, {}, {f})), "f32[2,2]");
  EXPECT_EQ(Infer(Make(Opcode::kIsFinite, {}, {f})), "pred[2,2]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kIsFinite, {}, {s})), "is-finite: expected a floating-point element type");
  EXPECT_EQ(Infer(Make(Opcode::kPopulationCount, {}, {u})), "u32[4]");
  EXPECT_EQ(Infer(Make(Opcode::kClz, {}, {s})), "s32[4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kClz, {}, {f})), "count-leading-zeros: expected an integral");
  EXPECT_EQ(Infer(Make(Opcode::kNot, {}, {p})), "pred[4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kNot, {}, {f})), "not: expected a pred or integral");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kNegate, {}, {p})), "negate:");
  EXPECT_EQ(Infer(Make(Opcode::kExp, {}, {c})), "c64[3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kFloor, {}, {c})), "floor: expected a floating-point");
  EXPECT_EQ(Infer(Make(Opcode::kSign, {}, {s})), "s32[4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSign, {}, {u})), "sign:");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kExp, {}, {Param(Shape::Tuple({F32({1})}))})), "expected an array");
}

TEST_F(ShapeInferenceTest, BinaryOps) {
  Instruction* a = Param(F32({2, 3}));
  Instruction* b = Param(Arr(PrimitiveType::kBF16, {2, 3}));
  Instruction* c = Param(F32({3, 2}));
  Instruction* s = Param(Arr(PrimitiveType::kS32, {2, 3}));
  Instruction* p = Param(Arr(PrimitiveType::kPred, {2, 3}));
  EXPECT_EQ(Infer(Make(Opcode::kAdd, {}, {a, a})), "f32[2,3]");
  // Mixed floating-point precision is allowed and yields the wider type.
  EXPECT_EQ(Infer(Make(Opcode::kMultiply, {}, {b, a})), "f32[2,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kAdd, {}, {a, c})),
                        "add: operands have incompatible shapes: f32[2,3] and f32[3,2]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kAdd, {}, {a, s})), "different element types");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSubtract, {}, {p, p})), "got pred");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kShiftLeft, {}, {p, p})), "shift-left: expected an arithmetic");
  EXPECT_EQ(Infer(Make(Opcode::kShiftRightLogical, {}, {s, s})), "s32[2,3]");
  EXPECT_EQ(Infer(Make(Opcode::kAnd, {}, {p, p})), "pred[2,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kOr, {}, {a, a})), "or: expected a pred or integral");
  EXPECT_EQ(Infer(Make(Opcode::kComplex, {}, {a, a})), "c64[2,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kComplex, {}, {b, b})), "must both be f32 or both f64");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kAdd, {}, {a})), "add: expected 2 operands, got 1");
}

TEST_F(ShapeInferenceTest, CompareGivesPredAndChecksType) {
  Instruction* a = Param(F32({4}));
  Instruction* s = Param(Arr(PrimitiveType::kS8, {4}));
  EXPECT_EQ(Infer(Make(Opcode::kCompare, {}, {a, a}, {{"direction", AttrValue::Enum("LT")}})), "pred[4]");
  EXPECT_EQ(Infer(Make(Opcode::kCompare, {}, {a, a}, {{"type", AttrValue::Enum("TOTALORDER")}})), "pred[4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kCompare, {}, {s, s}, {{"type", AttrValue::Enum("UNSIGNED")}})),
                        "comparison type UNSIGNED does not suit operands of type s8");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kCompare, {}, {a, a}, {{"direction", AttrValue::Enum("XX")}})),
                        "unknown comparison direction");
  // Attributes of the wrong kind are rejected, not misread.
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kCompare, {}, {a, a}, {{"direction", AttrValue::Int(3)}})),
                        "attribute 'direction' must be an enum");
}

TEST_F(ShapeInferenceTest, SelectAndClamp) {
  Instruction* pred_scalar = Param(Scalar(PrimitiveType::kPred));
  Instruction* pred = Param(Arr(PrimitiveType::kPred, {2, 3}));
  Instruction* pred_bad = Param(Arr(PrimitiveType::kPred, {3}));
  Instruction* a = Param(F32({2, 3}));
  Instruction* s = Param(Arr(PrimitiveType::kS32, {2, 3}));
  Instruction* lo = Param(Scalar(PrimitiveType::kF32));
  Instruction* v = Param(F32({3}));
  EXPECT_EQ(Infer(Make(Opcode::kSelect, {}, {pred, a, a})), "f32[2,3]");
  EXPECT_EQ(Infer(Make(Opcode::kSelect, {}, {pred_scalar, a, a})), "f32[2,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSelect, {}, {pred_bad, a, a})), "predicate shape pred[3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSelect, {}, {s, a, a})), "predicate must be pred");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSelect, {}, {pred, a, s})), "on_true and on_false");
  EXPECT_EQ(Infer(Make(Opcode::kClamp, {}, {lo, a, lo})), "f32[2,3]");
  EXPECT_EQ(Infer(Make(Opcode::kClamp, {}, {a, a, a})), "f32[2,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kClamp, {}, {v, a, lo})), "min and max must be scalars");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kClamp, {}, {lo, s, lo})), "different element types");
}

TEST_F(ShapeInferenceTest, Conversions) {
  Instruction* f = Param(F32({4}));
  Instruction* u8 = Param(Arr(PrimitiveType::kU8, {4, 4}));
  Instruction* u8_bad = Param(Arr(PrimitiveType::kU8, {4, 3}));
  Instruction* c = Param(Arr(PrimitiveType::kC64, {2}));
  EXPECT_EQ(Infer(Make(Opcode::kConvert, Arr(PrimitiveType::kS8, {4}), {f})), "s8[4]");
  // The target element type comes from the instruction; its dims from the operand.
  EXPECT_EQ(Infer(Make(Opcode::kConvert, Arr(PrimitiveType::kS8, {9}), {f})), "s8[4]");
  EXPECT_EQ(Infer(Make(Opcode::kBitcastConvert, Arr(PrimitiveType::kU8, {4, 4}), {f})), "u8[4,4]");
  EXPECT_EQ(Infer(Make(Opcode::kBitcastConvert, F32({4}), {u8})), "f32[4]");
  EXPECT_EQ(Infer(Make(Opcode::kBitcastConvert, Arr(PrimitiveType::kS32, {4}), {f})), "s32[4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kBitcastConvert, F32({4}), {u8_bad})), "must equal the bit-width ratio 4");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kBitcastConvert, Arr(PrimitiveType::kF64, {2}), {c})),
                        "between complex and real");
  EXPECT_EQ(Infer(Make(Opcode::kReducePrecision, {}, {f},
                       {{"exponent_bits", AttrValue::Int(5)}, {"mantissa_bits", AttrValue::Int(2)}})),
            "f32[4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReducePrecision, {}, {f},
                                   {{"exponent_bits", AttrValue::Int(0)}, {"mantissa_bits", AttrValue::Int(2)}})),
                        "exponent_bits must be >= 1");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReducePrecision, {}, {f}, {{"exponent_bits", AttrValue::Int(5)}})),
                        "missing required attribute 'mantissa_bits'");
  Instruction* bits = Param(Arr(PrimitiveType::kU32, {4}));
  EXPECT_EQ(Infer(Make(Opcode::kStochasticConvert, Arr(PrimitiveType::kBF16, {4}), {f, bits})), "bf16[4]");
}

// ---------------------------------------------------------------- data movement

TEST_F(ShapeInferenceTest, Broadcast) {
  Instruction* v = Param(F32({3}));
  EXPECT_EQ(Infer(Make(Opcode::kBroadcast, F32({2, 3}), {v}, {{"dimensions", Ints({1})}})), "f32[2,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kBroadcast, F32({2, 3}), {v}, {{"dimensions", Ints({0})}})),
                        "operand dimension 0 has size 3 but maps to result dimension 0 of size 2");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kBroadcast, F32({2, 3}), {v}, {{"dimensions", Ints({2})}})),
                        "dimensions entry 2 out of range for rank 2");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kBroadcast, F32({2, 3}), {v}, {{"dimensions", Ints({})}})),
                        "dimensions has 0 entries");
  Instruction* s = Param(Scalar(PrimitiveType::kS32));
  EXPECT_EQ(Infer(Make(Opcode::kBroadcast, Arr(PrimitiveType::kS32, {5, 5}), {s}, {{"dimensions", Ints({})}})),
            "s32[5,5]");
  // With no result shape written, dimensions= lists the sizes of new major dims (XLA's parser-side inference).
  EXPECT_EQ(Infer(Make(Opcode::kBroadcast, Shape(), {v}, {{"dimensions", Ints({4, 2})}})), "f32[4,2,3]");
}

TEST_F(ShapeInferenceTest, ReshapeTransposeReverse) {
  Instruction* a = Param(F32({2, 3, 4}));
  EXPECT_EQ(Infer(Make(Opcode::kReshape, F32({6, 4}), {a})), "f32[6,4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReshape, F32({5, 4}), {a})),
                        "element count mismatch: f32[2,3,4] has 24 elements but f32[5,4] has 20");
  EXPECT_EQ(Infer(Make(Opcode::kTranspose, {}, {a}, {{"dimensions", Ints({2, 0, 1})}})), "f32[4,2,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kTranspose, {}, {a}, {{"dimensions", Ints({0, 0, 1})}})),
                        "not a permutation");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kTranspose, {}, {a})), "missing required attribute 'dimensions'");
  EXPECT_EQ(Infer(Make(Opcode::kReverse, {}, {a}, {{"dimensions", Ints({0, 2})}})), "f32[2,3,4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReverse, {}, {a}, {{"dimensions", Ints({1, 1})}})), "appears twice");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReverse, {}, {a}, {{"dimensions", Ints({-1})}})), "out of range");
}

TEST_F(ShapeInferenceTest, Slices) {
  Instruction* a = Param(F32({6, 4}));
  auto slice = [](std::vector<SliceRange> r) { return AttrValue::Of(std::move(r)); };
  EXPECT_EQ(Infer(Make(Opcode::kSlice, {}, {a}, {{"slice", slice({{1, 6, 2}, {0, 4, 1}})}})), "f32[3,4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSlice, {}, {a}, {{"slice", slice({{0, 7, 1}, {0, 4, 1}})}})),
                        "limit 7 exceeds size 6");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSlice, {}, {a}, {{"slice", slice({{0, 6, 0}, {0, 4, 1}})}})),
                        "must be positive");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSlice, {}, {a}, {{"slice", slice({{0, 6, 1}})}})), "has 1 ranges");

  Instruction* i = Param(Scalar(PrimitiveType::kS32));
  Instruction* u = Param(Scalar(PrimitiveType::kU32));
  EXPECT_EQ(Infer(Make(Opcode::kDynamicSlice, {}, {a, i, i}, {{"dynamic_slice_sizes", Ints({2, 4})}})), "f32[2,4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDynamicSlice, {}, {a, i}, {{"dynamic_slice_sizes", Ints({2, 4})}})),
                        "expected 2 start indices");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDynamicSlice, {}, {a, i, u}, {{"dynamic_slice_sizes", Ints({2, 4})}})),
                        "same type");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDynamicSlice, {}, {a, i, i}, {{"dynamic_slice_sizes", Ints({2, 5})}})),
                        "slice size 5 exceeds size 4");
  Instruction* vec = Param(Arr(PrimitiveType::kS32, {2}));
  EXPECT_EQ(Infer(Make(Opcode::kDynamicSlice, {}, {a, vec}, {{"dynamic_slice_sizes", Ints({1, 1})}})), "f32[1,1]");

  Instruction* upd = Param(F32({2, 4}));
  Instruction* big = Param(F32({7, 4}));
  EXPECT_EQ(Infer(Make(Opcode::kDynamicUpdateSlice, {}, {a, upd, i, i})), "f32[6,4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDynamicUpdateSlice, {}, {a, big, i, i})),
                        "update dimension 0 of size 7 exceeds operand size 6");
}

TEST_F(ShapeInferenceTest, ConcatenateAndPad) {
  Instruction* a = Param(F32({2, 3}));
  Instruction* b = Param(F32({2, 5}));
  Instruction* c = Param(F32({2}));
  EXPECT_EQ(Infer(Make(Opcode::kConcatenate, {}, {a, b, a}, {{"dimensions", Ints({1})}})), "f32[2,11]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConcatenate, {}, {a, b}, {{"dimensions", Ints({0})}})),
                        "operands differ in dimension 1");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConcatenate, {}, {a, c}, {{"dimensions", Ints({0})}})), "different ranks");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConcatenate, {}, {a, b}, {{"dimensions", Ints({2})}})),
                        "dimension 2 out of range for rank 2");

  Instruction* v = Param(F32({4}));
  Instruction* zero = Param(Scalar(PrimitiveType::kF32));
  auto padding = [](std::vector<PaddingDimension> d) { return AttrValue::Of(PaddingConfig{std::move(d)}); };
  // 4 elements, low -1 (negative trims), high 2, interior 1: 4 + 3*1 - 1 + 2 = 8.
  EXPECT_EQ(Infer(Make(Opcode::kPad, {}, {v, zero}, {{"padding", padding({{-1, 2, 1}})}})), "f32[8]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kPad, {}, {v, zero}, {{"padding", padding({{-9, 0, 0}})}})),
                        "makes dimension 0 negative");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kPad, {}, {v, zero}, {{"padding", padding({{0, 0, -1}})}})),
                        "negative interior padding");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kPad, {}, {v, v}, {{"padding", padding({{0, 0, 0}})}})),
                        "padding value must be a scalar");
  // Overflowing padding is an error, not undefined behaviour.
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kPad, {}, {v, zero}, {{"padding", padding({{0, 0, int64_t{1} << 62}})}})),
                        "overflows");
}

TEST_F(ShapeInferenceTest, SourcesAndTuples) {
  EXPECT_EQ(Infer(Make(Opcode::kIota, Arr(PrimitiveType::kS32, {4, 5}), {}, {{"iota_dimension", AttrValue::Int(1)}})),
            "s32[4,5]");
  EXPECT_ERROR_CONTAINS(
      Infer(Make(Opcode::kIota, Arr(PrimitiveType::kS32, {4}), {}, {{"iota_dimension", AttrValue::Int(1)}})),
      "iota_dimension 1 out of range for rank 1");
  EXPECT_ERROR_CONTAINS(
      Infer(Make(Opcode::kIota, Arr(PrimitiveType::kPred, {4}), {}, {{"iota_dimension", AttrValue::Int(0)}})),
      "element type must be integral");
  Instruction* a = Param(F32({2}));
  Instruction* t = Make(Opcode::kTuple, {}, {a, Param(Shape::Token())});
  EXPECT_EQ(Infer(t), "(f32[2], token[])");
  Instruction* tp = Param(Shape::Tuple({F32({2}), Arr(PrimitiveType::kS32, {})}));
  EXPECT_EQ(Infer(Make(Opcode::kGetTupleElement, {}, {tp}, {{"index", AttrValue::Int(1)}})), "s32[]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kGetTupleElement, {}, {tp}, {{"index", AttrValue::Int(2)}})),
                        "index 2 out of range for tuple");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kGetTupleElement, {}, {a}, {{"index", AttrValue::Int(0)}})),
                        "operand must be a tuple");

  Literal literal(Arr(PrimitiveType::kS32, {3}));
  owned_.push_back(Instruction::CreateConstant("c", std::move(literal)));
  EXPECT_EQ(Infer(owned_.back().get()), "s32[3]");
  EXPECT_EQ(Infer(Param(F32({1, 2}))), "f32[1,2]");
  EXPECT_EQ(Infer(Make(Opcode::kPartitionId, {}, {})), "u32[]");
  EXPECT_EQ(Infer(Make(Opcode::kReplicaId, {}, {})), "u32[]");
  EXPECT_EQ(Infer(Make(Opcode::kRngGetAndUpdateState, {}, {})), "u64[2]");
}

TEST_F(ShapeInferenceTest, DimensionSizesAndTopK) {
  Instruction* a = Param(F32({4, 8}));
  Instruction* n = Param(Scalar(PrimitiveType::kS32));
  EXPECT_EQ(Infer(Make(Opcode::kGetDimensionSize, {}, {a}, {{"dimensions", Ints({1})}})), "s32[]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kGetDimensionSize, {}, {a}, {{"dimensions", Ints({2})}})),
                        "dimension 2 out of range");
  EXPECT_EQ(Infer(Make(Opcode::kSetDimensionSize, {}, {a, n}, {{"dimensions", Ints({1})}})), "f32[4,<=8]");
  EXPECT_EQ(Infer(Make(Opcode::kTopK, {}, {a}, {{"k", AttrValue::Int(3)}})), "(f32[4,3], s32[4,3])");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kTopK, {}, {a}, {{"k", AttrValue::Int(9)}})), "k=9 is out of range");
}

TEST_F(ShapeInferenceTest, Rng) {
  Instruction* lo = Param(Scalar(PrimitiveType::kF32));
  Instruction* hi = Param(Scalar(PrimitiveType::kF32));
  Instruction* ilo = Param(Scalar(PrimitiveType::kS32));
  EXPECT_EQ(Infer(Make(Opcode::kRng, F32({3, 3}), {lo, hi}, {{"distribution", AttrValue::Enum("rng_normal")}})),
            "f32[3,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kRng, Arr(PrimitiveType::kS32, {3}), {ilo, ilo},
                                   {{"distribution", AttrValue::Enum("rng_normal")}})),
                        "rng_normal needs floating-point");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kRng, F32({3}), {lo, ilo})), "same element type");
  Instruction* state = Param(Arr(PrimitiveType::kU64, {2}));
  Shape out = Shape::Tuple({Arr(PrimitiveType::kU64, {2}), Arr(PrimitiveType::kU32, {8})});
  EXPECT_EQ(Infer(Make(Opcode::kRngBitGenerator, out, {state})), "(u64[2], u32[8])");
  Shape bad = Shape::Tuple({Arr(PrimitiveType::kU64, {3}), Arr(PrimitiveType::kU32, {8})});
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kRngBitGenerator, bad, {state})), "does not match the input state");
}

// ---------------------------------------------------------------- gather / scatter

TEST_F(ShapeInferenceTest, Gather) {
  Instruction* operand = Param(F32({3, 4}));
  Instruction* indices = Param(Arr(PrimitiveType::kS32, {5, 1}));
  Attrs attrs = {{"offset_dims", Ints({1})},
                 {"collapsed_slice_dims", Ints({0})},
                 {"start_index_map", Ints({0})},
                 {"index_vector_dim", AttrValue::Int(1)},
                 {"slice_sizes", Ints({1, 4})}};
  EXPECT_EQ(Infer(Make(Opcode::kGather, {}, {operand, indices}, attrs)), "f32[5,4]");
  Attrs bad = attrs;
  bad[4] = {"slice_sizes", Ints({2, 4})};
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kGather, {}, {operand, indices}, bad)),
                        "collapsed dimension 0 has slice size 2 > 1");
  bad = attrs;
  bad[3] = {"index_vector_dim", AttrValue::Int(3)};
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kGather, {}, {operand, indices}, bad)), "index_vector_dim 3 out of range");
  bad = attrs;
  bad[2] = {"start_index_map", Ints({7})};
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kGather, {}, {operand, indices}, bad)), "start_index_map entry 7");

  // Batching dims: operand [B=2, 5], indices [B=2, 3, 1] with a batching pair.
  Instruction* bop = Param(F32({2, 5}));
  Instruction* bidx = Param(Arr(PrimitiveType::kS32, {2, 3, 1}));
  Attrs batched = {{"offset_dims", Ints({})},
                   {"collapsed_slice_dims", Ints({1})},
                   {"start_index_map", Ints({1})},
                   {"operand_batching_dims", Ints({0})},
                   {"start_indices_batching_dims", Ints({0})},
                   {"index_vector_dim", AttrValue::Int(2)},
                   {"slice_sizes", Ints({1, 1})}};
  EXPECT_EQ(Infer(Make(Opcode::kGather, {}, {bop, bidx}, batched)), "f32[2,3]");
}

TEST_F(ShapeInferenceTest, VariadicScatter) {
  Instruction* op0 = Param(F32({3, 4}));
  Instruction* op1 = Param(Arr(PrimitiveType::kS32, {3, 4}));
  Instruction* indices = Param(Arr(PrimitiveType::kS32, {2}));
  Instruction* up0 = Param(F32({2, 4}));
  Instruction* up1 = Param(Arr(PrimitiveType::kS32, {2, 4}));
  Computation* reducer =
      Comp("pair",
           {Scalar(PrimitiveType::kF32), Scalar(PrimitiveType::kS32), Scalar(PrimitiveType::kF32),
            Scalar(PrimitiveType::kS32)},
           [](Computation* c, std::vector<Instruction*> p) {
             return c->AddInstruction(Instruction::Create(
                 Opcode::kTuple, "t", Shape::Tuple({Scalar(PrimitiveType::kF32), Scalar(PrimitiveType::kS32)}),
                 {p[2], p[3]}));
           });
  Attrs attrs = {{"update_window_dims", Ints({1})},
                 {"inserted_window_dims", Ints({0})},
                 {"scatter_dims_to_operand_dims", Ints({0})},
                 {"index_vector_dim", AttrValue::Int(1)}};
  EXPECT_EQ(Infer(Make(Opcode::kScatter, {}, {op0, op1, indices, up0, up1}, attrs, {reducer})), "(f32[3,4], s32[3,4])");
  Computation* single = BinaryComp(PrimitiveType::kF32);
  EXPECT_EQ(Infer(Make(Opcode::kScatter, {}, {op0, indices, up0}, attrs, {single})), "f32[3,4]");
  Instruction* up_bad = Param(F32({3, 4}));
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kScatter, {}, {op0, indices, up_bad}, attrs, {single})),
                        "updates scatter dimension 0 has size 3 but the indices dimension is 2");
  // The reducer must match the element types.
  Computation* wrong = BinaryComp(PrimitiveType::kS32);
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kScatter, {}, {op0, indices, up0}, attrs, {wrong})),
                        "reduction computation");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kScatter, {}, {op0, indices}, attrs, {single})), "odd count");
}

// ---------------------------------------------------------------- dot / convolution / linear algebra

TEST_F(ShapeInferenceTest, Dot) {
  Instruction* lhs = Param(F32({2, 3}));
  Instruction* rhs = Param(F32({3, 4}));
  Attrs mm = {{"lhs_contracting_dims", Ints({1})}, {"rhs_contracting_dims", Ints({0})}};
  EXPECT_EQ(Infer(Make(Opcode::kDot, F32({2, 4}), {lhs, rhs}, mm)), "f32[2,4]");
  // Mixed precision: the result type is the instruction's own (XLA's preferred_element_type).
  Instruction* bl = Param(Arr(PrimitiveType::kBF16, {2, 3}));
  Instruction* br = Param(Arr(PrimitiveType::kBF16, {3, 4}));
  EXPECT_EQ(Infer(Make(Opcode::kDot, F32({2, 4}), {bl, br}, mm)), "f32[2,4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDot, F32({2, 4}), {lhs, rhs},
                                   {{"lhs_contracting_dims", Ints({3})}, {"rhs_contracting_dims", Ints({0})}})),
                        "dot: lhs_contracting_dims 3 out of range for rank 2");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDot, F32({2, 4}), {lhs, rhs},
                                   {{"lhs_contracting_dims", Ints({0})}, {"rhs_contracting_dims", Ints({0})}})),
                        "contracting dimension sizes differ");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDot, F32({2, 4}), {lhs, rhs}, {{"lhs_contracting_dims", Ints({1})}})),
                        "same number of contracting dimensions");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDot, F32({2, 4}), {lhs, rhs},
                                   {{"lhs_contracting_dims", Ints({1, 1})}, {"rhs_contracting_dims", Ints({0, 1})}})),
                        "lhs dimension 1 is used more than once");

  Instruction* bl3 = Param(F32({5, 2, 3}));
  Instruction* br3 = Param(F32({5, 3, 4}));
  Attrs batched = {{"lhs_batch_dims", Ints({0})},
                   {"rhs_batch_dims", Ints({0})},
                   {"lhs_contracting_dims", Ints({2})},
                   {"rhs_contracting_dims", Ints({1})}};
  EXPECT_EQ(Infer(Make(Opcode::kDot, F32({}), {bl3, br3}, batched)), "f32[5,2,4]");
  // No contracting dims: an outer product.
  EXPECT_EQ(Infer(Make(Opcode::kDot, F32({}), {lhs, rhs})), "f32[2,3,3,4]");

  // 2:4 sparse lhs: the stored contracting dim holds half the logical elements.
  Instruction* sl = Param(F32({2, 8}));
  Instruction* sr = Param(F32({16, 4}));
  Instruction* meta = Param(Arr(PrimitiveType::kU16, {2, 1}));
  Attrs sparse = {{"lhs_contracting_dims", Ints({1})},
                  {"rhs_contracting_dims", Ints({0})},
                  {"sparsity", AttrValue::Raw("L.1@2:4")}};
  EXPECT_EQ(Infer(Make(Opcode::kDot, F32({}), {sl, sr, meta}, sparse)), "f32[2,4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kDot, F32({}), {sl, sr}, sparse)), "expected 3 operands");
}

TEST_F(ShapeInferenceTest, RaggedDot) {
  Instruction* lhs = Param(F32({11, 5}));
  Instruction* rhs = Param(F32({3, 5, 7}));
  Instruction* groups = Param(Arr(PrimitiveType::kS32, {3}));
  Attrs attrs = {{"lhs_contracting_dims", Ints({1})},
                 {"rhs_contracting_dims", Ints({1})},
                 {"lhs_ragged_dims", Ints({0})},
                 {"rhs_group_dims", Ints({0})}};
  EXPECT_EQ(Infer(Make(Opcode::kRaggedDot, F32({}), {lhs, rhs, groups}, attrs)), "f32[11,7]");
  Instruction* rhs2 = Param(F32({5, 7}));
  Attrs contracting = {
      {"lhs_contracting_dims", Ints({1})}, {"rhs_contracting_dims", Ints({0})}, {"lhs_ragged_dims", Ints({1})}};
  EXPECT_EQ(Infer(Make(Opcode::kRaggedDot, F32({}), {lhs, rhs2, groups}, contracting)), "f32[3,11,7]");
}

ConvolutionDimensionNumbers NhwcHwio() {
  ConvolutionDimensionNumbers dn;
  dn.input_batch_dimension = 0;
  dn.input_feature_dimension = 3;
  dn.input_spatial_dimensions = {1, 2};
  dn.kernel_spatial_dimensions = {0, 1};
  dn.kernel_input_feature_dimension = 2;
  dn.kernel_output_feature_dimension = 3;
  dn.output_batch_dimension = 0;
  dn.output_feature_dimension = 3;
  dn.output_spatial_dimensions = {1, 2};
  return dn;
}

Window Window2D(int64_t size, int64_t stride, int64_t pad) {
  Window w;
  for (int i = 0; i < 2; ++i) {
    WindowDimension d;
    d.size = size;
    d.stride = stride;
    d.padding_low = d.padding_high = pad;
    w.dimensions.push_back(d);
  }
  return w;
}

TEST_F(ShapeInferenceTest, Convolution) {
  Instruction* input = Param(F32({1, 8, 8, 4}));
  Instruction* kernel = Param(F32({3, 3, 4, 16}));
  Attrs same = {{"dim_labels", AttrValue::Of(NhwcHwio())}, {"window", AttrValue::Of(Window2D(3, 1, 1))}};
  EXPECT_EQ(Infer(Make(Opcode::kConvolution, F32({}), {input, kernel}, same)), "f32[1,8,8,16]");
  Attrs strided = {{"dim_labels", AttrValue::Of(NhwcHwio())}, {"window", AttrValue::Of(Window2D(3, 2, 0))}};
  EXPECT_EQ(Infer(Make(Opcode::kConvolution, F32({}), {input, kernel}, strided)), "f32[1,3,3,16]");
  Window dilated = Window2D(3, 1, 0);
  for (WindowDimension& d : dilated.dimensions) d.base_dilation = 2;  // 8 -> 15 positions, minus 2 = 13
  EXPECT_EQ(Infer(Make(Opcode::kConvolution, F32({}), {input, kernel},
                       {{"dim_labels", AttrValue::Of(NhwcHwio())}, {"window", AttrValue::Of(dilated)}})),
            "f32[1,13,13,16]");
  // Grouped: 4 input features in 2 groups of 2.
  Instruction* gk = Param(F32({3, 3, 2, 16}));
  Attrs grouped = same;
  grouped.push_back({"feature_group_count", AttrValue::Int(2)});
  EXPECT_EQ(Infer(Make(Opcode::kConvolution, F32({}), {input, gk}, grouped)), "f32[1,8,8,16]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConvolution, F32({}), {input, gk}, same)),
                        "input feature size 4 divided by feature_group_count 1");
  Attrs wrong_window = {{"dim_labels", AttrValue::Of(NhwcHwio())}, {"window", AttrValue::Of(Window2D(2, 1, 0))}};
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConvolution, F32({}), {input, kernel}, wrong_window)),
                        "window size 2 in dimension 0 does not match kernel spatial size 3");
  ConvolutionDimensionNumbers bad = NhwcHwio();
  bad.input_spatial_dimensions = {1, 1};
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConvolution, F32({}), {input, kernel},
                                   {{"dim_labels", AttrValue::Of(bad)}, {"window", AttrValue::Of(Window2D(3, 1, 1))}})),
                        "input dimension labels must name each");
  Attrs zero_stride = {{"dim_labels", AttrValue::Of(NhwcHwio())}, {"window", AttrValue::Of(Window2D(3, 0, 0))}};
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConvolution, F32({}), {input, kernel}, zero_stride)),
                        "non-positive stride");
  // batch_group_count divides the batch.
  Instruction* batch_input = Param(F32({4, 8, 8, 4}));
  Attrs bgc = same;
  bgc.push_back({"batch_group_count", AttrValue::Int(4)});
  EXPECT_EQ(Infer(Make(Opcode::kConvolution, F32({}), {batch_input, kernel}, bgc)), "f32[1,8,8,16]");
}

TEST_F(ShapeInferenceTest, FftAndLinearAlgebra) {
  Instruction* real = Param(F32({8, 16}));
  Instruction* cplx = Param(Arr(PrimitiveType::kC64, {8, 9}));
  EXPECT_EQ(Infer(Make(Opcode::kFft, {}, {real}, {{"fft_type", AttrValue::Enum("RFFT")}, {"fft_length", Ints({16})}})),
            "c64[8,9]");
  EXPECT_EQ(Infer(Make(Opcode::kFft, {}, {cplx}, {{"fft_type", AttrValue::Enum("IRFFT")}, {"fft_length", Ints({16})}})),
            "f32[8,16]");
  EXPECT_EQ(Infer(Make(Opcode::kFft, {}, {cplx}, {{"fft_type", AttrValue::Enum("FFT")}, {"fft_length", Ints({9})}})),
            "c64[8,9]");
  EXPECT_ERROR_CONTAINS(
      Infer(Make(Opcode::kFft, {}, {real}, {{"fft_type", AttrValue::Enum("FFT")}, {"fft_length", Ints({16})}})),
      "FFT needs a complex operand");
  EXPECT_ERROR_CONTAINS(
      Infer(Make(Opcode::kFft, {}, {real}, {{"fft_type", AttrValue::Enum("RFFT")}, {"fft_length", Ints({15})}})),
      "must equal fft_length 15");

  Instruction* a = Param(F32({2, 4, 4}));
  Instruction* b = Param(F32({2, 4, 3}));
  Instruction* rect = Param(F32({4, 3}));
  EXPECT_EQ(Infer(Make(Opcode::kTriangularSolve, {}, {a, b}, {{"left_side", AttrValue::Bool(true)}})), "f32[2,4,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kTriangularSolve, {}, {a, b}, {{"left_side", AttrValue::Bool(false)}})),
                        "shared dimension");
  EXPECT_EQ(Infer(Make(Opcode::kCholesky, {}, {a})), "f32[2,4,4]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kCholesky, {}, {rect})), "must be equal");
}

TEST_F(ShapeInferenceTest, BatchNorm) {
  Instruction* x = Param(F32({2, 3, 5}));
  Instruction* v = Param(F32({3}));
  Instruction* w = Param(F32({5}));
  Attrs feature1 = {{"feature_index", AttrValue::Int(1)}, {"epsilon", AttrValue::Float(0.001)}};
  EXPECT_EQ(Infer(Make(Opcode::kBatchNormTraining, {}, {x, v, v}, feature1)), "(f32[2,3,5], f32[3], f32[3])");
  EXPECT_EQ(Infer(Make(Opcode::kBatchNormInference, {}, {x, v, v, v, v}, feature1)), "f32[2,3,5]");
  EXPECT_EQ(Infer(Make(Opcode::kBatchNormGrad, {}, {x, v, v, v, x}, feature1)), "(f32[2,3,5], f32[3], f32[3])");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kBatchNormTraining, {}, {x, w, v}, feature1)),
                        "operand 1 has size 5 but the feature count is 3");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kBatchNormTraining, {}, {x, v, v}, {{"feature_index", AttrValue::Int(3)}})),
                        "feature_index 3 out of range for rank 3");
}

// ---------------------------------------------------------------- called computations

TEST_F(ShapeInferenceTest, ReduceAndReduceWindow) {
  Instruction* a = Param(F32({4, 6}));
  Instruction* b = Param(Arr(PrimitiveType::kS32, {4, 6}));
  Instruction* zero = Param(Scalar(PrimitiveType::kF32));
  Instruction* izero = Param(Scalar(PrimitiveType::kS32));
  Computation* add = BinaryComp(PrimitiveType::kF32);
  EXPECT_EQ(Infer(Make(Opcode::kReduce, {}, {a, zero}, {{"dimensions", Ints({1})}}, {add})), "f32[4]");
  EXPECT_EQ(Infer(Make(Opcode::kReduce, {}, {a, zero}, {{"dimensions", Ints({0, 1})}}, {add})), "f32[]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReduce, {}, {a, zero}, {{"dimensions", Ints({1, 1})}}, {add})),
                        "reduced twice");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReduce, {}, {a, zero}, {{"dimensions", Ints({2})}}, {add})),
                        "dimensions entry 2 out of range for rank 2");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReduce, {}, {a, zero}, {{"dimensions", Ints({0})}})),
                        "expected 1 called computation, got 0");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReduce, {}, {a, izero}, {{"dimensions", Ints({0})}}, {add})), "init value");
  Computation* argmax =
      Comp("argmax",
           {Scalar(PrimitiveType::kF32), Scalar(PrimitiveType::kS32), Scalar(PrimitiveType::kF32),
            Scalar(PrimitiveType::kS32)},
           [](Computation* c, std::vector<Instruction*> p) {
             return c->AddInstruction(Instruction::Create(
                 Opcode::kTuple, "t", Shape::Tuple({Scalar(PrimitiveType::kF32), Scalar(PrimitiveType::kS32)}),
                 {p[0], p[1]}));
           });
  EXPECT_EQ(Infer(Make(Opcode::kReduce, {}, {a, b, zero, izero}, {{"dimensions", Ints({0})}}, {argmax})),
            "(f32[6], s32[6])");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReduce, {}, {a, b, zero, izero}, {{"dimensions", Ints({0})}}, {add})),
                        "reduction computation must take 4 parameters, but takes 2");

  Window w;
  w.dimensions = {WindowDimension{2, 2, 0, 0, 1, 1, false}, WindowDimension{3, 3, 0, 0, 1, 1, false}};
  EXPECT_EQ(Infer(Make(Opcode::kReduceWindow, {}, {a, zero}, {{"window", AttrValue::Of(w)}}, {add})), "f32[2,2]");
  Window w1;
  w1.dimensions = {WindowDimension{2, 2, 0, 0, 1, 1, false}};
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReduceWindow, {}, {a, zero}, {{"window", AttrValue::Of(w1)}}, {add})),
                        "window has 1 dimensions but the base shape f32[4,6] has rank 2");

  Computation* ge = Comp("ge", {Scalar(PrimitiveType::kF32), Scalar(PrimitiveType::kF32)},
                         [](Computation* c, std::vector<Instruction*> p) {
                           return c->AddInstruction(
                               Instruction::Create(Opcode::kCompare, "ge", Scalar(PrimitiveType::kPred), {p[0], p[1]}));
                         });
  Instruction* source = Param(F32({2, 2}));
  EXPECT_EQ(Infer(Make(Opcode::kSelectAndScatter, {}, {a, source, zero}, {{"window", AttrValue::Of(w)}}, {ge, add})),
            "f32[4,6]");
  Instruction* bad_source = Param(F32({3, 2}));
  EXPECT_ERROR_CONTAINS(
      Infer(Make(Opcode::kSelectAndScatter, {}, {a, bad_source, zero}, {{"window", AttrValue::Of(w)}}, {ge, add})),
      "source shape f32[3,2] does not match the windowed operand shape f32[2,2]");
}

TEST_F(ShapeInferenceTest, SortMapCallFusion) {
  Instruction* keys = Param(F32({5}));
  Instruction* vals = Param(Arr(PrimitiveType::kS32, {5}));
  Computation* less = Comp("lt",
                           {Scalar(PrimitiveType::kF32), Scalar(PrimitiveType::kF32), Scalar(PrimitiveType::kS32),
                            Scalar(PrimitiveType::kS32)},
                           [](Computation* c, std::vector<Instruction*> p) {
                             return c->AddInstruction(Instruction::Create(Opcode::kCompare, "lt",
                                                                          Scalar(PrimitiveType::kPred), {p[0], p[1]}));
                           });
  EXPECT_EQ(Infer(Make(Opcode::kSort, {}, {keys, vals}, {{"dimensions", Ints({0})}}, {less})), "(f32[5], s32[5])");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kSort, {}, {keys}, {{"dimensions", Ints({0})}}, {less})),
                        "comparator must take 2 parameters, takes 4");

  Computation* add = BinaryComp(PrimitiveType::kF32);
  EXPECT_EQ(Infer(Make(Opcode::kMap, {}, {keys, keys}, {{"dimensions", Ints({0})}}, {add})), "f32[5]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kMap, {}, {keys, vals}, {{"dimensions", Ints({0})}}, {add})),
                        "mapped computation parameter 1");

  Instruction* x = Param(F32({5}));
  Instruction* s = Param(Scalar(PrimitiveType::kF32));
  EXPECT_EQ(Infer(Make(Opcode::kCall, {}, {s, s}, {}, {add})), "f32[]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kCall, {}, {x, s}, {}, {add})),
                        "operand 0 has shape f32[5] but parameter 0 of the called computation is f32[]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kCall, {}, {s}, {}, {add})),
                        "called computation takes 2 parameters but 1 operands are passed");
  Computation* vec_add = Comp("vadd", {F32({5}), F32({5})}, [](Computation* c, std::vector<Instruction*> p) {
    return c->AddInstruction(Instruction::Create(Opcode::kAdd, "a", F32({5}), {p[0], p[1]}));
  });
  EXPECT_EQ(Infer(Make(Opcode::kFusion, {}, {x, x}, {}, {vec_add})), "f32[5]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kFusion, {}, {x, vals}, {}, {vec_add})), "operand 1 has shape s32[5]");
  Instruction* aliased =
      Make(Opcode::kFusion, F32({5}), {x, x, vals},
           {{"output_to_operand_aliasing", AttrValue::Of(std::vector<OutputOperandAlias>{{{}, 2, {}}})}}, {vec_add});
  EXPECT_ERROR_CONTAINS(Infer(aliased), "aliased output {} f32[5] and operand 2 s32[5] differ");
  EXPECT_EQ(Infer(Make(Opcode::kCustomCall, Shape::Tuple({F32({1}), Shape::Token()}), {x})), "(f32[1], token[])");
}

TEST_F(ShapeInferenceTest, WhileAndConditional) {
  Shape state = Shape::Tuple({Scalar(PrimitiveType::kS32), F32({3})});
  Computation* cond = Comp("cond", {state}, [&](Computation* c, std::vector<Instruction*> p) {
    return c->AddInstruction(Instruction::CreateConstant("t", Literal(Scalar(PrimitiveType::kPred))));
  });
  Computation* body = Comp("body", {state}, [](Computation*, std::vector<Instruction*> p) { return p[0]; });
  Instruction* init = Param(state);
  EXPECT_EQ(Infer(Make(Opcode::kWhile, {}, {init}, {}, {cond, body})), "(s32[], f32[3])");
  Instruction* wrong_init = Param(F32({3}));
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kWhile, {}, {wrong_init}, {}, {cond, body})),
                        "operand shape f32[3] does not match the body parameter");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kWhile, {}, {init}, {}, {body, body})), "condition must return pred[]");

  Computation* neg = Comp("neg", {F32({3})}, [](Computation* c, std::vector<Instruction*> p) {
    return c->AddInstruction(Instruction::Create(Opcode::kNegate, "n", F32({3}), {p[0]}));
  });
  Computation* id = Comp("id", {F32({3})}, [](Computation*, std::vector<Instruction*> p) { return p[0]; });
  Computation* other = Comp("other", {F32({3})}, [](Computation* c, std::vector<Instruction*> p) {
    return c->AddInstruction(Instruction::Create(Opcode::kTuple, "t", Shape::Tuple({F32({3})}), {p[0]}));
  });
  Instruction* pred = Param(Scalar(PrimitiveType::kPred));
  Instruction* index = Param(Scalar(PrimitiveType::kS32));
  Instruction* v = Param(F32({3}));
  EXPECT_EQ(Infer(Make(Opcode::kConditional, {}, {pred, v, v}, {}, {neg, id})), "f32[3]");
  EXPECT_EQ(Infer(Make(Opcode::kConditional, {}, {index, v, v, v}, {}, {neg, id, neg})), "f32[3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConditional, {}, {pred, v, v, v}, {}, {neg, id, neg})),
                        "needs 2 branch computations, got 3");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConditional, {}, {index, v, v}, {}, {neg, other})),
                        "branch 0 returns f32[3] but branch 1 returns (f32[3])");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConditional, {}, {v, v, v}, {}, {neg, id})),
                        "branch selector must be pred[] or s32[]");
}

TEST_F(ShapeInferenceTest, AsyncOps) {
  Computation* neg = Comp("wrapped", {F32({3})}, [](Computation* c, std::vector<Instruction*> p) {
    return c->AddInstruction(Instruction::Create(Opcode::kNegate, "n", F32({3}), {p[0]}));
  });
  Instruction* x = Param(F32({3}));
  Shape async_shape = Shape::Tuple({Shape::Tuple({F32({3})}), F32({3}), Arr(PrimitiveType::kU32, {})});
  Instruction* start = Make(Opcode::kAsyncStart, async_shape, {x}, {}, {neg});
  EXPECT_EQ(Infer(start), "((f32[3]), f32[3], u32[])");
  Instruction* update = Make(Opcode::kAsyncUpdate, async_shape, {start}, {}, {neg});
  EXPECT_EQ(Infer(update), "((f32[3]), f32[3], u32[])");
  // async-done without calls= finds the wrapped computation through its operand.
  EXPECT_EQ(Infer(Make(Opcode::kAsyncDone, F32({3}), {update})), "f32[3]");
  Instruction* bad = Param(Arr(PrimitiveType::kS32, {3}));
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kAsyncStart, async_shape, {bad}, {}, {neg})),
                        "operand 0 has shape s32[3] but the wrapped computation takes f32[3]");
}

// ---------------------------------------------------------------- collectives and I/O

TEST_F(ShapeInferenceTest, Collectives) {
  Instruction* a = Param(F32({2, 3}));
  Instruction* b = Param(Arr(PrimitiveType::kS32, {4}));
  EXPECT_EQ(Infer(Make(Opcode::kAllReduce, {}, {a})), "f32[2,3]");
  EXPECT_EQ(Infer(Make(Opcode::kAllReduce, {}, {a, b})), "(f32[2,3], s32[4])");
  ReplicaGroups groups;
  groups.groups = {{0, 1, 2, 3}};
  EXPECT_EQ(Infer(Make(Opcode::kAllGather, F32({2, 12}), {a},
                       {{"dimensions", Ints({1})}, {"replica_groups", AttrValue::Of(groups)}})),
            "f32[2,12]");
  // The shard count comes from the result; a result that is not a multiple of the operand does not fit.
  EXPECT_EQ(Infer(Make(Opcode::kAllGather, F32({2, 7}), {a}, {{"dimensions", Ints({1})}})), "f32[2,9]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kAllGather, F32({2, 9}), {a},
                                   {{"dimensions", Ints({1})}, {"replica_groups", AttrValue::Of(groups)}})),
                        "shapes imply 3 shards but replica groups have 4 members");
  EXPECT_EQ(
      Infer(Make(Opcode::kAllGatherStart, Shape::Tuple({F32({2, 3}), F32({4, 3})}), {a}, {{"dimensions", Ints({0})}})),
      "(f32[2,3], f32[4,3])");
  Instruction* big = Param(F32({8, 3}));
  EXPECT_EQ(Infer(Make(Opcode::kReduceScatter, F32({2, 3}), {big}, {{"dimensions", Ints({0})}})), "f32[2,3]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReduceScatter, F32({3, 3}), {big}, {{"dimensions", Ints({0})}})),
                        "not divisible by the shard count 3");
  EXPECT_EQ(Infer(Make(Opcode::kAllToAll, {}, {a}, {{"dimensions", Ints({0})}})), "f32[2,3]");
  EXPECT_ERROR_CONTAINS(
      Infer(Make(Opcode::kAllToAll, {}, {a}, {{"dimensions", Ints({1})}, {"replica_groups", AttrValue::Of(groups)}})),
      "split dimension size 3 is not divisible by the split count 4");
  EXPECT_EQ(Infer(Make(Opcode::kAllToAll, {}, {a, a})), "(f32[2,3], f32[2,3])");
  EXPECT_EQ(Infer(Make(Opcode::kCollectivePermute, {}, {a})), "f32[2,3]");
  EXPECT_EQ(
      Infer(Make(Opcode::kCollectivePermuteStart,
                 Shape::Tuple({F32({2, 3}), F32({2, 3}), Arr(PrimitiveType::kU32, {}), Arr(PrimitiveType::kU32, {})}),
                 {a})),
      "(f32[2,3], f32[2,3], u32[], u32[])");
  Instruction* cps = Param(Shape::Tuple({F32({2, 3}), F32({2, 3})}));
  EXPECT_EQ(Infer(Make(Opcode::kCollectivePermuteDone, {}, {cps})), "f32[2,3]");
  EXPECT_EQ(Infer(Make(Opcode::kAllReduceDone, {}, {a})), "f32[2,3]");
}

TEST_F(ShapeInferenceTest, TokensAndHostTransfer) {
  Instruction* tok = Param(Shape::Token());
  Instruction* a = Param(F32({2}));
  EXPECT_EQ(Infer(Make(Opcode::kAfterAll, {}, {tok, tok})), "token[]");
  EXPECT_EQ(Infer(Make(Opcode::kAddDependency, {}, {a, tok})), "f32[2]");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kAddDependency, {}, {a, a})), "operand 1 must be a token");
  EXPECT_EQ(Infer(Make(Opcode::kInfeed, Shape::Tuple({F32({2}), Shape::Token()}), {tok})), "(f32[2], token[])");
  EXPECT_EQ(Infer(Make(Opcode::kOutfeed, Shape::Token(), {a, tok})), "token[]");
  Instruction* send =
      Make(Opcode::kSend, Shape::Tuple({F32({2}), Arr(PrimitiveType::kU32, {}), Shape::Token()}), {a, tok});
  EXPECT_EQ(Infer(send), "(f32[2], u32[], token[])");
  EXPECT_EQ(Infer(Make(Opcode::kSendDone, {}, {send})), "token[]");
  Instruction* recv =
      Make(Opcode::kRecv, Shape::Tuple({F32({2}), Arr(PrimitiveType::kU32, {}), Shape::Token()}), {tok});
  EXPECT_EQ(Infer(recv), "(f32[2], u32[], token[])");
  EXPECT_EQ(Infer(Make(Opcode::kRecvDone, {}, {recv})), "(f32[2], token[])");
  EXPECT_EQ(Infer(Make(Opcode::kCopyStart, {}, {a})), "(f32[2], f32[2], u32[])");
  Instruction* cs = Param(Shape::Tuple({F32({2}), F32({2}), Arr(PrimitiveType::kU32, {})}));
  EXPECT_EQ(Infer(Make(Opcode::kCopyDone, {}, {cs})), "f32[2]");
}

TEST_F(ShapeInferenceTest, UnimplementedOpsReportClearly) {
  Instruction* a = Param(F32({2}));
  absl::StatusOr<Shape> result = InferShape(*Make(Opcode::kScan, F32({2}), {a}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(result.status().message(), "shape inference not implemented for scan");
}

TEST_F(ShapeInferenceTest, MalformedInputIsAnErrorNotACrash) {
  Shape broken = F32({2});
  broken.dynamic_dimensions.clear();
  Instruction* bad = Param(broken);
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kNegate, {}, {bad})), "operand 0 has a malformed shape");
  Shape negative = F32({-3});
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kNegate, {}, {Param(negative)})), "dimension 0 has invalid size -3");
  Instruction* a = Param(F32({2, 2}));
  // Wrong attribute kinds, missing attributes and absurd values.
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kTranspose, {}, {a}, {{"dimensions", AttrValue::Int(1)}})),
                        "must be an integer list");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kGetTupleElement, {}, {}, {{"index", AttrValue::Int(0)}})),
                        "expected 1 operand, got 0");
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kConcatenate, {}, {a}, {{"dimensions", Ints({int64_t{1} << 40})}})),
                        "out of range");
  Window huge;
  huge.dimensions = {WindowDimension{1, 1, std::numeric_limits<int64_t>::max(), 1, 1, 1, false},
                     WindowDimension{1, 1, 0, 0, 1, 1, false}};
  Instruction* zero = Param(Scalar(PrimitiveType::kF32));
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kReduceWindow, {}, {a, zero}, {{"window", AttrValue::Of(huge)}},
                                   {BinaryComp(PrimitiveType::kF32)})),
                        "overflows");
  // A called computation without a root.
  comps_.push_back(std::make_unique<Computation>("empty"));
  EXPECT_ERROR_CONTAINS(Infer(Make(Opcode::kCall, {}, {a}, {}, {comps_.back().get()})), "has no root");
}

// Every opcode against arbitrary operands, attributes and callees: inference must return a shape or an error, never
// crash or trip a sanitizer. Deterministic (fixed seed) so failures reproduce.
TEST_F(ShapeInferenceTest, ArbitraryInputsNeverCrash) {
  std::mt19937_64 rng(12345);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  const std::vector<int64_t> interesting = {0,
                                            1,
                                            2,
                                            3,
                                            4,
                                            -1,
                                            -7,
                                            int64_t{1} << 40,
                                            std::numeric_limits<int64_t>::max(),
                                            std::numeric_limits<int64_t>::min()};
  auto number = [&]() { return pick(3) == 0 ? interesting[pick(interesting.size())] : pick(5); };
  const std::vector<PrimitiveType> types = {PrimitiveType::kF32, PrimitiveType::kS32, PrimitiveType::kPred,
                                            PrimitiveType::kC64, PrimitiveType::kU8,  PrimitiveType::kBF16};
  std::function<Shape(int)> shape = [&](int depth) -> Shape {
    switch (pick(depth > 0 ? 6 : 5)) {
      case 0:
        return Shape::Token();
      case 5: {
        std::vector<Shape> elements;
        for (int64_t i = pick(3); i > 0; --i) elements.push_back(shape(depth - 1));
        return Shape::Tuple(std::move(elements));
      }
      default: {
        std::vector<int64_t> dims;
        for (int64_t i = pick(4); i > 0; --i) dims.push_back(pick(5));
        return Arr(types[pick(types.size())], dims);
      }
    }
  };
  auto ints = [&]() {
    std::vector<int64_t> v;
    for (int64_t i = pick(4); i > 0; --i) v.push_back(number());
    return v;
  };
  const std::vector<std::string> int_list_names = {"dimensions",
                                                   "dynamic_slice_sizes",
                                                   "lhs_contracting_dims",
                                                   "rhs_contracting_dims",
                                                   "lhs_batch_dims",
                                                   "rhs_batch_dims",
                                                   "offset_dims",
                                                   "collapsed_slice_dims",
                                                   "start_index_map",
                                                   "slice_sizes",
                                                   "update_window_dims",
                                                   "inserted_window_dims",
                                                   "scatter_dims_to_operand_dims",
                                                   "fft_length",
                                                   "operand_batching_dims",
                                                   "start_indices_batching_dims",
                                                   "lhs_ragged_dims",
                                                   "rhs_group_dims"};
  const std::vector<std::string> int_names = {
      "index",         "iota_dimension", "feature_group_count", "batch_group_count", "k",
      "exponent_bits", "mantissa_bits",  "index_vector_dim",    "feature_index",     "channel_id"};
  auto window = [&]() {
    Window w;
    for (int64_t i = pick(4); i > 0; --i) {
      w.dimensions.push_back(WindowDimension{number(), number(), number(), number(), number(), number(), false});
    }
    return w;
  };
  // A pool of callees, some malformed.
  std::vector<Computation*> pool = {BinaryComp(PrimitiveType::kF32), BinaryComp(PrimitiveType::kS32)};
  pool.push_back(Comp("tuple_root", {F32({2})}, [](Computation* c, std::vector<Instruction*> p) {
    return c->AddInstruction(Instruction::Create(Opcode::kTuple, "t", Shape::Tuple({F32({2})}), {p[0]}));
  }));
  comps_.push_back(std::make_unique<Computation>("rootless"));
  pool.push_back(comps_.back().get());

  int inferred = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    const Opcode op = static_cast<Opcode>(iteration % kNumOpcodes);
    std::vector<Instruction*> operands;
    for (int64_t i = pick(5); i > 0; --i) operands.push_back(Param(shape(2)));
    Attrs attrs;
    for (int64_t i = pick(4); i > 0; --i) {
      switch (pick(8)) {
        case 0:
          attrs.push_back({int_names[pick(int_names.size())], AttrValue::Int(number())});
          break;
        case 1:
          attrs.push_back({"window", AttrValue::Of(window())});
          break;
        case 2: {
          ConvolutionDimensionNumbers dn;
          dn.input_batch_dimension = number();
          dn.input_feature_dimension = number();
          dn.input_spatial_dimensions = ints();
          dn.kernel_input_feature_dimension = number();
          dn.kernel_output_feature_dimension = number();
          dn.kernel_spatial_dimensions = ints();
          dn.output_batch_dimension = number();
          dn.output_feature_dimension = number();
          dn.output_spatial_dimensions = ints();
          attrs.push_back({"dim_labels", AttrValue::Of(dn)});
          break;
        }
        case 3: {
          std::vector<SliceRange> ranges;
          for (int64_t j = pick(4); j > 0; --j) ranges.push_back({number(), number(), number()});
          attrs.push_back({"slice", AttrValue::Of(ranges)});
          break;
        }
        case 4: {
          PaddingConfig config;
          for (int64_t j = pick(4); j > 0; --j) config.dimensions.push_back({number(), number(), number()});
          attrs.push_back({"padding", AttrValue::Of(config)});
          break;
        }
        case 5: {
          ReplicaGroups groups;
          if (pick(2)) {
            groups.iota = IotaList{ints(), ints(), {}};
          } else {
            groups.groups = {ints(), ints()};
          }
          attrs.push_back({"replica_groups", AttrValue::Of(groups)});
          break;
        }
        case 6:
          attrs.push_back({int_list_names[pick(int_list_names.size())], AttrValue::Int(number())});
          break;
        default:
          attrs.push_back({int_list_names[pick(int_list_names.size())], Ints(ints())});
          break;
      }
    }
    if (pick(4) == 0) attrs.push_back({"sparsity", AttrValue::Raw(pick(2) ? "L.1@2:4" : "R.9@0:-1_x")});
    std::vector<Computation*> called;
    for (int64_t i = pick(4); i > 0; --i) called.push_back(pool[pick(pool.size())]);
    Instruction* inst = Make(op, shape(2), operands, attrs, called);
    absl::StatusOr<Shape> result = InferShape(*inst);
    if (result.ok()) ++inferred;
  }
  // The sweep is not vacuous: some random combinations are valid.
  EXPECT_GT(inferred, 1000);
}

}  // namespace
}  // namespace xlac
