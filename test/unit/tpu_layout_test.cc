#include "ir/tpu_layout.h"

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"

namespace xlac {
namespace {

struct Row {
  const char* shape;     // as written (a layout, or none for the default descending one)
  const char* expected;  // with its TPU layout
  int64_t padded;
  int64_t unpadded;
};

// Every padded size below is worked out by hand in its comment: (padded extents) x (bytes per element).
const Row kRows[] = {
    // rank 0: one minimum tile of 128*p elements (512 bytes for every width up to 32 bits).
    {"f32[]", "f32[]{:T(128)}", 512, 4},    // 128 x 4
    {"s32[]", "s32[]{:T(128)}", 512, 4},    // 128 x 4
    {"pred[]", "pred[]{:T(512)}", 512, 1},  // 512 x 1
    {"bf16[]", "bf16[]{:T(256)}", 512, 2},  // 256 x 2
    {"u8[]", "u8[]{:T(512)}", 512, 1},      // 512 x 1
    {"f64[]", "f64[]{:T(128)}", 1024, 8},   // 128 x 8
    {"c64[]", "c64[]{:T(128)}", 1024, 8},   // 128 x 8
    // rank 1: T(n), n = next power of two of the extent within [128*p, 1024].
    {"s32[16]", "s32[16]{0:T(128)}", 512, 64},                        // 128 x 4
    {"f32[1000]", "f32[1000]{0:T(1024)}", 4096, 4000},                // 1024 x 4
    {"f32[3000]", "f32[3000]{0:T(1024)}", 12288, 12000},              // 3 x 1024 = 3072, x 4
    {"u32[256]", "u32[256]{0:T(256)}", 1024, 1024},                   // 256 x 4, no padding
    {"bf16[128]", "bf16[128]{0:T(256)(128)(2,1)}", 512, 256},         // 256 x 2
    {"bf16[6144]", "bf16[6144]{0:T(1024)(128)(2,1)}", 12288, 12288},  // 6 x 1024 = 6144, x 2
    {"f16[5]", "f16[5]{0:T(256)(128)(2,1)}", 512, 10},                // 256 x 2
    {"u8[100]", "u8[100]{0:T(512)(128)(4,1)}", 512, 100},             // 512 x 1
    {"s8[2000]", "s8[2000]{0:T(1024)(128)(4,1)}", 2048, 2000},        // 2 x 1024 = 2048, x 1
    {"pred[2000]", "pred[2000]{0:T(1024)(128)(4,1)}", 2048, 2000},    // 2048 x 1
    {"s64[300]", "s64[300]{0:T(512)}", 4096, 2400},                   // 512 x 8
    {"c64[7]", "c64[7]{0:T(128)}", 1024, 56},                         // 128 x 8
    // rank 2: T(r,128)(p,1) on the two most minor dimensions.
    {"f32[32,6144]", "f32[32,6144]{1,0:T(8,128)}", 786432, 786432},          // 32 x 6144 x 4, no padding
    {"f32[1,6144]", "f32[1,6144]{1,0:T(1,128)}", 24576, 24576},              // 1 x 6144 x 4
    {"f32[3,5]", "f32[3,5]{1,0:T(4,128)}", 2048, 60},                        // 4 x 128 x 4
    {"f32[100,100]", "f32[100,100]{1,0:T(8,128)}", 53248, 40000},            // 104 x 128 x 4
    {"f32[100,3]{0,1}", "f32[100,3]{0,1:T(4,128)}", 2048, 1200},             // minor dim 0: 4 x 128 x 4
    {"s32[7,129]", "s32[7,129]{1,0:T(8,128)}", 8192, 3612},                  // 8 x 256 x 4
    {"bf16[100,100]", "bf16[100,100]{1,0:T(16,128)(2,1)}", 28672, 20000},    // 112 x 128 x 2
    {"bf16[1,1]", "bf16[1,1]{1,0:T(2,128)(2,1)}", 512, 2},                   // 2 x 128 x 2
    {"s16[5,130]", "s16[5,130]{1,0:T(8,128)(2,1)}", 4096, 1300},             // 8 x 256 x 2
    {"s8[100,100]", "s8[100,100]{1,0:T(32,128)(4,1)}", 16384, 10000},        // 128 x 128 x 1
    {"u8[64,256]", "u8[64,256]{1,0:T(32,128)(4,1)}", 16384, 16384},          // 64 x 256 x 1, no padding
    {"pred[1,1]", "pred[1,1]{1,0:T(4,128)(4,1)}", 512, 1},                   // 4 x 128 x 1
    {"pred[32,6144]", "pred[32,6144]{1,0:T(32,128)(4,1)}", 196608, 196608},  // 32 x 6144 x 1
    {"f8e4m3fn[6,200]", "f8e4m3fn[6,200]{1,0:T(8,128)(4,1)}", 2048, 1200},   // 8 x 256 x 1
    {"f64[10,10]", "f64[10,10]{1,0:T(8,128)}", 16384, 800},                  // 16 x 128 x 8
    {"s64[2,2]", "s64[2,2]{1,0:T(2,128)}", 2048, 32},                        // 2 x 128 x 8
    {"c64[2,3]", "c64[2,3]{1,0:T(2,128)}", 2048, 48},                        // 2 x 128 x 8
    {"s4[10,300]", "s4[10,300]{1,0:T(16,128)(8,1)}", 3072, 1500},            // 16 x 384 x 1/2
    // rank 3: major dimensions are not padded.
    {"f32[4,10,130]", "f32[4,10,130]{2,1,0:T(8,128)}", 65536, 20800},              // 4 x 16 x 256 x 4
    {"f32[130,10,4]{0,1,2}", "f32[130,10,4]{0,1,2:T(8,128)}", 65536, 20800},       // 4 x 16 x 256 x 4
    {"f32[2048,1,2048]", "f32[2048,1,2048]{2,1,0:T(1,128)}", 16777216, 16777216},  // 2048 x 1 x 2048 x 4
    {"bf16[3,2,64]", "bf16[3,2,64]{2,1,0:T(2,128)(2,1)}", 1536, 768},              // 3 x 2 x 128 x 2
    // rank 4.
    {"bf16[2,3,20,300]", "bf16[2,3,20,300]{3,2,1,0:T(16,128)(2,1)}", 147456, 72000},  // 2 x 3 x 32 x 384 x 2
    {"f32[8,64,7,7]", "f32[8,64,7,7]{3,2,1,0:T(8,128)}", 2097152, 100352},            // 8 x 64 x 8 x 128 x 4
    {"f32[8,7,7,64]{3,2,1,0}", "f32[8,7,7,64]{3,2,1,0:T(8,128)}", 229376, 100352},    // 8 x 7 x 8 x 128 x 4
    {"s8[2,2,33,128]", "s8[2,2,33,128]{3,2,1,0:T(32,128)(4,1)}", 32768, 16896},       // 2 x 2 x 64 x 128 x 1
    {"c64[1,2,3,4]", "c64[1,2,3,4]{3,2,1,0:T(4,128)}", 8192, 192},                    // 1 x 2 x 4 x 128 x 8
    // Tiles already present (a TPU dump) are kept and sized as written.
    {"f32[3,5]{1,0:T(8,128)}", "f32[3,5]{1,0:T(8,128)}", 4096, 60},  // 8 x 128 x 4
    // physical minor first: 256 (dim 2), 3 -> 4 (dim 1), then 20 (dim 0) and 133 (dim 3): 256 x 4 x 20 x 133 x 4
    {"s32[20,3,256,133]{2,1,0,3:T(4,128)}", "s32[20,3,256,133]{2,1,0,3:T(4,128)}", 10895360, 8171520},
    // Empty arrays occupy nothing.
    {"f32[0,5]", "f32[0,5]{1,0:T(1,128)}", 0, 0},  // second-minor extent 0 counts as 1
};

TEST(TpuLayout, TableOfShapes) {
  for (const Row& row : kRows) {
    SCOPED_TRACE(row.shape);
    absl::StatusOr<Shape> shape = ParseShape(row.shape);
    ASSERT_TRUE(shape.ok()) << shape.status();
    EXPECT_EQ(ShapeToString(WithTpuLayouts(*shape)), row.expected);
    EXPECT_EQ(TpuPaddedByteSize(*shape), row.padded);
    EXPECT_EQ(TpuUnpaddedByteSize(*shape), row.unpadded);
    // The TPU layout is a fixed point: sizing the laid-out shape gives the same bytes.
    EXPECT_EQ(TpuPaddedByteSize(WithTpuLayouts(*shape)), row.padded);
  }
}

TEST(TpuLayout, TuplesAndNonArrays) {
  absl::StatusOr<Shape> tuple = ParseShape("(f32[3,5], (pred[], token[]))");
  ASSERT_TRUE(tuple.ok()) << tuple.status();
  EXPECT_EQ(ShapeToString(WithTpuLayouts(*tuple)), "(f32[3,5]{1,0:T(4,128)}, (pred[]{:T(512)}, token[]))");
  EXPECT_EQ(TpuPaddedByteSize(*tuple), std::nullopt);
  absl::StatusOr<Shape> unbounded = ParseShape("f32[?,4]");
  ASSERT_TRUE(unbounded.ok()) << unbounded.status();
  EXPECT_EQ(TpuPaddedByteSize(*unbounded), std::nullopt);
  absl::StatusOr<Shape> huge = ParseShape("f32[4611686018427387904,4]");
  ASSERT_TRUE(huge.ok()) << huge.status();
  EXPECT_EQ(TpuPaddedByteSize(*huge), std::nullopt);
}

}  // namespace
}  // namespace xlac
