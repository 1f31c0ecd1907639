#include "frontend/hlo/parse_schema.h"

#include <array>

namespace xlac::hlo {
namespace {

using Enums = std::vector<std::string_view>;

const Enums& PrecisionValues() {
  static const Enums v = {"default", "high", "highest", "packed_nibble"};
  return v;
}
const Enums& DotAlgorithmValues() {
  static const Enums v = {"unset",
                          "dot_any_f8_any_f8_f32",
                          "dot_any_f8_any_f8_f32_fast_accum",
                          "dot_f16_f16_f16",
                          "dot_f16_f16_f32",
                          "dot_bf16_bf16_bf16",
                          "dot_bf16_bf16_f32",
                          "dot_bf16_bf16_f32_x3",
                          "dot_bf16_bf16_f32_x6",
                          "dot_bf16_bf16_f32_x9",
                          "dot_tf32_tf32_f32",
                          "dot_tf32_tf32_f32_x3",
                          "dot_f32_f32_f32",
                          "dot_f64_f64_f64"};
  return v;
}

OpAttrSpec Req(std::string_view name) { return OpAttrSpec{name, true, {}, false}; }
OpAttrSpec Opt(std::string_view name) { return OpAttrSpec{name, false, {}, false}; }
OpAttrSpec ReqEnum(std::string_view name, Enums values) { return OpAttrSpec{name, true, std::move(values), false}; }
OpAttrSpec OptEnum(std::string_view name, Enums values) { return OpAttrSpec{name, false, std::move(values), false}; }
OpAttrSpec Precision() { return OpAttrSpec{"operand_precision", false, PrecisionValues(), true}; }
OpAttrSpec DotAlgorithm() { return OpAttrSpec{"algorithm", false, DotAlgorithmValues(), true}; }

CompAttrSpec ReqComp(std::string_view name) { return CompAttrSpec{name, true, false}; }
CompAttrSpec OptComp(std::string_view name) { return CompAttrSpec{name, false, false}; }
CompAttrSpec OptCompList(std::string_view name) { return CompAttrSpec{name, false, true}; }

std::vector<OpAttrSpec> DotDims() {
  return {Opt("lhs_contracting_dims"), Opt("rhs_contracting_dims"), Opt("lhs_batch_dims"), Opt("rhs_batch_dims"),
          Precision()};
}

std::vector<OpAttrSpec> Collective() {
  return {Opt("replica_groups"), Opt("channel_id"), Opt("constrain_layout"), Opt("use_global_device_ids")};
}

std::array<OpSchema, kNumOpcodes> BuildSchemas() {
  std::array<OpSchema, kNumOpcodes> s{};
  auto at = [&](Opcode op) -> OpSchema& { return s[static_cast<size_t>(op)]; };

  // Unary ops that carry a result accuracy (XLA's create_unary_instruction_with_result_accuracy).
  for (Opcode op : {Opcode::kAcos,  Opcode::kAcosh, Opcode::kAsin,  Opcode::kAsinh,    Opcode::kAtan, Opcode::kAtanh,
                    Opcode::kExpm1, Opcode::kLog,   Opcode::kLog1p, Opcode::kLogistic, Opcode::kSqrt, Opcode::kCbrt,
                    Opcode::kRsqrt, Opcode::kTanh,  Opcode::kErf,   Opcode::kSin,      Opcode::kSinh, Opcode::kCos,
                    Opcode::kCosh,  Opcode::kTan,   Opcode::kExp}) {
    at(op).result_accuracy = true;
  }

  for (Opcode op : {Opcode::kAllGather, Opcode::kAllGatherStart}) {
    at(op).attrs = Collective();
    at(op).attrs.push_back(Req("dimensions"));
  }
  for (Opcode op : {Opcode::kAllReduce, Opcode::kAllReduceStart, Opcode::kReduceScatter, Opcode::kCollectiveReduce}) {
    at(op).attrs = Collective();
    at(op).attrs.push_back(Opt("mode"));
    at(op).computations = {ReqComp("to_apply")};
  }
  at(Opcode::kReduceScatter).attrs.push_back(Req("dimensions"));
  at(Opcode::kAllToAll).attrs = {Opt("replica_groups"), Opt("channel_id"), Opt("dimensions"), Opt("constrain_layout")};
  at(Opcode::kRaggedAllToAll).attrs = {Opt("replica_groups"), Opt("channel_id"), Opt("dimensions")};
  at(Opcode::kCollectiveBroadcast).attrs = {Opt("replica_groups"), Opt("channel_id")};
  for (Opcode op : {Opcode::kCollectivePermute, Opcode::kCollectivePermuteStart}) {
    at(op).attrs = {Req("source_target_pairs"), Opt("channel_id"), Opt("slice_sizes")};
  }

  // async_group_id= was printed on async ops by XLA versions of 2022-2023.
  at(Opcode::kAsyncStart).attrs = {Opt("async_execution_thread"), Opt("output_to_operand_aliasing"),
                                   Opt("async_group_id")};
  at(Opcode::kAsyncStart).computations = {ReqComp("calls")};
  for (Opcode op : {Opcode::kAsyncUpdate, Opcode::kAsyncDone}) {
    at(op).attrs = {Opt("async_execution_thread"), Opt("async_group_id")};
    at(op).computations = {OptComp("calls")};
  }

  // is_cross_program_prefetch= is the spelling of XLA versions before cross_program_prefetch_index=.
  at(Opcode::kCopyStart).attrs = {Opt("cross_program_prefetch_index"), Opt("is_cross_program_prefetch")};
  at(Opcode::kReshape).attrs = {Opt("inferred_dimension")};
  at(Opcode::kSort).attrs = {Req("dimensions"), Opt("is_stable")};
  at(Opcode::kSort).computations = {ReqComp("to_apply")};
  at(Opcode::kWhile).computations = {ReqComp("condition"), ReqComp("body")};
  for (Opcode op : {Opcode::kRecv, Opcode::kRecvDone, Opcode::kSend, Opcode::kSendDone}) {
    at(op).attrs = {Opt("channel_id"), Opt("is_host_transfer")};
  }
  at(Opcode::kGetTupleElement).attrs = {Req("index")};
  at(Opcode::kCall).attrs = {Opt("is_composite")};
  at(Opcode::kCall).computations = {ReqComp("to_apply")};
  at(Opcode::kReduceWindow).attrs = {Opt("window")};
  at(Opcode::kReduceWindow).computations = {ReqComp("to_apply")};
  at(Opcode::kConvolution).attrs = {Opt("window"),
                                    Req("dim_labels"),
                                    Opt("feature_group_count"),
                                    Opt("batch_group_count"),
                                    OptEnum("conv_kind", {"fprop", "wgrad", "dgrad", "unset"}),
                                    Precision()};
  at(Opcode::kFft).attrs = {ReqEnum("fft_type", {"FFT", "IFFT", "RFFT", "IRFFT"}), Req("fft_length")};
  at(Opcode::kTriangularSolve).attrs = {
      Opt("left_side"), Opt("lower"), Opt("unit_diagonal"),
      OptEnum("transpose_a", {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"})};
  at(Opcode::kCompare).attrs = {ReqEnum("direction", {"EQ", "NE", "GE", "GT", "LE", "LT"}),
                                OptEnum("type", {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"})};
  at(Opcode::kCholesky).attrs = {Opt("lower")};
  // Required unless the operand is a scalar; checked by the instruction parser.
  at(Opcode::kBroadcast).attrs = {Opt("dimensions")};
  at(Opcode::kConcatenate).attrs = {Req("dimensions")};
  at(Opcode::kMap).attrs = {Opt("dimensions")};
  at(Opcode::kMap).computations = {ReqComp("to_apply")};
  at(Opcode::kScan).attrs = {Req("dimensions"), Req("num_carries"), Opt("is_reverse"), Opt("is_associative")};
  at(Opcode::kScan).computations = {ReqComp("to_apply")};
  at(Opcode::kReduce).attrs = {Req("dimensions")};
  at(Opcode::kReduce).computations = {ReqComp("to_apply")};
  at(Opcode::kReverse).attrs = {Req("dimensions")};
  at(Opcode::kSelectAndScatter).attrs = {Opt("window")};
  at(Opcode::kSelectAndScatter).computations = {ReqComp("select"), ReqComp("scatter")};
  at(Opcode::kSlice).attrs = {Req("slice")};
  at(Opcode::kDynamicSlice).attrs = {Req("dynamic_slice_sizes")};
  at(Opcode::kTranspose).attrs = {Req("dimensions")};
  for (Opcode op : {Opcode::kBatchNormTraining, Opcode::kBatchNormInference, Opcode::kBatchNormGrad}) {
    at(op).attrs = {Req("epsilon"), Req("feature_index")};
  }
  at(Opcode::kPad).attrs = {Req("padding")};
  at(Opcode::kFusion).attrs = {ReqEnum("kind", {"kLoop", "kInput", "kOutput", "kCustom"}),
                               Opt("output_to_operand_aliasing")};
  at(Opcode::kFusion).computations = {ReqComp("calls")};
  at(Opcode::kInfeed).attrs = {Opt("infeed_config")};
  at(Opcode::kOutfeed).attrs = {Opt("outfeed_config"), Opt("outfeed_shape")};
  at(Opcode::kRng).attrs = {ReqEnum("distribution", {"rng_uniform", "rng_normal"})};
  at(Opcode::kRngGetAndUpdateState).attrs = {Req("delta")};
  at(Opcode::kRngBitGenerator).attrs = {ReqEnum("algorithm", {"rng_default", "rng_three_fry", "rng_philox"})};
  at(Opcode::kReducePrecision).attrs = {Req("exponent_bits"), Req("mantissa_bits")};
  // Which of these are required depends on the branch index type; checked by the instruction parser.
  at(Opcode::kConditional).computations = {OptComp("true_computation"), OptComp("false_computation"),
                                           OptCompList("branch_computations")};
  at(Opcode::kCustomCall).attrs = {
      Req("custom_call_target"),
      Opt("window"),
      Opt("dim_labels"),
      Opt("feature_group_count"),
      Opt("batch_group_count"),
      Opt("operand_layout_constraints"),
      Opt("custom_call_has_side_effect"),
      Opt("output_to_operand_aliasing"),
      OptEnum("padding_type", {"PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"}),
      Opt("literal"),
      Precision(),
      OptEnum("schedule", {"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"}),
      // XLA's parser rejects API_VERSION_UNSPECIFIED ("Invalid API version"; parse_instruction.cc says so).
      OptEnum("api_version", {"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                              "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"}),
  };
  at(Opcode::kCustomCall).computations = {OptComp("to_apply"), OptCompList("called_computations")};
  at(Opcode::kDot).attrs = DotDims();
  at(Opcode::kDot).attrs.push_back(DotAlgorithm());
  // Sparse dot (older XLA): sparsity=L.1@2:4 with the sparsity metadata as extra operands.
  at(Opcode::kDot).attrs.push_back(Opt("sparsity"));
  at(Opcode::kRaggedDot).attrs = DotDims();
  at(Opcode::kRaggedDot).attrs.push_back(Opt("lhs_ragged_dims"));
  at(Opcode::kRaggedDot).attrs.push_back(Opt("rhs_group_dims"));
  at(Opcode::kScaledDot).attrs = DotDims();
  at(Opcode::kScaledDot).attrs.push_back(DotAlgorithm());
  at(Opcode::kGather).attrs = {Req("offset_dims"),           Req("collapsed_slice_dims"),
                               Req("start_index_map"),       Req("index_vector_dim"),
                               Req("slice_sizes"),           Opt("indices_are_sorted"),
                               Opt("operand_batching_dims"), Opt("start_indices_batching_dims")};
  at(Opcode::kScatter).attrs = {Req("update_window_dims"),           Req("inserted_window_dims"),
                                Req("scatter_dims_to_operand_dims"), Req("index_vector_dim"),
                                Opt("indices_are_sorted"),           Opt("unique_indices"),
                                Opt("input_batching_dims"),          Opt("scatter_indices_batching_dims")};
  at(Opcode::kScatter).computations = {ReqComp("to_apply")};
  at(Opcode::kDomain).attrs = {Req("domain")};
  at(Opcode::kGetDimensionSize).attrs = {Req("dimensions")};
  at(Opcode::kSetDimensionSize).attrs = {Req("dimensions")};
  at(Opcode::kIota).attrs = {Req("iota_dimension")};
  at(Opcode::kTopK).attrs = {Req("k"), Opt("largest")};
  // Newer XLA opcodes without a settled text form: accept the attributes they are known to carry.
  at(Opcode::kShuffle).attrs = {Opt("dimensions"), Opt("mode")};
  return s;
}

}  // namespace

const OpSchema& GetOpSchema(Opcode opcode) {
  static const std::array<OpSchema, kNumOpcodes> schemas = BuildSchemas();
  return schemas[static_cast<size_t>(opcode)];
}

const OpAttrSpec* FindAttrSpec(const OpSchema& schema, std::string_view name) {
  for (const OpAttrSpec& spec : schema.attrs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const CompAttrSpec* FindCompAttrSpec(const OpSchema& schema, std::string_view name) {
  for (const CompAttrSpec& spec : schema.computations) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace xlac::hlo
