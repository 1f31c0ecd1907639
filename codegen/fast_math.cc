// Polynomial coefficients are Chebyshev fits (mpmath.chebyfit, 50 digits) of the reduced functions named next to
// them, except the f32 erf, which is the rational approximation XLA and Eigen use for float erf. Range reductions
// are Cody-Waite with constants whose leading parts have trailing zero bits, so n * C_hi is exact with or without
// FMA contraction.
#include "codegen/fast_math.h"

#include <cmath>
#include <initializer_list>
#include <limits>

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace xlac::codegen {
namespace {

using llvm::Value;

// Arithmetic over one floating-point type (scalar or vector) and the integer type of the same shape and width.
class Fm {
 public:
  Fm(llvm::IRBuilder<>& b, llvm::Type* type) : b_(b), t_(type) {
    dbl_ = type->getScalarType()->isDoubleTy();
    it_ = Like(b.getIntNTy(dbl_ ? 64 : 32));
    // The target machines keep FPOpFusion::Strict (exact mode must never contract), which lowers llvm.fmuladd to a
    // multiply and an add; the approximations ask for llvm.fma explicitly where the function's target has it.
    llvm::Function* fn = b.GetInsertBlock() != nullptr ? b.GetInsertBlock()->getParent() : nullptr;
    if (fn != nullptr && fn->hasFnAttribute("target-features")) {
      llvm::StringRef features = fn->getFnAttribute("target-features").getValueAsString();
      fma_ = features.contains("+fma,") || features.ends_with("+fma") || features.contains("+avx512f");
    }
  }
  bool dbl() const { return dbl_; }
  llvm::Type* type() const { return t_; }
  llvm::Type* int_type() const { return it_; }
  llvm::IRBuilder<>& b() { return b_; }
  // `scalar` with this value's vector shape.
  llvm::Type* Like(llvm::Type* scalar) const {
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(t_)) return llvm::VectorType::get(scalar, v->getElementCount());
    return scalar;
  }

  Value* C(double v) { return llvm::ConstantFP::get(t_, v); }
  Value* I(int64_t v) { return llvm::ConstantInt::get(it_, static_cast<uint64_t>(v), true); }
  Value* Add(Value* a, Value* c) { return b_.CreateFAdd(a, c); }
  Value* Sub(Value* a, Value* c) { return b_.CreateFSub(a, c); }
  Value* Mul(Value* a, Value* c) { return b_.CreateFMul(a, c); }
  Value* Div(Value* a, Value* c) { return b_.CreateFDiv(a, c); }
  Value* Neg(Value* a) { return b_.CreateFNeg(a); }
  // a * c + d, fused (one rounding) where the target has FMA.
  Value* Fma(Value* a, Value* c, Value* d) {
    return b_.CreateIntrinsic(fma_ ? llvm::Intrinsic::fma : llvm::Intrinsic::fmuladd, {t_}, {a, c, d});
  }
  Value* Sel(Value* cond, Value* a, Value* c) { return b_.CreateSelect(cond, a, c); }
  Value* Abs(Value* a) { return b_.CreateIntrinsic(llvm::Intrinsic::fabs, {t_}, {a}); }
  Value* CopySign(Value* mag, Value* sign) { return b_.CreateIntrinsic(llvm::Intrinsic::copysign, {t_}, {mag, sign}); }
  Value* IsNan(Value* a) { return b_.CreateFCmpUNO(a, a); }
  Value* Lt(Value* a, Value* c) { return b_.CreateFCmpOLT(a, c); }
  Value* Gt(Value* a, Value* c) { return b_.CreateFCmpOGT(a, c); }
  Value* Ge(Value* a, Value* c) { return b_.CreateFCmpOGE(a, c); }
  Value* Eq(Value* a, Value* c) { return b_.CreateFCmpOEQ(a, c); }
  Value* Bits(Value* a) { return b_.CreateBitCast(a, it_); }
  Value* FromBits(Value* i) { return b_.CreateBitCast(i, t_); }
  // NaN passes through (ordered compares are false for NaN).
  Value* Clamp(Value* x, double lo, double hi) {
    x = Sel(Lt(x, C(lo)), C(lo), x);
    return Sel(Gt(x, C(hi)), C(hi), x);
  }
  // Horner's rule; coefficients from the highest degree down.
  Value* Poly(Value* x, std::initializer_list<double> coefficients) {
    auto it = coefficients.begin();
    Value* p = C(*it++);
    for (; it != coefficients.end(); ++it) p = Fma(p, x, C(*it));
    return p;
  }
  // Round to nearest even for |v| < 2^22 (f32) / 2^51 (f64) without a libm call or SSE4.1's roundps.
  Value* Round(Value* v) {
    Value* magic = C(dbl_ ? 6755399441055744.0 : 12582912.0);
    return Sub(Add(v, magic), magic);
  }
  // 2^k for integer k in the normal exponent range.
  Value* Pow2(Value* k) {
    int mant = dbl_ ? 52 : 23, bias = dbl_ ? 1023 : 127;
    return FromBits(b_.CreateShl(b_.CreateAdd(k, I(bias)), I(mant)));
  }
  Value* ToInt(Value* integral) { return b_.CreateFPToSI(integral, it_); }

 private:
  bool fma_ = false;
  llvm::IRBuilder<>& b_;
  llvm::Type* t_;
  llvm::Type* it_;
  bool dbl_;
};

// Fast-math flags set on the builder by a caller (reassociating reductions) would break the compensated steps.
struct PlainFloat {
  explicit PlainFloat(llvm::IRBuilder<>& b) : guard(b) { b.clearFastMathFlags(); }
  llvm::IRBuilder<>::FastMathFlagGuard guard;
};

llvm::Type* DoubleLike(Fm& f) { return f.Like(f.b().getDoubleTy()); }

// exp(r) = 1 + r + r^2 * ExpTail(r) on |r| <= ln2/2.
Value* ExpTail(Fm& f, Value* r) {
  if (f.dbl()) {
    return f.Poly(r, {2.0914679376583935e-09, 2.510520637395701e-08, 2.7557273661348637e-07, 2.7557255425746435e-06,
                      2.4801587325533363e-05, 0.00019841269874800493, 0.0013888888888883752, 0.008333333333326141,
                      0.04166666666666667, 0.1666666666666667, 0.5});
  }
  return f.Poly(r, {0.001392617611993558, 0.008363173074513711, 0.041666554662050534, 0.1666657702559799, 0.5});
}

// x = k ln2 + r with |r| <= ln2/2 (x already clamped so that k fits the exponent arithmetic). k comes out both as a
// float and as an integer: adding 1.5 * 2^mantissa_bits rounds x / ln2 to an integer held in the low mantissa bits, so
// the integer is a subtraction of bit patterns. That needs no fptosi, which would be poison for NaN and cost a
// compare, a select and a conversion per element.
void ReduceLn2(Fm& f, Value* x, Value*& kf, Value*& k, Value*& r) {
  Value* magic = f.C(f.dbl() ? 6755399441055744.0 : 12582912.0);
  Value* t = f.Fma(x, f.C(1.4426950408889634), magic);
  kf = f.Sub(t, magic);
  k = f.b().CreateSub(f.Bits(t), f.Bits(magic));
  double hi = f.dbl() ? 0.6931471803691238 : 0.693359375;
  double lo = f.dbl() ? 1.9082149292705877e-10 : -2.1219444005469057e-4;
  r = f.Fma(kf, f.C(-hi), x);
  r = f.Fma(kf, f.C(-lo), r);
}

Value* ExpImpl(Fm& f, Value* x) {
  Value* xc = f.Clamp(x, f.dbl() ? -746.0 : -104.0, f.dbl() ? 710.0 : 89.0);
  Value *kf, *k, *r;
  ReduceLn2(f, xc, kf, k, r);
  Value* p = f.Add(f.Fma(f.Mul(r, r), ExpTail(f, r), r), f.C(1));
  // Two scale steps so that 2^k for k just outside the normal range still overflows or underflows correctly (one
  // rounding, into the denormals).
  Value* k1 = f.b().CreateAShr(k, f.I(1));
  Value* k2 = f.b().CreateSub(k, k1);
  // A NaN x needs no select of its own: the clamp passes it through, so r, p and the product are NaN whatever
  // garbage k holds (NaN times any value, 0 and inf included, is NaN).
  return f.Mul(f.Mul(p, f.Pow2(k1)), f.Pow2(k2));
}

Value* Expm1Impl(Fm& f, Value* x) {
  Value* xc = f.Clamp(x, f.dbl() ? -40.0 : -30.0, f.dbl() ? 710.0 : 89.0);
  Value *kf, *k, *r;
  ReduceLn2(f, xc, kf, k, r);
  Value* q = f.Fma(f.Mul(r, r), ExpTail(f, r), r);  // expm1(r), relative accuracy near 0
  // expm1(x) = 2^k q + (2^k - 1) = 2 (t q + (t - 1/2)) with t = 2^(k-1), which stays finite for k = max exponent + 1.
  Value* t = f.Pow2(f.b().CreateSub(k, f.I(1)));
  Value* result = f.Mul(f.C(2), f.Add(f.Mul(t, q), f.Sub(t, f.C(0.5))));
  // expm1(-0) = -0 (the formula gives +0); a NaN x comes out NaN as in ExpImpl.
  return f.Sel(f.Eq(x, f.C(0)), x, result);
}

// log(x) for x > 0 finite (including denormals); other inputs give unspecified finite values or NaN.
Value* LogCore(Fm& f, Value* x) {
  llvm::IRBuilder<>& b = f.b();
  bool d = f.dbl();
  Value* denormal = f.Lt(x, f.C(d ? 0x1p-1022 : 0x1p-126));
  Value* xs = f.Sel(denormal, f.Mul(x, f.C(d ? 0x1p54 : 0x1p25)), x);
  Value* adjust = f.Sel(denormal, f.C(d ? -54.0 : -25.0), f.C(0));
  // x = 2^k m with m in [sqrt(1/2), sqrt(2)).
  int64_t one = d ? 0x3ff0000000000000LL : 0x3f800000LL;
  int64_t sqrt_half = d ? 0x3fe6a09e00000000LL : 0x3f3504f3LL;
  int64_t mant_mask = d ? 0x000fffffffffffffLL : 0x007fffffLL;
  Value* i = b.CreateAdd(f.Bits(xs), f.I(one - sqrt_half));
  Value* k = b.CreateSub(b.CreateAShr(i, f.I(d ? 52 : 23)), f.I(d ? 1023 : 127));
  Value* m = f.FromBits(b.CreateAdd(b.CreateAnd(i, f.I(mant_mask)), f.I(sqrt_half)));
  Value* dk = f.Add(b.CreateSIToFP(k, f.type()), adjust);
  // log(1 + g) = 2 atanh(s) = 2s + s R(s^2), s = g / (2 + g); written as g - hfsq + s (hfsq + R) for accuracy.
  Value* g = f.Sub(m, f.C(1));
  Value* s = f.Div(g, f.Add(f.C(2), g));
  Value* z = f.Mul(s, s);
  Value* poly = d ? f.Poly(z, {0.13086626147840102, 0.13268773138656886, 0.15386239702814658, 0.18181795640132906,
                               0.22222222391713917, 0.28571428570803614, 0.4000000000000088, 0.6666666666666666})
                  : f.Poly(z, {0.23330467216303835, 0.28550820815960665, 0.40000121839806124, 0.6666666655449709});
  Value* rz = f.Mul(z, poly);
  Value* hfsq = f.Mul(f.C(0.5), f.Mul(g, g));
  double ln2_hi = d ? 0.6931471803691238 : 6.9313812256e-01;
  double ln2_lo = d ? 1.9082149292705877e-10 : 9.0580006145e-06;
  Value* result = f.Fma(dk, f.C(ln2_lo), f.Mul(s, f.Add(hfsq, rz)));
  result = f.Add(f.Sub(result, hfsq), g);
  return f.Fma(dk, f.C(ln2_hi), result);
}

Value* LogImpl(Fm& f, Value* x) {
  Value* result = LogCore(f, x);
  result = f.Sel(f.Eq(x, f.C(0)), f.C(-INFINITY), result);
  result = f.Sel(f.Lt(x, f.C(0)), f.C(NAN), result);
  result = f.Sel(f.Eq(x, f.C(INFINITY)), x, result);
  return f.Sel(f.IsNan(x), x, result);
}

Value* Log1pImpl(Fm& f, Value* x) {
  // log(1 + x) = log(u) + (x - (u - 1)) / u with u = fl(1 + x): the quotient restores what the rounding of u lost.
  Value* u = f.Add(f.C(1), x);
  Value* correction = f.Div(f.Sub(x, f.Sub(u, f.C(1))), u);
  Value* result = f.Add(LogImpl(f, u), correction);
  result = f.Sel(f.Eq(u, f.C(1)), x, result);  // |x| below half an ulp of 1, and +-0
  result = f.Sel(f.Eq(u, f.C(0)), f.C(-INFINITY), result);
  result = f.Sel(f.Lt(u, f.C(0)), f.C(NAN), result);
  result = f.Sel(f.Eq(x, f.C(INFINITY)), x, result);
  return f.Sel(f.IsNan(x), x, result);
}

Value* TanhImpl(Fm& f, Value* x) {
  // tanh|x| = -t / (t + 2) with t = expm1(-2|x|) in (-1, 0]: no overflow, relative accuracy near 0, saturation at 1.
  Value* t = Expm1Impl(f, f.Mul(f.C(-2), f.Abs(x)));
  Value* result = f.Div(f.Neg(t), f.Add(t, f.C(2)));
  return f.CopySign(result, x);
}

Value* LogisticImpl(Fm& f, Value* x) {
  // 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: the exponential never overflows.
  Value* e = ExpImpl(f, f.Neg(f.Abs(x)));
  Value* numerator = f.Sel(f.Ge(x, f.C(0)), f.C(1), e);
  return f.Div(numerator, f.Add(f.C(1), e));
}

Value* Erf32(Fm& f, Value* x) {
  Value* xc = f.Clamp(x, -4.0, 4.0);
  Value* z = f.Mul(xc, xc);
  Value* p = f.Poly(z, {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                        -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02});
  Value* q = f.Poly(z, {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
                        -1.42647390514189e-02});
  // x (p / q), not (x p) / q: x p would lose bits for denormal x.
  Value* result = f.Mul(xc, f.Div(p, q));
  return f.Clamp(result, -1.0, 1.0);
}

Value* Erf64(Fm& f, Value* x) {
  Value* a = f.Abs(x);
  // |x| < 1: erf(x) = x P(x^2).
  Value* small = f.Mul(x, f.Poly(f.Mul(x, x), {-7.795898827002142e-10, 1.3720064546777686e-08, -1.6208483801871705e-07,
                                               1.6447424703317362e-06, -1.492473690741966e-05, 0.00012055294904839707,
                                               -0.0008548325975389692, 0.0052239776071164225, -0.02686617064323777,
                                               0.11283791670945006, -0.37612638903183543, 1.1283791670955126}));
  // 1 <= |x| < 6: erf = 1 - e^(-x^2) g(|x|), g = erfc(x) e^(x^2) fitted on three pieces in (|x| - start).
  static constexpr double kPieces[3][16] = {
      {-4.932844202000261e-08, 5.503452916734836e-07, -3.1522452760843683e-06, 1.2836483113994172e-05,
       -4.3357779716536384e-05, 0.00013242221093930076, -0.0003813111350425037, 0.001050021599116543,
       -0.0027689947657034866, 0.006970128175453143, -0.016661867091832087, 0.03757229603000046, -0.07922696893090875,
       0.15437156137160005, -0.27321201478389495, 0.427583576155807},
      {-6.08256809180353e-10, 8.390839301126493e-09, -5.918726899639458e-08, 2.9565148405929364e-07,
       -1.222520008301596e-06, 4.578862265018889e-06, -1.6261838511566207e-05, 5.571299578897625e-05,
       -0.0001847729645677964, 0.0005924686270774695, -0.0018316640352021838, 0.005440738509613289,
       -0.01546063776233386, 0.041802752603454146, -0.10679646185348854, 0.25539567631050575},
      {-1.4753011917062674e-12, 3.925330680984812e-11, -5.037935004552849e-10, 4.235271918479614e-09,
       -2.693521409448264e-08, 1.4274863406131425e-07, -6.773465571149425e-07, 3.0205491738256273e-06,
       -1.2990788927784101e-05, 5.4412827228959134e-05, -0.0002223796761234298, 0.0008860038475059027,
       -0.003435471188873442, 0.012937290873943087, -0.04719940232087842, 0.16633534842682032}};
  Value* ac = f.Clamp(a, 1.0, 6.0);
  Value* first = f.Lt(ac, f.C(2));
  Value* second = f.Lt(ac, f.C(3.25));
  auto pick = [&](double c0, double c1, double c2) { return f.Sel(first, f.C(c0), f.Sel(second, f.C(c1), f.C(c2))); };
  Value* t = f.Sub(ac, pick(1.0, 2.0, 3.25));
  Value* g = pick(kPieces[0][0], kPieces[1][0], kPieces[2][0]);
  for (int i = 1; i < 16; ++i) g = f.Fma(g, t, pick(kPieces[0][i], kPieces[1][i], kPieces[2][i]));
  Value* erfc = f.Mul(ExpImpl(f, f.Neg(f.Mul(ac, ac))), g);
  Value* large = f.Sel(f.Ge(a, f.C(6)), f.C(1), f.Sub(f.C(1), erfc));
  large = f.CopySign(large, x);
  Value* result = f.Sel(f.Lt(a, f.C(1)), small, large);
  return f.Sel(f.IsNan(x), x, result);
}

// sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4.
Value* SinPoly(Fm& f, Value* r, Value* z) {
  Value* s =
      f.dbl() ? f.Poly(z, {-7.586697117706918e-13, 1.6058531618986147e-10, -2.5052106232447578e-08,
                           2.7557319219339167e-06, -0.00019841269841265065, 0.008333333333333331, -0.16666666666666666})
              : f.Poly(z, {-0.00019587890880412386, 0.008332748270629749, -0.1666666466231438});
  return f.Fma(f.Mul(r, z), s, r);
}

Value* CosPoly(Fm& f, Value* z) {
  Value* c =
      f.dbl()
          ? f.Poly(z, {4.7458719020432915e-14, -1.1470460887609959e-11, 2.087675579108042e-09, -2.7557319221402824e-07,
                       2.4801587301584645e-05, -0.0013888888888888887, 0.041666666666666664})
          : f.Poly(z, {2.4547942085071572e-05, -0.0013888303035894866, 0.04166666465950221});
  return f.Fma(f.Mul(z, z), c, f.Fma(z, f.C(-0.5), f.C(1)));
}

// 2^s mod 2 pi for s = 0..104 in three parts of at most 26 bits each, so that M * part is exact in f64 for a 24-bit
// integer M: an f32 x = M 2^s reduces to M (2^s mod 2 pi) < 2^24 2 pi, within the Cody-Waite range below.
// clang-format off
constexpr double kTwoPowModTwoPi[105 * 3] = {
    1.0, 0.0, 0.0,
    2.0, 0.0, 0.0,
    4.0, 0.0, 0.0,
    1.7168146669864655, 2.58339478698133e-08, 1.9915985002059197e-16,
    3.433629333972931, 5.16678957396266e-08, 3.9831970004118395e-16,
    0.5840734541416168, 9.960450686463673e-09, 1.0762083040283467e-16,
    1.1681469082832336, 1.9920901372927347e-08, 2.1524166080566933e-16,
    2.3362938165664673, 3.984180274585469e-08, 4.3048332161133866e-16,
    4.672587633132935, 7.968360549170939e-08, 8.609666432226773e-16,
    3.0619900822639465, 3.618954824702314e-08, 5.888255069157588e-16,
    6.123980164527893, 7.237909649404628e-08, 1.1776510138315177e-15,
    5.964775085449219, 8.118517591526597e-08, 3.3401582843331437e-16,
    5.64636492729187, 9.879733298134852e-08, 4.2310229703715814e-16,
    5.009544730186462, 1.4812358006821569e-08, 1.5718602439478305e-16,
    3.7359041571617126, 2.5656341939850336e-08, 6.944268896009545e-17,
    1.1886230409145355, 1.7541986974123347e-08, 3.380452279407829e-16,
    2.377246081829071, 3.5083973948246694e-08, 6.760904558815658e-16,
    4.754492163658142, 7.016794789649339e-08, 1.3521809117631316e-15,
    3.2257991433143616, 1.7158234388858773e-08, 2.3898641444647925e-16,
    0.16841301321983337, 5.457725382740364e-10, 1.0998864138456587e-17,
    0.33682602643966675, 1.0915450765480728e-09, 2.1997728276913175e-17,
    0.6736520528793335, 2.1830901530961455e-09, 4.399545655382635e-17,
    1.347304105758667, 4.366180306192291e-09, 8.79909131076527e-17,
    2.694608211517334, 8.732360612384582e-09, 1.759818262153054e-16,
    5.389216423034668, 1.7464721224769164e-08, 3.519636524306108e-16,
    4.495247483253479, 9.056571315113615e-08, 4.58997945031751e-16,
    2.7073097825050354, 5.795376267769825e-08, 6.730665302340313e-16,
    5.414619565010071, 1.159075253553965e-07, 1.3461330604680626e-15,
    4.546054005622864, 4.9032744087185165e-08, 6.709799217064041e-16,
    2.80892276763916, 3.449247021336532e-08, 2.0885206388321233e-16,
    5.61784553527832, 6.898494042673065e-08, 4.1770412776642467e-16,
    4.952505826950073, 7.439686200427786e-08, 5.904788957033786e-16,
    3.621826469898224, 2.5616061272160096e-08, 4.7850011877161456e-17,
    0.9604676812887192, 2.5602647224509667e-09, 1.7304117618625757e-17,
    1.9209353625774384, 5.120529444901933e-09, 3.4608235237251514e-17,
    3.8418707251548767, 1.0241058889803867e-08, 6.921647047450303e-17,
    1.4005561470985413, 1.6513743261725722e-08, 3.3759279096959803e-16,
    2.8011122941970825, 3.3027486523451444e-08, 6.751855819391961e-16,
    5.602224588394165, 6.605497304690289e-08, 1.3503711638783921e-15,
    4.921263933181763, 6.853692902097919e-08, 6.794561285270632e-16,
    3.559342682361603, 1.3896195527607347e-08, 3.7598725994992215e-18,
    0.8355000764131546, 8.922855343485026e-09, 2.0667959521959041e-16,
    1.6710001528263092, 1.784571068697005e-08, 4.1335919043918083e-16,
    3.3420003056526184, 3.56914213739401e-08, 8.267183808783617e-16,
    0.40081537514925003, 3.5924470342951764e-10, 6.8508333379926285e-18,
    0.8016307502985001, 7.184894068590353e-10, 1.3701666675985257e-17,
    1.6032615005970001, 1.4369788137180706e-09, 2.7403333351970514e-17,
    3.2065230011940002, 2.873957627436141e-09, 5.480666670394103e-17,
    0.12986069917678833, 1.7795410423016023e-09, 3.4618516565559846e-18,
    0.25972139835357666, 3.5590820846032045e-09, 6.923703313111969e-18,
    0.5194427967071533, 7.118164169206409e-09, 1.3847406626223939e-17,
    1.0388855934143066, 1.4236328338412818e-08, 2.7694813252447877e-17,
    2.0777711868286133, 2.8472656676825636e-08, 5.5389626504895754e-17,
    4.155542373657227, 5.694531335365127e-08, 1.1077925300979151e-16,
    2.0278995037078857, 5.03176069699407e-08, 8.648075658902376e-16,
    4.0557990074157715, 1.006352139398814e-07, 1.7296151317804752e-15,
    1.8284128904342651, 1.8488122588422584e-08, 1.0567643478104146e-16,
    3.6568257808685303, 3.697624517684517e-08, 2.1135286956208292e-16,
    1.0304663181304932, 1.037947150450691e-08, 1.7777637929469518e-16,
    2.0609326362609863, 2.075894300901382e-08, 3.5555275858939036e-16,
    4.121865272521973, 4.151788601802764e-08, 7.111055171787807e-16,
    1.960545301437378, 1.946275407505027e-08, 2.891032548279656e-16,
    3.921090602874756, 3.892550815010054e-08, 5.782065096559312e-16,
    1.5589959621429443, 1.4277998339196074e-08, 2.3305239782266665e-17,
    3.1179919242858887, 2.8555996678392148e-08, 4.661047956453333e-17,
    6.235983848571777, 5.7111993356784296e-08, 9.322095912906666e-17,
    6.188782453536987, 5.0650966976206746e-08, 8.296909781287879e-16,
    6.094379663467407, 3.7728915991408485e-08, 5.2627417672798e-16,
    5.905574083328247, 1.1884813799767358e-08, 1.4148517885139539e-16,
    5.527962803840637, 7.940589696886491e-08, 1.370308627423508e-15,
    4.772740364074707, 9.523877686490323e-08, 7.193310556172949e-16,
    3.2622956037521362, 7.695246440064807e-09, 8.350972677996254e-17,
    0.2414059154689312, 2.462478276843427e-10, 5.356820577341173e-18,
    0.4828118309378624, 4.924956553686854e-10, 1.0713641154682347e-17,
    0.9656236618757248, 9.849913107373709e-10, 2.1427282309364693e-17,
    1.9312473237514496, 1.9699826214747418e-09, 4.2854564618729387e-17,
    3.862494647502899, 3.9399652429494836e-09, 8.570912923745877e-17,
    1.4418039917945862, 3.911556301083863e-09, 3.751120110796257e-17,
    2.8836079835891724, 7.823112602167726e-09, 7.502240221592514e-17,
    5.767215967178345, 1.564622520433545e-08, 1.500448044318503e-16,
    5.2512465715408325, 8.69287202220903e-08, 9.433386687343552e-16,
    4.219307899475098, 1.1028442159499718e-07, 1.6417479776392397e-15,
    2.1554306745529175, 3.778653745456495e-08, 3.740313363486331e-16,
    4.310861349105835, 7.55730749091299e-08, 7.480626726972662e-16,
    2.3385375142097473, 2.796848708186417e-08, 3.6301756586493656e-16,
    4.677075028419495, 5.593697416372834e-08, 7.260351317298731e-16,
    3.070964813232422, 4.8300930366451666e-08, 3.1896248393015025e-16,
    6.141929626464844, 9.660186073290333e-08, 6.379249678603005e-16,
    6.00067412853241, 1.0421413954020409e-08, 1.4274215619100522e-16,
    5.718162894248962, 7.647909860963864e-08, 4.055495255253981e-17,
    5.153140544891357, 8.938517659373701e-08, 1.6125373846758595e-15,
    4.0230958461761475, 1.1519733611464744e-07, 1.2037885701219978e-15,
    1.7630065977573395, 1.7810043217991733e-08, 3.862909410142745e-16,
    3.526013195514679, 3.562008643598347e-08, 7.72581882028549e-16,
    0.7688411474227905, 7.667155133006531e-09, 1.9001137960247088e-16,
    1.537682294845581, 1.5334310266013063e-08, 3.8002275920494176e-16,
    3.075364589691162, 3.0668620532026125e-08, 7.600455184098835e-16,
    6.150729179382324, 6.133724106405225e-08, 1.520091036819767e-15,
    6.018273115158081, 5.910146594345633e-08, 1.3071745470968757e-16,
    5.753360986709595, 5.462991303772924e-08, 1.650554958990453e-17,
    5.223536729812622, 4.568680633809663e-08, 6.762601590504636e-16,
    4.163888216018677, 2.7800594715188254e-08, 2.1941253857133145e-16,
    2.0445911288261414, 5.1632815356583706e-08, 1.9389571731319223e-16,
    4.089182257652283, 1.0326563071316741e-07, 3.8779143462638446e-16,
    1.8951793909072876, 2.3748953470459355e-08, 8.656429957323569e-17,
};
// clang-format on

// The table as a private global of the module being emitted, and its entries at `index` (gathered for vectors).
Value* LoadTwoPowModTwoPi(Fm& d, Value* index) {
  llvm::IRBuilder<>& b = d.b();
  llvm::Module* module = b.GetInsertBlock()->getModule();
  const char* name = "xlac.fast_math.two_pow_mod_two_pi";
  llvm::GlobalVariable* table = module->getNamedGlobal(name);
  if (table == nullptr) {
    llvm::Constant* init = llvm::ConstantDataArray::get(module->getContext(), llvm::ArrayRef<double>(kTwoPowModTwoPi));
    table = new llvm::GlobalVariable(*module, init->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                     init, name);
  }
  Value* pointer = b.CreateGEP(b.getDoubleTy(), table, index);
  if (index->getType()->isVectorTy()) return b.CreateMaskedGather(d.type(), pointer, llvm::Align(8));
  return b.CreateLoad(b.getDoubleTy(), pointer);
}

// sin (quadrant_offset 0) or cos (1). f32 reduces in f64 over its whole range (the table above, then Cody-Waite
// with n < 2^26); f64 uses Cody-Waite alone, exact for |x| < 2^20 pi/2.
Value* SinCosImpl(Fm& f, Value* x, int quadrant_offset) {
  llvm::IRBuilder<>& b = f.b();
  Fm d(b, DoubleLike(f));
  Value* n;
  Value* r;
  if (f.dbl()) {
    n = d.Round(d.Mul(x, d.C(0.6366197723675814)));
    r = d.Fma(n, d.C(-1.5707963267341256), x);
    r = d.Fma(n, d.C(-6.077100506303966e-11), r);
    r = d.Fma(n, d.C(-2.0222662487959506e-21), r);
  } else {
    // x = M 2^s with s = max(exponent - 23, 0); M is x itself below 2^24.
    Value* biased = b.CreateAnd(b.CreateLShr(f.Bits(x), f.I(23)), f.I(0xff));
    Value* s = b.CreateSub(biased, f.I(127 + 23));
    s = b.CreateSelect(b.CreateICmpSLT(s, f.I(0)), f.I(0), s);
    s = b.CreateSelect(b.CreateICmpSGT(s, f.I(104)), f.I(104), s);  // inf and NaN: selected away below
    Value* m = b.CreateFPExt(f.Mul(x, f.Pow2(b.CreateNeg(s))), d.type());
    Value* index = b.CreateMul(b.CreateZExt(s, d.int_type()), d.I(3));
    Value* y1 = d.Mul(m, LoadTwoPowModTwoPi(d, index));
    Value* y2 = d.Mul(m, LoadTwoPowModTwoPi(d, b.CreateAdd(index, d.I(1))));
    Value* y3 = d.Mul(m, LoadTwoPowModTwoPi(d, b.CreateAdd(index, d.I(2))));
    n = d.Round(d.Mul(d.Add(y1, y2), d.C(0.6366197723675814)));
    r = d.Fma(n, d.C(-1.570796325802803), y1);  // exact: n < 2^26 and the constant has 27 bits
    r = d.Add(r, y2);
    r = d.Fma(n, d.C(-9.920935739593517e-10), r);
    r = d.Add(r, y3);
    r = d.Fma(n, d.C(-5.721188726109832e-18), r);
  }
  Value* nq = d.Sel(d.IsNan(n), d.C(0), d.Clamp(n, -0x1p52, 0x1p52));
  Value* q = b.CreateAnd(b.CreateAdd(d.ToInt(nq), d.I(quadrant_offset)), d.I(3));
  if (!f.dbl()) {
    r = b.CreateFPTrunc(r, f.type());
    q = b.CreateTrunc(q, f.int_type());
  }
  // Beyond the reduction's range r is meaningless; clamping it keeps the result in [-1, 1] (no effect in range).
  r = f.Clamp(r, -0.79, 0.79);
  Value* z = f.Mul(r, r);
  Value* odd = b.CreateICmpNE(b.CreateAnd(q, f.I(1)), f.I(0));
  Value* negate = b.CreateICmpNE(b.CreateAnd(q, f.I(2)), f.I(0));
  Value* result = f.Sel(odd, CosPoly(f, z), SinPoly(f, r, z));
  result = f.Sel(negate, f.Neg(result), result);
  if (quadrant_offset == 0) result = f.Sel(f.Eq(x, f.C(0)), x, result);
  // inf and NaN give NaN.
  return f.Sel(f.b().CreateFCmpUEQ(f.Abs(x), f.C(INFINITY)), f.Sub(x, x), result);
}

Value* Pow32(Fm& f, Value* x, Value* y) {
  llvm::IRBuilder<>& b = f.b();
  Fm d(b, DoubleLike(f));
  Value* xd = b.CreateFPExt(x, d.type());
  Value* yd = b.CreateFPExt(y, d.type());
  // In f64, y log|x| carries ~29 more bits than f32 needs, so exp's argument error stays far below an f32 ulp.
  Value* magnitude = b.CreateFPTrunc(ExpImpl(d, d.Mul(yd, LogImpl(d, d.Abs(xd)))), f.type());
  // f32 integers beyond 2^24 are even; clamping keeps the magic-number rounding valid.
  Value* yc = d.Clamp(yd, -0x1p50, 0x1p50);
  Value* is_int = d.Eq(d.Round(yc), yc);
  Value* half = d.Mul(yc, d.C(0.5));
  Value* is_odd = b.CreateAnd(is_int, b.CreateFCmpUNE(d.Round(half), half));
  Value* sign_bit = b.CreateICmpSLT(f.Bits(x), f.I(0));
  Value* result = f.Sel(b.CreateAnd(sign_bit, is_odd), f.Neg(magnitude), magnitude);
  Value* negative_finite = b.CreateAnd(f.Lt(x, f.C(0)), f.Gt(x, f.C(-INFINITY)));
  result = f.Sel(b.CreateAnd(negative_finite, b.CreateNot(is_int)), f.C(NAN), result);
  Value* unit_inf = b.CreateAnd(f.Eq(f.Abs(x), f.C(1)), f.Eq(f.Abs(y), f.C(INFINITY)));
  Value* one = b.CreateOr(b.CreateOr(f.Eq(x, f.C(1)), f.Eq(y, f.C(0))), unit_inf);
  return f.Sel(one, f.C(1), result);
}

// Cube root of a > 0 normal (f64): a 5-bit estimate from the exponent bits, then Halley steps (cubic convergence).
Value* CbrtPositive(Fm& d, Value* a, int steps) {
  llvm::IRBuilder<>& b = d.b();
  llvm::Type* i32 = d.Like(b.getInt32Ty());
  Value* hi = b.CreateTrunc(b.CreateLShr(d.Bits(a), d.I(32)), i32);
  hi = b.CreateAdd(b.CreateUDiv(hi, llvm::ConstantInt::get(i32, 3)), llvm::ConstantInt::get(i32, 715094163));
  Value* y = d.FromBits(b.CreateShl(b.CreateZExt(hi, d.int_type()), d.I(32)));
  for (int i = 0; i < steps; ++i) {
    // y (t + 2) / (2t + 1) with t = y^3 / a, formed as (y / a) y y so that it cannot overflow near DBL_MAX.
    Value* t = d.Mul(d.Mul(d.Div(y, a), y), y);
    y = d.Mul(y, d.Div(d.Add(t, d.C(2)), d.Fma(d.C(2), t, d.C(1))));
  }
  return y;
}

Value* CbrtImpl(Fm& f, Value* x) {
  llvm::IRBuilder<>& b = f.b();
  Value* result;
  if (f.dbl()) {
    Value* a = f.Abs(x);
    Value* denormal = f.Lt(a, f.C(0x1p-1022));
    Value* y = CbrtPositive(f, f.Sel(denormal, f.Mul(a, f.C(0x1p54)), a), 3);
    result = f.Sel(denormal, f.Mul(y, f.C(0x1p-18)), y);
  } else {
    Fm d(b, DoubleLike(f));
    result = b.CreateFPTrunc(CbrtPositive(d, d.Abs(b.CreateFPExt(x, d.type())), 2), f.type());
  }
  result = f.CopySign(result, x);
  Value* passthrough = b.CreateOr(f.Eq(x, f.C(0)), b.CreateFCmpUEQ(f.Abs(x), f.C(INFINITY)));
  return f.Sel(passthrough, x, result);
}

}  // namespace

