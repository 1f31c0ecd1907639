// Tests for the HLO text lexer: token kinds as XLA's HloLexer produces them, token values, and lexical errors.
// Error locations as the parser reports them are tested in hlo_parser_test.cc.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "frontend/hlo/lexer.h"
#include "gtest/gtest.h"

namespace xlac {
namespace {

using hlo::Lexer;
using hlo::TokKind;

std::vector<TokKind> Kinds(std::string_view text) {
  Lexer lexer(text);
  std::vector<TokKind> kinds;
  while (true) {
    TokKind k = lexer.Lex();
    kinds.push_back(k);
    if (k == TokKind::kEof || k == TokKind::kError) return kinds;
  }
}

TEST(HloLexer, TokenKindsFollowXla) {
  using K = TokKind;
  EXPECT_EQ(Kinds("%x x: attr= x = f32 ident"), (std::vector<K>{K::kName, K::kName, K::kAttributeName, K::kIdent,
                                                                K::kEqual, K::kPrimitiveType, K::kIdent, K::kEof}));
  EXPECT_EQ(Kinds("1 -2 1.5 1e5 -inf inf nan -nan nan(0x7f)"),
            (std::vector<K>{K::kInt, K::kInt, K::kDecimal, K::kDecimal, K::kNegInf, K::kw_inf, K::kDecimal, K::kDecimal,
                            K::kDecimal, K::kEof}));
  EXPECT_EQ(Kinds("3x3 0_1x2_2 1_2_3 b01f_01io->b01f 01bf_01io->01bf"),
            (std::vector<K>{K::kDxD, K::kPad, K::kPad, K::kDimLabels, K::kDimLabels, K::kEof}));
  EXPECT_EQ(Kinds("... <= -> ? [ ] { } ( ) , : * # + ~"),
            (std::vector<K>{K::kDots, K::kLeq, K::kArrow, K::kQuestionMark, K::kLsquare, K::kRsquare, K::kLbrace,
                            K::kRbrace, K::kLparen, K::kRparen, K::kComma, K::kColon, K::kAsterisk, K::kOctothorp,
                            K::kPlus, K::kTilde, K::kEof}));
  EXPECT_EQ(Kinds("HloModule ENTRY ROOT maximal replicated manual last_tile_dim_replicate true false"),
            (std::vector<K>{K::kw_HloModule, K::kw_ENTRY, K::kw_ROOT, K::kw_maximal, K::kw_replicated, K::kw_manual,
                            K::kw_last_tile_dim_replicate, K::kw_true, K::kw_false, K::kEof}));
  // Comments are skipped wherever they appear.
  EXPECT_EQ(Kinds("a /*index=5*/ b // trailing\n c"), (std::vector<K>{K::kIdent, K::kIdent, K::kIdent, K::kEof}));
}

TEST(HloLexer, Values) {
  Lexer lexer("18446744073709551615 -9223372036854775808 \"a\\\"b\\n\" 'q' nan(0x7f) -nan");
  ASSERT_EQ(lexer.Lex(), TokKind::kInt);
  EXPECT_TRUE(lexer.tok().int_exceeds_int64);
  EXPECT_EQ(static_cast<uint64_t>(lexer.tok().int_val), 18446744073709551615ull);
  ASSERT_EQ(lexer.Lex(), TokKind::kInt);
  EXPECT_EQ(lexer.tok().int_val, std::numeric_limits<int64_t>::min());
  ASSERT_EQ(lexer.Lex(), TokKind::kString);
  EXPECT_EQ(lexer.tok().str, "a\"b\n");
  ASSERT_EQ(lexer.Lex(), TokKind::kString);
  EXPECT_EQ(lexer.tok().str, "q");
  ASSERT_EQ(lexer.Lex(), TokKind::kDecimal);
  uint64_t bits;
  std::memcpy(&bits, &lexer.tok().decimal_val, 8);
  EXPECT_EQ(bits, 0x7ff000000000007full);
  ASSERT_EQ(lexer.Lex(), TokKind::kDecimal);
  std::memcpy(&bits, &lexer.tok().decimal_val, 8);
  EXPECT_EQ(bits, 0xfff8000000000000ull);
}

TEST(HloLexer, Errors) {
  for (std::string_view bad : {"99999999999999999999", "-9223372036854775809", "/* never closed", "\"open", "@",
                               "nan(0x)", "nan(0x10000000000000)", "%1"}) {
    Lexer lexer(bad);
    EXPECT_EQ(lexer.Lex(), TokKind::kError) << bad;
    EXPECT_FALSE(lexer.tok().error.empty()) << bad;
  }
}

}  // namespace
}  // namespace xlac
