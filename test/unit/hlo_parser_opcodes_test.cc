// Every opcode of ir/opcodes.def parses, each in one module with the attributes it requires.
#include <set>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "hlo_parser_test_util.h"

namespace xlac {
namespace {

using namespace hlo_parser_testing;  // NOLINT: test helpers

// Every opcode of opcodes.def in one module, each with the attributes it requires.
constexpr std::string_view kAllOpcodesModule = R"(HloModule all_opcodes
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
cond {
  c = (s32[]) parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  c = (s32[]) parameter(0)
  ROOT r = (s32[]) copy(c)
}
unary {
  w = f32[4] parameter(0)
  ROOT n = f32[4] negate(w)
}
scan_body {
  c = f32[] parameter(0)
  e = f32[] parameter(1)
  ROOT r = (f32[], f32[]) tuple(c, e)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  i = s32[] parameter(2)
  pr = pred[4] parameter(3)
  m = f32[4,4] parameter(4)
  is = s32[4] parameter(5)
  cx = c64[4] parameter(6)
  p = pred[] parameter(7)
  us = u32[4] parameter(8)
  idx = s32[2,1] parameter(9)
  img = f32[1,4,4,1] parameter(10)
  st = u64[2] parameter(11)
  gs = s64[1] parameter(12)
  zero = f32[] constant(0)
  tok = token[] after-all()
  x2 = f32[2] slice(x), slice={[0:2]}
  ti = (s32[]) tuple(i)
  abs = f32[4] abs(x)
  acos = f32[4] acos(x)
  acosh = f32[4] acosh(x)
  add.1 = f32[4] add(x, y)
  dep = f32[4] add-dependency(x, tok)
  ag = f32[8] all-gather(x), dimensions={0}
  ags = (f32[4], f32[8]) all-gather-start(x), dimensions={0}
  agd = f32[8] all-gather-done(ags)
  ar = f32[4] all-reduce(x), to_apply=add
  ars = f32[4] all-reduce-start(x), to_apply=add
  ard = f32[4] all-reduce-done(ars)
  a2a = f32[4] all-to-all(x), dimensions={0}
  and = pred[4] and(pr, pr)
  asin = f32[4] asin(x)
  asinh = f32[4] asinh(x)
  as = ((f32[4]), f32[4], s32[]) async-start(x), calls=unary
  au = ((f32[4]), f32[4], s32[]) async-update(as)
  ad = f32[4] async-done(au)
  atan = f32[4] atan(x)
  atan2 = f32[4] atan2(x, y)
  atanh = f32[4] atanh(x)
  bng = (f32[4,4], f32[4], f32[4]) batch-norm-grad(m, x, x, x, m), epsilon=0.001, feature_index=1
  bni = f32[4,4] batch-norm-inference(m, x, x, x, x), epsilon=0.001, feature_index=1
  bnt = (f32[4,4], f32[4], f32[4]) batch-norm-training(m, x, x), epsilon=0.001, feature_index=1
  bitcast = f32[2,2] bitcast(x)
  bc = s32[4] bitcast-convert(x)
  broadcast = f32[4,4] broadcast(x), dimensions={0}
  call = f32[4] call(x), to_apply=unary
  cbrt = f32[4] cbrt(x)
  ceil = f32[4] ceil(x)
  chol = f32[4,4] cholesky(m), lower=true
  clamp = f32[4] clamp(x, x, x)
  clz = s32[4] count-leading-zeros(is)
  cb = f32[4] collective-broadcast(x), replica_groups={{0,1}}
  cp = f32[4] collective-permute(x), source_target_pairs={{0,1}}
  cps = (f32[4], f32[4]) collective-permute-start(x), source_target_pairs={{0,1}}
  cpd = f32[4] collective-permute-done(cps)
  cr = f32[4] collective-reduce(x), to_apply=add
  cmp = pred[4] compare(x, y), direction=LT
  complex = c64[4] complex(x, y)
  concat = f32[8] concatenate(x, y), dimensions={0}
  conditional = f32[4] conditional(p, x, y), true_computation=unary, false_computation=unary
  convert = s32[4] convert(x)
  conv = f32[1,2,2,1] convolution(img, img), window={size=3x3}, dim_labels=b01f_01io->b01f
  copy = f32[4] copy(x)
  cs = (f32[4], f32[4], u32[]) copy-start(x)
  cd = f32[4] copy-done(cs)
  cos = f32[4] cosine(x)
  cosh = f32[4] cosh(x)
  cc = f32[4] custom-call(x), custom_call_target="t"
  div = f32[4] divide(x, y)
  domain = f32[4] domain(x), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  dot = f32[4,4] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dr = f32[<=4] dynamic-reshape(x, i)
  ds = f32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}
  dus = f32[4] dynamic-update-slice(x, x2, i)
  erf = f32[4] erf(x)
  exp = f32[4] exponential(x)
  expm1 = f32[4] exponential-minus-one(x)
  fft = c64[4] fft(cx), fft_type=FFT, fft_length={4}
  floor = f32[4] floor(x)
  fusion = f32[4] fusion(x), kind=kLoop, calls=unary
  gather = f32[2,4] gather(m, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  gds = s32[] get-dimension-size(x), dimensions={0}
  gte = s32[] get-tuple-element(ti), index=0
  imag = f32[4] imag(cx)
  infeed = (f32[4], token[]) infeed(tok)
  iota = s32[4] iota(), iota_dimension=0
  isf = pred[4] is-finite(x)
  log = f32[4] log(x)
  log1p = f32[4] log-plus-one(x)
  logistic = f32[4] logistic(x)
  map = f32[4] map(x, y), dimensions={0}, to_apply=add
  max = f32[4] maximum(x, y)
  min = f32[4] minimum(x, y)
  mulhi = s32[4] mulhi(is, is)
  mul = f32[4] multiply(x, y)
  neg = f32[4] negate(x)
  not = pred[4] not(pr)
  ob = f32[4] opt-barrier(x)
  or = pred[4] or(pr, pr)
  outfeed = token[] outfeed(x, tok), outfeed_shape=f32[4]{0}
  pad = f32[6] pad(x, zero), padding=1_1
  pid = u32[] partition-id()
  popcnt = s32[4] popcnt(is)
  pow = f32[4] power(x, y)
  ra2a = f32[4] ragged-all-to-all(x, x, gs, gs, gs, gs)
  rdot = f32[4,4] ragged-dot(m, m, gs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={0}
  real = f32[4] real(cx)
  recv = (f32[4], u32[], token[]) recv(tok), channel_id=1
  recvd = (f32[4], token[]) recv-done(recv), channel_id=1
  reduce = f32[] reduce(x, zero), dimensions={0}, to_apply=add
  rp = f32[4] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  rs = f32[2] reduce-scatter(x), dimensions={0}, to_apply=add
  rw = f32[2] reduce-window(x, zero), window={size=2 stride=2}, to_apply=add
  rem = f32[4] remainder(x, y)
  rid = u32[] replica-id()
  reshape = f32[2,2] reshape(x)
  rev = f32[4] reverse(x), dimensions={0}
  rng = f32[4] rng(zero, zero), distribution=rng_uniform
  rbg = (u64[2], u32[4]) rng-bit-generator(st), algorithm=rng_default
  rgs = u64[2] rng-get-and-update-state(), delta=1
  rafz = f32[4] round-nearest-afz(x)
  rne = f32[4] round-nearest-even(x)
  rsqrt = f32[4] rsqrt(x)
  sdot = f32[4,4] scaled-dot(m, m, m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  scan = (f32[], f32[4]) scan(zero, x), dimensions={0}, num_carries=1, to_apply=scan_body
  scatter = f32[4,4] scatter(m, idx, x2), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  select = f32[4] select(pr, x, y)
  sas = f32[4] select-and-scatter(x, x2, zero), window={size=2 stride=2}, select=ge, scatter=add
  send = (f32[4], u32[], token[]) send(x, tok), channel_id=2
  sendd = token[] send-done(send), channel_id=2
  sds = f32[<=4] set-dimension-size(x, i), dimensions={0}
  shl = s32[4] shift-left(is, is)
  sra = s32[4] shift-right-arithmetic(is, is)
  srl = s32[4] shift-right-logical(is, is)
  shuffle = f32[4] shuffle(x)
  sign = f32[4] sign(x)
  sin = f32[4] sine(x)
  sinh = f32[4] sinh(x)
  slice = f32[2] slice(x), slice={[0:4:2]}
  sort = f32[4] sort(x), dimensions={0}, to_apply=ge
  sqrt = f32[4] sqrt(x)
  sc = bf16[4] stochastic-convert(x, us)
  sub = f32[4] subtract(x, y)
  tan = f32[4] tan(x)
  tanh = f32[4] tanh(x)
  topk = (f32[2], s32[2]) topk(x), k=2
  transpose = f32[4,4] transpose(m), dimensions={1,0}
  ts = f32[4,4] triangular-solve(m, m), left_side=true, lower=true, unit_diagonal=false, transpose_a=NO_TRANSPOSE
  while = (s32[]) while(ti), condition=cond, body=body
  ROOT xor = pred[4] xor(pr, pr)
}
)";

TEST(HloParserOpcodes, EveryOpcodeParses) {
  auto m = MustParse(kAllOpcodesModule);
  ASSERT_NE(m, nullptr);
  std::set<Opcode> seen;
  for (const auto& c : m->computations()) {
    for (const auto& inst : c->instructions()) seen.insert(inst->opcode());
  }
  for (int op = 0; op < kNumOpcodes; ++op) {
    EXPECT_TRUE(seen.contains(static_cast<Opcode>(op))) << "no instance of " << OpcodeName(static_cast<Opcode>(op));
  }
  EXPECT_EQ(Find(*m, "outfeed")->StringAttr("outfeed_shape"), "f32[4]{0}");
  EXPECT_EQ(Find(*m, "domain")->StringAttr("domain"),
            "{kind=\"sharding\", entry={maximal device=0}, exit={maximal device=1}}");
  EXPECT_EQ(Find(*m, "sas")->called_computations(),
            (std::vector<Computation*>{m->FindComputation("ge"), m->FindComputation("add")}));
  EXPECT_EQ(Find(*m, "ad")->called_computations(), (std::vector<Computation*>{m->FindComputation("unary")}));
}

}  // namespace
}  // namespace xlac
