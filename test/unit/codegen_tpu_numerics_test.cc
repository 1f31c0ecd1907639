// TPU dot numerics (ir/tpu_numerics.h): with tpu_numerics, f32 dots and convolutions at DEFAULT precision round their
// operands to bf16 and accumulate in f32, HIGH is the 3-pass bf16 split and HIGHEST stays f32, in the interpreter and
// in compiled code alike (bit for bit, both numerics modes: the products of bf16 values are exact in f32, so FMA and
// multiply-then-add agree), except the default mode's GEMM on a CPU with AVX512_BF16, whose vdpbf16ps adds each pair
// of products in the other order and flushes denormals (within the default mode's bound; its exact bits are
// CodegenDot.Bf16DotsOnAvx512Bf16MatchThePairModel's). Algorithms not modeled are reported as unsupported by both.
#include <cstring>

#include "codegen_test_util.h"
#include "fmt/format.h"
#include "gemm_numerics_test_util.h"
#include "ir/status_macros.h"
#include "ir/tpu_numerics.h"

namespace xlac::codegen::testing {
namespace {

absl::StatusOr<Literal> Interpret(const Module& module, const std::vector<Literal>& args, bool tpu) {
  interp::InterpreterOptions options;
  options.tpu_numerics = tpu;
  XLAC_ASSIGN_OR_RETURN(std::vector<Literal> out, interp::Evaluate(module, {args}, options));
  return std::move(out[0]);
}

absl::StatusOr<Literal> Jit(const Module& module, const std::vector<Literal>& args, bool tpu, bool exact) {
  JitOptions options;
  options.compile.tpu_numerics = tpu;
  options.compile.exact = exact;
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<JitExecutable> exe, JitExecutable::Compile(module, options));
  XLAC_ASSIGN_OR_RETURN(std::vector<Literal> out, exe->Run(args));
  return std::move(out[0]);
}

// The JIT under TPU numerics equals the interpreter under TPU numerics bit for bit, in both numerics modes; with
// `gemm_k` > 0 (every output a GEMM-path dot or convolution of at most gemm_k products per element, or sums of a
// few) the default mode on a CPU with AVX512_BF16 is held to the default mode's bound instead.
void ExpectTpuMatch(const std::string& text, int64_t gemm_k = 0) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_TRUE(module);
  std::vector<Literal> args;
  const Computation* entry = module->entry_computation();
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), 31 + static_cast<uint64_t>(i)));
  }
  absl::StatusOr<Literal> want = Interpret(*module, args, true);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<Literal> f32 = Interpret(*module, args, false);
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_FALSE(DescribeDifference(*want, *f32).empty()) << "bf16 operands should change some result\n" << text;
  for (bool exact : {true, false}) {
    absl::StatusOr<Literal> got = Jit(*module, args, true, exact);
    ASSERT_TRUE(got.ok()) << got.status();
    if (!exact && gemm_k > 0 && HostHasAvx512Bf16()) {
      std::vector<Literal> magnitude_args;
      for (const Literal& a : args) magnitude_args.push_back(Magnitudes(a));
      absl::StatusOr<Literal> magnitudes = Interpret(*module, magnitude_args, true);
      ASSERT_TRUE(magnitudes.ok()) << magnitudes.status();
      std::string outside = OutsideBound(*want, *magnitudes, *got, gemm_k);
      EXPECT_TRUE(outside.empty()) << "default mode: " << outside << "\n" << text;
      continue;
    }
    std::string difference = DescribeDifference(*want, *got);
    EXPECT_TRUE(difference.empty()) << (exact ? "exact" : "default") << " mode: " << difference << "\n" << text;
  }
}

TEST(TpuNumerics, RoundToBf16IsNearestEven) {
  EXPECT_EQ(RoundToBf16(1.0f + 0x1p-10f), 1.0f);
  EXPECT_EQ(RoundToBf16(1.0f + 0x1p-8f), 1.0f);                      // a tie: to even
  EXPECT_EQ(RoundToBf16(1.0f + 0x1p-8f + 0x1p-9f), 1.0f + 0x1p-7f);  // above the tie
  EXPECT_EQ(RoundToBf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);        // a tie: to even (up)
  EXPECT_EQ(RoundToBf16(-2.5f), -2.5f);
  EXPECT_TRUE(std::isinf(RoundToBf16(3.4e38f)));  // rounds past bf16's largest finite value
  EXPECT_TRUE(std::isnan(RoundToBf16(NAN)));
}

