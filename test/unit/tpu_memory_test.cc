#include "passes/tpu_memory.h"

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "passes/codegen_prepare.h"

namespace xlac {
namespace {

const TpuChipSpec& V5e() { return **FindTpuChipSpec("v5e"); }

struct Analyzed {
  std::unique_ptr<Module> module;
  TpuMemoryReport report;
};

Analyzed Analyze(std::string_view text, const TpuChipSpec& chip = V5e()) {
  Analyzed out;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return out;
  out.module = std::move(module).value();
  absl::Status prepared = PrepareForCodegen(*out.module);
  EXPECT_TRUE(prepared.ok()) << prepared;
  absl::StatusOr<BufferAssignment> assignment = AssignBuffers(*out.module);
  EXPECT_TRUE(assignment.ok()) << assignment.status();
  if (!assignment.ok()) return out;
  absl::StatusOr<TpuMemoryReport> report = AnalyzeTpuMemory(*out.module, *assignment, chip);
  EXPECT_TRUE(report.ok()) << report.status();
  if (report.ok()) out.report = *report;
  return out;
}

TEST(TpuMemory, FormatBytes) {
  EXPECT_EQ(FormatBytes(int64_t{16} << 30), "16 GiB");
  EXPECT_EQ(FormatBytes(19650000000), "18.3 GiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(100), "100 B");
  EXPECT_EQ(FormatBytes(3 << 20), "3 MiB");
}

// f32[100,100] pads to 104 x 128 x 4 = 53248 bytes (40000 dense); f32[100,3] to 104 x 128 x 4 = 53248 (1200 dense).
TEST(TpuMemory, PeakOfAChainWithPadding) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p0 = f32[100,100] parameter(0)
  p1 = f32[100,100] parameter(1)
  a = f32[100,100] add(p0, p1)
  b = f32[100,100] multiply(a, a)
  ROOT c = f32[100,3] slice(b), slice={[0:100],[0:3]}
}
)");
  const TpuMemoryReport& r = a.report;
  // Parameters live throughout (2 x 53248); b writes over a in place (a dies at b); at c: b (its last use) and c.
  // Padded peak at c: 2 x 53248 + 53248 + 53248 = 212992. Dense: at c 80000 + 40000 + 1200 = 121200 (at b, with
  // b in place over a: 80000 + 40000).
  EXPECT_EQ(r.peak_padded_bytes, 212992);
  EXPECT_EQ(r.peak_unpadded_bytes, 121200);
  EXPECT_EQ(r.peak_at, "c");
  EXPECT_EQ(r.parameter_bytes, 106496);
  EXPECT_EQ(r.output_bytes, 53248);
  EXPECT_EQ(r.temp_bytes, 53248);
  ASSERT_EQ(r.live_at_peak.size(), 4u);
  EXPECT_EQ(r.live_at_peak[0].value, "b");  // ties by name: b, c, p0, p1
  EXPECT_EQ(r.live_at_peak[1].value, "c");
  EXPECT_EQ(r.live_at_peak[1].kind, "output");
  EXPECT_EQ(r.live_at_peak[1].shape, "f32[100,3]{1,0:T(8,128)}");
  EXPECT_EQ(r.live_at_peak[1].unpadded_bytes, 1200);
  EXPECT_EQ(r.live_at_peak[2].kind, "parameter 0");
  EXPECT_TRUE(r.fits());
  EXPECT_TRUE(CheckTpuMemory(r).ok());
}

// f32[256,256] = 262144 bytes, no padding. Donating p0 lets the result reuse its buffer: 2 buffers, not 3.
TEST(TpuMemory, DonatedParameterIsReused) {
  constexpr char kBody[] = R"(
ENTRY e {
  p0 = f32[256,256] parameter(0)
  p1 = f32[256,256] parameter(1)
  ROOT a = f32[256,256] add(p0, p1)
}
)";
  Analyzed plain = Analyze(std::string("HloModule m\n") + kBody);
  EXPECT_EQ(plain.report.peak_padded_bytes, 3 * 262144);
  Analyzed donated = Analyze(std::string("HloModule m, input_output_alias={ {}: (0, {}, must-alias) }\n") + kBody);
  EXPECT_EQ(donated.report.peak_padded_bytes, 2 * 262144);
  ASSERT_EQ(donated.report.live_at_peak.size(), 2u);
  EXPECT_EQ(donated.report.live_at_peak[0].kind, "parameter 0 (donated to the output)");
}

