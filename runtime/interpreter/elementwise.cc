// Array-level elementwise ops: unary and binary arithmetic, compare, select, clamp, complex/real/imag, is-finite.
#include <algorithm>
#include <cmath>

#include "runtime/cpu/xlac_runtime_complex.h"
#include "runtime/interpreter/fast_kernels.h"
#include "runtime/interpreter/kernels.h"

namespace xlac::interp {
namespace {

// Index of operand element for result element i: scalars broadcast.
inline int64_t At(const Literal& lit, int64_t i) { return lit.element_count() == 1 ? 0 : i; }

// Element-parallel loops over big arrays: independent elements, so the split never changes a result.
constexpr int64_t kChunk = int64_t{1} << 16;
template <typename F>
void ForChunks(int64_t n, int64_t threads, const F& body) {
  int64_t chunks = (n + kChunk - 1) / kChunk;
  ParallelBlocks(chunks, threads, [&](int64_t c) { body(c * kChunk, std::min(n, (c + 1) * kChunk)); });
}

// The compute type of f32 and f64 is their storage type: kernels read and write literal storage directly.
template <typename C>
bool StoredAsCompute(PrimitiveType t) {
  if constexpr (std::is_same_v<C, float>) return t == PrimitiveType::kF32;
  if constexpr (std::is_same_v<C, double>) return t == PrimitiveType::kF64;
  return false;
}
template <typename C>
const C* Typed(const Literal& lit) {
  return reinterpret_cast<const C*>(lit.raw_data());
}

absl::StatusOr<Literal> EvalUnary(const Instruction& inst, const Literal& x, int64_t threads) {
  PrimitiveType type = x.shape().element_type;
  Opcode op = inst.opcode();
  // Every element is written below, except by imag of a real operand, which is zeros.
  Literal result =
      op == Opcode::kImag && !IsComplexType(type) ? Literal(inst.shape()) : Literal::CreateUninitialized(inst.shape());
  int64_t n = result.element_count();
  PrimitiveType out_type = inst.shape().element_type;
  // Ops whose result type differs from the operand's.
  if (op == Opcode::kIsFinite) {
    return DispatchKind(KindOf(type), [&](auto tag) -> absl::StatusOr<Literal> {
      using C = decltype(tag);
      if constexpr (kIsFloat<C>) {
        for (int64_t i = 0; i < n; ++i) StoreOne<bool>(result, i, std::isfinite(LoadOne<C>(x, i)));
        return std::move(result);
      } else {
        return Error(inst, "is-finite needs a floating-point operand, got {}", PrimitiveTypeName(type));
      }
    });
  }
  if (IsComplexType(type) && (op == Opcode::kAbs || op == Opcode::kReal || op == Opcode::kImag)) {
    auto run = [&](auto tag) {
      using C = decltype(tag);
      for (int64_t i = 0; i < n; ++i) {
        C v = LoadOne<C>(x, i);
        using R = typename C::value_type;
        const R* parts = reinterpret_cast<const R*>(&v);
        R r = op == Opcode::kReal ? v.real() : v.imag();
        if constexpr (std::is_same_v<C, c64>) {
          if (op == Opcode::kAbs) r = xlac_rt_c64_abs(parts);  // shared with compiled code
          StoreOne<float>(result, i, r);
        } else {
          if (op == Opcode::kAbs) r = xlac_rt_c128_abs(parts);
          StoreOne<double>(result, i, r);
        }
      }
    };
    if (type == PrimitiveType::kC64)
      run(c64{});
    else
      run(c128{});
    return result;
  }
  if (op == Opcode::kReal) return x;
  if (op == Opcode::kImag) return result;  // zeros of the real type
  if (out_type != type) {
    return Error(inst, "result type {} differs from operand type {}", PrimitiveTypeName(out_type),
                 PrimitiveTypeName(type));
  }
  return DispatchKind(KindOf(type), [&](auto tag) -> absl::StatusOr<Literal> {
    using C = decltype(tag);
    UnaryFn<C> fn = GetUnaryFn<C>(op);
    if (fn == nullptr) return Unsupported(inst, "not defined for element type {}", PrimitiveTypeName(type));
    if (StoredAsCompute<C>(type)) {
      const C* px = Typed<C>(x);
      C* out = reinterpret_cast<C*>(result.mutable_raw_data());
      ForChunks(n, threads, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = fn(px[i], type);
      });
      return std::move(result);
    }
    std::vector<C> v = LoadAll<C>(x);
    for (size_t i = 0; i < v.size(); ++i) v[i] = fn(v[i], type);
    StoreAll<C>(result, v);
    return std::move(result);
  });
}

absl::StatusOr<Literal> EvalBinary(const Instruction& inst, const Literal& a, const Literal& b, int64_t threads) {
  PrimitiveType type = a.shape().element_type;
  Opcode op = inst.opcode();
  if (b.shape().element_type != type) {
    return Error(inst, "operand types differ: {} and {}", PrimitiveTypeName(type),
                 PrimitiveTypeName(b.shape().element_type));
  }
  Literal result = Literal::CreateUninitialized(inst.shape());  // every element is written
  int64_t n = result.element_count();
  if (op == Opcode::kComplex) {
    auto run = [&](auto tag) {
      using R = decltype(tag);
      for (int64_t i = 0; i < n; ++i) {
        StoreOne(result, i, std::complex<R>(LoadOne<R>(a, At(a, i)), LoadOne<R>(b, At(b, i))));
      }
    };
    if (type == PrimitiveType::kF32)
      run(float{});
    else if (type == PrimitiveType::kF64)
      run(double{});
    else
      return Error(inst, "complex needs f32 or f64 parts, got {}", PrimitiveTypeName(type));
    return result;
  }
  if (inst.shape().element_type != type) {
    return Error(inst, "result type {} differs from operand type {}", PrimitiveTypeName(inst.shape().element_type),
                 PrimitiveTypeName(type));
  }
  if (type == PrimitiveType::kPred && (op == Opcode::kAnd || op == Opcode::kOr || op == Opcode::kXor)) {
    // Bytes as LoadOne<bool> reads them (nonzero is true) and StoreOne<bool> writes them (0 or 1).
    const uint8_t* pa = a.raw_data();
    const uint8_t* pb = b.raw_data();
    int64_t ia = a.element_count() == 1 ? 0 : 1, ib = b.element_count() == 1 ? 0 : 1;
    uint8_t* out = result.mutable_raw_data();
    auto loop = [&](auto f) {
      ForChunks(n, threads, [&](int64_t s, int64_t e) {
        if (ia == 1 && ib == 1) {
          for (int64_t i = s; i < e; ++i) out[i] = f(pa[i] != 0, pb[i] != 0);
        } else {
          for (int64_t i = s; i < e; ++i) out[i] = f(pa[i * ia] != 0, pb[i * ib] != 0);
        }
      });
    };
    if (op == Opcode::kAnd)
      loop([](bool x, bool y) -> uint8_t { return x && y; });
    else if (op == Opcode::kOr)
      loop([](bool x, bool y) -> uint8_t { return x || y; });
    else
      loop([](bool x, bool y) -> uint8_t { return x != y; });
    return result;
  }
  return DispatchKind(KindOf(type), [&](auto tag) -> absl::StatusOr<Literal> {
    using C = decltype(tag);
    BinaryFn<C> fn = GetBinaryFn<C>(op);
    if (fn == nullptr) return Unsupported(inst, "not defined for element type {}", PrimitiveTypeName(type));
    if (StoredAsCompute<C>(type)) {
      const C* pa = Typed<C>(a);
      const C* pb = Typed<C>(b);
      int64_t ia = a.element_count() == 1 ? 0 : 1, ib = b.element_count() == 1 ? 0 : 1;
      C* out = reinterpret_cast<C*>(result.mutable_raw_data());
      // The arithmetic ops inline (the same IEEE operation as their kernels); the others call theirs.
      auto loop = [&](auto f) {
        ForChunks(n, threads, [&](int64_t s, int64_t e) {
          if (ia == 1 && ib == 1) {
            for (int64_t i = s; i < e; ++i) out[i] = f(pa[i], pb[i]);
          } else if (ia == 1) {
            C y = pb[0];
            for (int64_t i = s; i < e; ++i) out[i] = f(pa[i], y);
          } else if (ib == 1) {
            C x = pa[0];
            for (int64_t i = s; i < e; ++i) out[i] = f(x, pb[i]);
          } else {
            for (int64_t i = s; i < e; ++i) out[i] = f(pa[i * ia], pb[i * ib]);
          }
        });
      };
      switch (op) {
        case Opcode::kAdd:
          loop([](C x, C y) { return x + y; });
          break;
        case Opcode::kSubtract:
          loop([](C x, C y) { return x - y; });
          break;
        case Opcode::kMultiply:
          loop([](C x, C y) { return x * y; });
          break;
        case Opcode::kDivide:
          loop([](C x, C y) { return x / y; });
          break;
        default:
          loop([&](C x, C y) { return fn(x, y, type); });
      }
      return std::move(result);
    }
    std::vector<C> va = LoadAll<C>(a);
    std::vector<C> vb = LoadAll<C>(b);
    std::vector<C> out(static_cast<size_t>(n));
    bool sa = va.size() == 1, sb = vb.size() == 1;
    for (int64_t i = 0; i < n; ++i) out[i] = fn(va[sa ? 0 : i], vb[sb ? 0 : i], type);
    StoreAll<C>(result, out);
    return std::move(result);
  });
}

absl::StatusOr<Literal> EvalCompare(const Instruction& inst, const Literal& a, const Literal& b, int64_t threads) {
  PrimitiveType type = a.shape().element_type;
  std::optional<CompareDirection> dir = ParseDirection(TextAttr(inst, "direction"));
  if (!dir) return Error(inst, "bad comparison direction '{}'", std::string(TextAttr(inst, "direction")));
  bool total = TextAttr(inst, "type") == "TOTALORDER";
  Literal result = Literal::CreateUninitialized(inst.shape());  // every element is written
  int64_t n = result.element_count();
  return DispatchKind(KindOf(type), [&](auto tag) -> absl::StatusOr<Literal> {
    using C = decltype(tag);
    CompareFn<C> fn = GetCompareFn<C>(*dir, total);
    if (fn == nullptr) return Unsupported(inst, "direction not defined for {}", PrimitiveTypeName(type));
    if constexpr (kIsFloat<C>) {
      if (StoredAsCompute<C>(type)) {
        const C* pa = Typed<C>(a);
        const C* pb = Typed<C>(b);
        int64_t ia = a.element_count() == 1 ? 0 : 1, ib = b.element_count() == 1 ? 0 : 1;
        uint8_t* out = result.mutable_raw_data();
        // The IEEE comparisons inline (what the kernels return); total order calls its kernel.
        auto loop = [&](auto f) {
          ForChunks(n, threads, [&](int64_t s, int64_t e) {
            if (ia == 1 && ib == 1) {
              for (int64_t i = s; i < e; ++i) out[i] = f(pa[i], pb[i]) ? 1 : 0;
            } else if (ia == 1) {
              C y = pb[0];
              for (int64_t i = s; i < e; ++i) out[i] = f(pa[i], y) ? 1 : 0;
            } else {
              for (int64_t i = s; i < e; ++i) out[i] = f(pa[i * ia], pb[i * ib]) ? 1 : 0;
            }
          });
        };
        if (total) {
          loop([&](C x, C y) { return fn(x, y); });
          return std::move(result);
        }
        switch (*dir) {
          case CompareDirection::kEq:
            loop([](C x, C y) { return x == y; });
            break;
          case CompareDirection::kNe:
            loop([](C x, C y) { return x != y; });
            break;
          case CompareDirection::kLt:
            loop([](C x, C y) { return x < y; });
            break;
          case CompareDirection::kGt:
            loop([](C x, C y) { return x > y; });
            break;
          case CompareDirection::kLe:
            loop([](C x, C y) { return x <= y; });
            break;
          case CompareDirection::kGe:
            loop([](C x, C y) { return x >= y; });
            break;
        }
        return std::move(result);
      }
    }
    std::vector<C> va = LoadAll<C>(a);
    std::vector<C> vb = LoadAll<C>(b);
    bool sa = va.size() == 1, sb = vb.size() == 1;
    uint8_t* out = result.mutable_raw_data();
    for (int64_t i = 0; i < n; ++i) out[i] = fn(va[sa ? 0 : i], vb[sb ? 0 : i]) ? 1 : 0;
    return std::move(result);
  });
}

absl::StatusOr<Literal> EvalSelect(const Instruction& inst, const Literal& pred, const Literal& t, const Literal& f,
                                   int64_t threads) {
  if (inst.shape().IsTuple()) {
    // Legacy tuple select: a scalar predicate picks a whole operand.
    return LoadOne<bool>(pred, 0) ? t : f;
  }
  Literal result = Literal::CreateUninitialized(inst.shape());  // every element is written
  int64_t n = result.element_count();
  int64_t width = ByteWidth(inst.shape().element_type);
  auto typed = [&](auto tag) {
    using W = decltype(tag);
    const uint8_t* p = pred.raw_data();
    const W* pt = reinterpret_cast<const W*>(t.raw_data());
    const W* pf = reinterpret_cast<const W*>(f.raw_data());
    int64_t ip = pred.element_count() == 1 ? 0 : 1, it = t.element_count() == 1 ? 0 : 1;
    int64_t jf = f.element_count() == 1 ? 0 : 1;
    W* out = reinterpret_cast<W*>(result.mutable_raw_data());
    ForChunks(n, threads, [&](int64_t s, int64_t e) {
      if (ip == 1 && it == 1 && jf == 1) {
        for (int64_t i = s; i < e; ++i) out[i] = p[i] != 0 ? pt[i] : pf[i];
      } else if (ip == 1 && it == 1) {  // select(mask, x, broadcast zero): a ReLU's gradient
        W y = pf[0];
        for (int64_t i = s; i < e; ++i) out[i] = p[i] != 0 ? pt[i] : y;
      } else if (ip == 1 && jf == 1) {
        W x = pt[0];
        for (int64_t i = s; i < e; ++i) out[i] = p[i] != 0 ? x : pf[i];
      } else {
        for (int64_t i = s; i < e; ++i) out[i] = p[i * ip] != 0 ? pt[i * it] : pf[i * jf];
      }
    });
  };
  // Whole-byte elements of 4 or 8 bytes (pred storage is one byte per element).
  if (pred.shape().element_type == PrimitiveType::kPred && (width == 4 || width == 8) &&
      t.shape().element_type == inst.shape().element_type && f.shape().element_type == inst.shape().element_type) {
    if (width == 4)
      typed(uint32_t{});
    else
      typed(uint64_t{});
    return result;
  }
  for (int64_t i = 0; i < n; ++i) {
    bool p = LoadOne<bool>(pred, At(pred, i));
    const Literal& src = p ? t : f;
    CopyElement(src, At(src, i), result, i, width);
  }
  return result;
}

absl::StatusOr<Literal> EvalClamp(const Instruction& inst, const Literal& lo, const Literal& x, const Literal& hi,
                                  int64_t threads) {
  PrimitiveType type = x.shape().element_type;
  Literal result = Literal::CreateUninitialized(inst.shape());  // every element is written
  int64_t n = result.element_count();
  return DispatchKind(KindOf(type), [&](auto tag) -> absl::StatusOr<Literal> {
    using C = decltype(tag);
    if constexpr (kIsComplex<C>) {
      return Unsupported(inst, "clamp is not defined for complex types");
    } else {
      if (StoredAsCompute<C>(type) && lo.shape().element_type == type && hi.shape().element_type == type) {
        const C* pl = Typed<C>(lo);
        const C* px = Typed<C>(x);
        const C* ph = Typed<C>(hi);
        C* out = reinterpret_cast<C*>(result.mutable_raw_data());
        bool sl = lo.element_count() == 1, sx = x.element_count() == 1, sh = hi.element_count() == 1;
        ForChunks(n, threads, [&](int64_t s, int64_t e) {
          if (sl && !sx && sh) {  // clamp(scalar, array, scalar): ReLU6
            C l = pl[0], h = ph[0];
            for (int64_t i = s; i < e; ++i) out[i] = ClampValue<C>(l, px[i], h);
          } else {
            for (int64_t i = s; i < e; ++i) {
              out[i] = ClampValue<C>(pl[sl ? 0 : i], px[sx ? 0 : i], ph[sh ? 0 : i]);
            }
          }
        });
        return std::move(result);
      }
      for (int64_t i = 0; i < n; ++i) {
        StoreOne<C>(result, i,
                    ClampValue<C>(LoadOne<C>(lo, At(lo, i)), LoadOne<C>(x, At(x, i)), LoadOne<C>(hi, At(hi, i))));
      }
      return std::move(result);
    }
  });
}

}  // namespace

absl::StatusOr<Literal> EvalElementwise(const Instruction& inst, Operands operands, int64_t threads) {
  Opcode op = inst.opcode();
  switch (op) {
    case Opcode::kCompare:
      return EvalCompare(inst, *operands[0], *operands[1], threads);
    case Opcode::kSelect:
      return EvalSelect(inst, *operands[0], *operands[1], *operands[2], threads);
    case Opcode::kClamp:
      return EvalClamp(inst, *operands[0], *operands[1], *operands[2], threads);
    default:
      break;
  }
  if (IsElementwiseUnary(op)) return EvalUnary(inst, *operands[0], threads);
  if (IsElementwiseBinary(op)) return EvalBinary(inst, *operands[0], *operands[1], threads);
  return Unsupported(inst, "not an elementwise op");
}

}  // namespace xlac::interp