// Values where DEFAULT differs from f32 by exactly the bf16 rounding of 1 + 2^-10 (1.0009765625 -> 1), HIGH
// recovers it (its low part 2^-10 is a bf16 value) and HIGHEST keeps it.
TEST(TpuNumerics, DefaultRoundsHighSplitsHighestKeeps) {
  struct Case {
    const char* precision;
    float tpu;
  };
  for (const Case& c :
       {Case{"", 4.0f}, Case{", operand_precision={default,default}", 4.0f},
        Case{", algorithm=dot_bf16_bf16_f32", 4.0f}, Case{", operand_precision={high,high}", 4.0009765625f},
        Case{", algorithm=dot_bf16_bf16_f32_x3", 4.0009765625f},
        Case{", operand_precision={highest,default}", 4.0009765625f}}) {
    std::string text = fmt::format(R"(
HloModule m
ENTRY e {{
  a = f32[1,2] constant({{ {{ 1.0009765625, 3 }} }})
  b = f32[2,1] constant({{ {{ 1 }}, {{ 1 }} }})
  ROOT d = f32[1,1] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}{}
}})",
                                   c.precision);
    std::unique_ptr<Module> module = ParseAndVerify(text);
    ASSERT_TRUE(module);
    for (bool tpu : {false, true}) {
      absl::StatusOr<Literal> interp = Interpret(*module, {}, tpu);
      ASSERT_TRUE(interp.ok()) << interp.status();
      EXPECT_EQ(interp->Get<float>(0), tpu ? c.tpu : 4.0009765625f) << c.precision;
      for (bool exact : {true, false}) {
        absl::StatusOr<Literal> jit = Jit(*module, {}, tpu, exact);
        ASSERT_TRUE(jit.ok()) << jit.status();
        EXPECT_EQ(jit->Get<float>(0), interp->Get<float>(0)) << c.precision << (exact ? " exact" : " default");
      }
    }
  }
}

// HIGH on random values: much closer to f32 than DEFAULT, and still bit for bit between the backends (the dot's
// three passes within three dots' bound in the default mode on AVX512_BF16).
TEST(TpuNumerics, HighIsTheThreePassSplitOnEveryPath) {
  for (const char* text :
       {"HloModule m\nENTRY e {\n a = f32[96,200] parameter(0)\n b = f32[200,130] parameter(1)\n"
        " ROOT d = f32[96,130] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0},"
        " operand_precision={high,high}\n}",
        "HloModule m\nENTRY e {\n x = f32[2,12,12,16] parameter(0)\n w = f32[3,3,16,24] parameter(1)\n"
        " ROOT c = f32[2,12,12,24] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,"
        " operand_precision={high,high}\n}"}) {
    ExpectTpuMatch(text, std::string(text).find(" dot(") != std::string::npos ? 3 * 200 : 3 * 3 * 3 * 16);
    std::unique_ptr<Module> module = ParseAndVerify(text);
    ASSERT_TRUE(module);
    std::vector<Literal> args;
    for (int64_t i = 0; i < 2; ++i) {
      args.push_back(interp::MakeRandomLiteral(module->entry_computation()->parameter(i)->shape(), 31 + i));
    }
    absl::StatusOr<Literal> f32 = Interpret(*module, args, false);
    absl::StatusOr<Literal> high = Interpret(*module, args, true);
    ASSERT_TRUE(f32.ok() && high.ok());
    // DEFAULT's error is about 2^-9 relative per operand; the split's about 2^-17.
    double worst = 0;
    for (int64_t i = 0; i < f32->element_count(); ++i) {
      worst = std::max(
          worst, std::fabs(f32->GetAsDouble(i) - high->GetAsDouble(i)) / std::max(1.0, std::fabs(f32->GetAsDouble(i))));
    }
    EXPECT_LT(worst, 1e-4) << text;
  }
}

TEST(TpuNumerics, DotsOnEveryPath) {
  for (const char* text :
       {// The packed GEMM, rows and columns over threads.
        "HloModule m\nENTRY e {\n a = f32[96,200] parameter(0)\n b = f32[200,130] parameter(1)\n"
        " ROOT d = f32[96,130] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
        // Batched, transposed result (the operands swap).
        "HloModule m\nENTRY e {\n a = f32[3,40,50] parameter(0)\n b = f32[3,50,30] parameter(1)\n"
        " ROOT d = f32[3,40,30]{1,2,0} dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2},"
        " rhs_contracting_dims={1}\n}",
        // Two contracting dimensions: the loop nest.
        "HloModule m\nENTRY e {\n a = f32[6,5,7] parameter(0)\n b = f32[5,7,4] parameter(1)\n"
        " ROOT d = f32[6,4] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}\n}",
        // With an epilogue (output fusion; an exact op, so the default mode is bitwise too).
        "HloModule m\nENTRY e {\n a = f32[64,96] parameter(0)\n b = f32[96,48] parameter(1)\n"
        " d = f32[64,48] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        " z = f32[] constant(0)\n bz = f32[64,48] broadcast(z), dimensions={}\n"
        " ROOT t = f32[64,48] maximum(d, bz)\n}"}) {
    ExpectTpuMatch(text, /*gemm_k=*/200);
  }
}