Value* EmitFastExp(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return ExpImpl(f, x);
}

Value* EmitFastExpm1(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return Expm1Impl(f, x);
}

Value* EmitFastLog(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return LogImpl(f, x);
}

Value* EmitFastLog1p(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return Log1pImpl(f, x);
}

Value* EmitFastTanh(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return TanhImpl(f, x);
}

Value* EmitFastLogistic(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return LogisticImpl(f, x);
}

Value* EmitFastErf(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return f.dbl() ? Erf64(f, x) : Erf32(f, x);
}

Value* EmitFastSin(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return SinCosImpl(f, x, 0);
}

Value* EmitFastCos(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return SinCosImpl(f, x, 1);
}

Value* EmitFastPow(llvm::IRBuilder<>& b, Value* x, Value* y) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  if (f.dbl()) return nullptr;
  return Pow32(f, x, y);
}

Value* EmitFastCbrt(llvm::IRBuilder<>& b, Value* x) {
  PlainFloat plain(b);
  Fm f(b, x->getType());
  return CbrtImpl(f, x);
}

Value* EmitFastSqrt(llvm::IRBuilder<>& b, Value* x) {
  return b.CreateIntrinsic(llvm::Intrinsic::sqrt, {x->getType()}, {x});
}

Value* EmitFastRsqrt(llvm::IRBuilder<>& b, Value* x) {
  return b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), EmitFastSqrt(b, x));
}

}  // namespace xlac::codegen