// A while loop: the carried tuple's leaves are one buffer each for init, body parameter, body root and result.
// s32[] pads to 128 x 4 = 512 bytes; f32[64,128] is 32768 bytes, unpadded.
TEST(TpuMemory, WhileLoopBuffersAreCountedOnce) {
  Analyzed a = Analyze(R"(
HloModule m
cond {
  p = (s32[], f32[64,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[64,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[64,128] get-tuple-element(p), index=1
  y = f32[64,128] multiply(x, x)
  ROOT t = (s32[], f32[64,128]) tuple(j, y)
}
ENTRY e {
  x0 = f32[64,128] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[64,128]) tuple(zero, x0)
  w = (s32[], f32[64,128]) while(init), condition=cond, body=body
  ROOT r = f32[64,128] get-tuple-element(w), index=1
}
)");
  const TpuMemoryReport& r = a.report;
  // At the condition's compare: x0 (32768, the caller's), the loop's f32 buffer (32768: copy-insertion copies x0
  // into it; it is also the output), the loop counter (a copy of zero), the compare's pred and the constants 0, 1
  // and 4 (five scalars of 512 padded bytes; dense 4 + 1 + 4 + 4 + 4).
  EXPECT_EQ(r.peak_padded_bytes, 2 * 32768 + 5 * 512);
  EXPECT_EQ(r.peak_unpadded_bytes, 2 * 32768 + 4 * 4 + 1);
  EXPECT_EQ(r.parameter_bytes, 32768);
  EXPECT_EQ(r.output_bytes, 32768);
  EXPECT_EQ(r.temp_bytes, 5 * 512);
  ASSERT_EQ(r.live_at_peak.size(), 7u);
  EXPECT_EQ(r.live_at_peak[0].kind, "output");
  EXPECT_EQ(r.live_at_peak[3].shape, "pred[]{:T(512)}");
  EXPECT_TRUE(r.fits());
}

// f32[33554432,1] is 128 MiB dense but its minor dimension pads to 128 lanes: 33554432 x 128 x 4 = 16 GiB.
TEST(TpuMemory, OverTheLimitListsTheLargestBuffers) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p0 = f32[33554432,1] parameter(0), metadata={op_name="jit(f)/x"}
  ROOT n = f32[33554432,1] negate(p0), metadata={op_name="jit(f)/neg"}
}
)");
  const TpuMemoryReport& r = a.report;
  EXPECT_EQ(r.peak_padded_bytes, int64_t{32} << 30);
  EXPECT_EQ(r.peak_unpadded_bytes, int64_t{256} << 20);
  EXPECT_FALSE(r.fits());
  absl::Status status = CheckTpuMemory(r);
  ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  const std::string message(status.message());
  EXPECT_EQ(message.rfind("needs 32 GiB of HBM per core, v5e has 16 GiB (256 MiB without TPU tile padding", 0), 0u)
      << message;
  EXPECT_NE(message.find("  1. Size: 16 GiB\n     Shape: f32[33554432,1]{1,0:T(8,128)}\n     Unpadded size: 128 MiB\n"
                         "     Extra memory due to padding: 15.9 GiB (128.0x expansion)\n"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Instruction: n (negate) op_name=\"jit(f)/neg\""), std::string::npos) << message;
  EXPECT_NE(message.find("Allocation type: parameter 0"), std::string::npos) << message;
  // The same program fits a v5p core (95 GiB).
  Analyzed big = Analyze(R"(
HloModule m
ENTRY e {
  p0 = f32[33554432,1] parameter(0)
  ROOT n = f32[33554432,1] negate(p0)
}
)",
                         **FindTpuChipSpec("v5p"));
  EXPECT_TRUE(big.report.fits());
}

}  // namespace
}  // namespace xlac