TEST(TpuNumerics, ConvolutionsOnEveryPath) {
  for (const char* text :
       {// NHWC: the direct tiled path.
        "HloModule m\nENTRY e {\n x = f32[2,12,12,16] parameter(0)\n w = f32[3,3,16,24] parameter(1)\n"
        " ROOT c = f32[2,12,12,24] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}",
        // NCHW: the transposed tiled path.
        "HloModule m\nENTRY e {\n x = f32[2,16,10,10] parameter(0)\n w = f32[8,16,3,3] parameter(1)\n"
        " ROOT c = f32[2,8,8,8] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01\n}",
        // Batch groups: the loop nest.
        "HloModule m\nENTRY e {\n x = f32[4,6,6,3] parameter(0)\n w = f32[2,2,3,4] parameter(1)\n"
        " ROOT c = f32[2,5,5,4] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f,"
        " batch_group_count=2\n}"}) {
    ExpectTpuMatch(text, /*gemm_k=*/3 * 3 * 16);
  }
}

// An f32 NaN whose payload lies in the low 16 bits only stays a NaN when rounded to bf16 (its upper half alone would
// read as an infinity): the strided pair packer of dots and the f32-panel repacking of convolutions on AVX512_BF16.
TEST(TpuNumerics, NanPayloadsBelowBf16StayNan) {
  for (const char* text :
       {"HloModule m\nENTRY e {\n a = f32[2,64] parameter(0)\n b = f32[64,32] parameter(1)\n"
        " ROOT d = f32[2,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
        "HloModule m\nENTRY e {\n x = f32[2,6,6,16] parameter(0)\n w = f32[3,3,16,32] parameter(1)\n"
        " ROOT c = f32[2,6,6,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}"}) {
    std::unique_ptr<Module> module = ParseAndVerify(text);
    ASSERT_TRUE(module);
    std::vector<Literal> args;
    for (int64_t i = 0; i < 2; ++i) {
      Literal ones(module->entry_computation()->parameter(i)->shape());
      for (int64_t j = 0; j < ones.element_count(); ++j) ones.SetFromDouble(j, 1.0);
      args.push_back(std::move(ones));
    }
    const uint32_t low_payload_nan = 0x7f800001u;
    std::memcpy(args[0].mutable_raw_data() + 5 * 4, &low_payload_nan, 4);
    absl::StatusOr<Literal> want = Interpret(*module, args, true);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(std::isnan(want->GetAsDouble(0))) << text;
    for (bool exact : {true, false}) {
      absl::StatusOr<Literal> got = Jit(*module, args, true, exact);
      ASSERT_TRUE(got.ok()) << got.status();
      for (int64_t i = 0; i < want->element_count(); ++i) {
        ASSERT_EQ(std::isnan(want->GetAsDouble(i)), std::isnan(got->GetAsDouble(i)))
            << (exact ? "exact" : "default") << " mode, element " << i << ": " << got->GetAsDouble(i) << "\n"
            << text;
      }
    }
  }
}

TEST(TpuNumerics, AlgorithmsNotModeledAreReported) {
  std::unique_ptr<Module> module = ParseAndVerify(
      "HloModule m\nENTRY e {\n a = f32[4,4] parameter(0)\n b = f32[4,4] parameter(1)\n"
      " ROOT d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0},"
      " algorithm=dot_tf32_tf32_f32\n}");
  ASSERT_TRUE(module);
  std::vector<Literal> args = {interp::MakeRandomLiteral(module->entry_computation()->parameter(0)->shape(), 1),
                               interp::MakeRandomLiteral(module->entry_computation()->parameter(1)->shape(), 2)};
  absl::StatusOr<Literal> interp = Interpret(*module, args, true);
  ASSERT_FALSE(interp.ok());
  EXPECT_NE(interp.status().message().find("dot_tf32_tf32_f32"), std::string::npos) << interp.status();
  absl::StatusOr<Literal> jit = Jit(*module, args, true, false);
  ASSERT_FALSE(jit.ok());
  EXPECT_EQ(jit.status().code(), absl::StatusCode::kUnimplemented) << jit.status();
  EXPECT_NE(jit.status().message().find("dot_tf32_tf32_f32"), std::string::npos) << jit.status();
  // Without TPU numerics the algorithm is ignored (f32), as before.
  EXPECT_TRUE(Interpret(*module, args, false).ok());
  EXPECT_TRUE(Jit(*module, args, false, true).ok());
}

}  // namespace
}  // namespace xlac::codegen::testing
