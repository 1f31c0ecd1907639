// Per-opcode attribute printing: one schema table (opcode -> ordered attribute rules) reproducing the order and
// default-omission rules of XLA's PrintExtraAttributesImpl overrides (xla/hlo/ir/hlo_instructions.cc), then the
// called computations, sharding, frontend attributes, control predecessors, statistics and result accuracy that
// HloInstruction::PrintExtraAttributes (xla/hlo/ir/hlo_instruction.cc) appends.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/hlo/parser.h"
#include "frontend/hlo/print_internal.h"
#include "frontend/hlo/sharding_text.h"
#include "ir/computation.h"

namespace xlac::hlo_print {
namespace {

// When an attribute prints.
enum class When : uint8_t {
  kAlways,      // printed; when absent, printed as `dflt` if one is given
  kPresent,     // printed when present
  kTrue,        // boolean flag printed only when true
  kNonEmpty,    // printed when present with a non-empty value (list, string, window, ...)
  kNotDefault,  // printed when present and its text differs from `dflt`
  kSpecial,     // rule implemented in SpecialAttr()
};

struct AttrRule {
  std::string_view name;
  When when;
  const char* dflt = nullptr;
};

using R = AttrRule;
using W = When;

// Collectives (HloCollectiveInstruction) print channel_id, replica_groups and constrain_layout before their own
// attributes; dot-like ops print the dimension numbers (DotDimensionNumbersToString) and then PrintPrecisionConfig.
constexpr AttrRule kBatchNorm[] = {{"epsilon", W::kAlways}, {"feature_index", W::kAlways}};
constexpr AttrRule kFft[] = {{"fft_type", W::kAlways}, {"fft_length", W::kAlways, "{}"}};
constexpr AttrRule kAsyncStart[] = {{"async_execution_thread", W::kNotDefault, "\"main\""},
                                    {"output_to_operand_aliasing", W::kNonEmpty}};
constexpr AttrRule kCopyStart[] = {{"cross_program_prefetch_index", W::kPresent},
                                   {"is_cross_program_prefetch", W::kTrue}};
constexpr AttrRule kCompare[] = {{"direction", W::kAlways}, {"type", W::kSpecial}};
constexpr AttrRule kTriangularSolve[] = {{"left_side", W::kTrue},
                                         {"lower", W::kTrue},
                                         {"unit_diagonal", W::kTrue},
                                         {"transpose_a", W::kNotDefault, "TRANSPOSE_INVALID"}};
constexpr AttrRule kCholesky[] = {{"lower", W::kTrue}};
constexpr AttrRule kSendRecv[] = {{"channel_id", W::kPresent}, {"is_host_transfer", W::kTrue}};
constexpr AttrRule kTopK[] = {{"k", W::kAlways}, {"largest", W::kAlways, "true"}};
constexpr AttrRule kAllGather[] = {R{"channel_id", W::kPresent}, R{"replica_groups", W::kAlways, "{}"},
                                   R{"constrain_layout", W::kTrue}, R{"dimensions", W::kAlways},
                                   R{"use_global_device_ids", W::kTrue}};
constexpr AttrRule kAllReduce[] = {R{"channel_id", W::kPresent}, R{"replica_groups", W::kAlways, "{}"},
                                   R{"constrain_layout", W::kTrue}, R{"use_global_device_ids", W::kTrue}};
constexpr AttrRule kReduceScatter[] = {R{"channel_id", W::kPresent}, R{"replica_groups", W::kAlways, "{}"},
                                       R{"constrain_layout", W::kTrue}, R{"use_global_device_ids", W::kTrue},
                                       R{"dimensions", W::kAlways}};
constexpr AttrRule kAllToAll[] = {R{"channel_id", W::kPresent}, R{"replica_groups", W::kAlways, "{}"},
                                  R{"constrain_layout", W::kTrue}, R{"dimensions", W::kPresent}};
constexpr AttrRule kCollective[] = {R{"channel_id", W::kPresent}, R{"replica_groups", W::kAlways, "{}"},
                                    R{"constrain_layout", W::kTrue}};
constexpr AttrRule kCollectivePermute[] = {
    {"channel_id", W::kPresent}, {"source_target_pairs", W::kAlways, "{}"}, {"slice_sizes", W::kNonEmpty}};
constexpr AttrRule kDimensions[] = {{"dimensions", W::kAlways, "{}"}};
constexpr AttrRule kSort[] = {{"dimensions", W::kAlways, "{}"}, {"is_stable", W::kTrue}};
constexpr AttrRule kReshape[] = {{"inferred_dimension", W::kNotDefault, "-1"}};
constexpr AttrRule kMap[] = {{"dimensions", W::kSpecial}};
constexpr AttrRule kSlice[] = {{"slice", W::kAlways, "{}"}};
constexpr AttrRule kFusion[] = {{"kind", W::kAlways}, {"output_to_operand_aliasing", W::kNonEmpty}};
constexpr AttrRule kCall[] = {{"output_to_operand_aliasing", W::kNonEmpty}};
constexpr AttrRule kRng[] = {{"distribution", W::kAlways}};
constexpr AttrRule kParameter[] = {{"parameter_replication", W::kPresent}};
constexpr AttrRule kGetTupleElement[] = {{"index", W::kAlways, "0"}};
constexpr AttrRule kReducePrecision[] = {{"exponent_bits", W::kAlways}, {"mantissa_bits", W::kAlways}};
constexpr AttrRule kInfeed[] = {{"infeed_config", W::kNonEmpty}};
constexpr AttrRule kOutfeed[] = {{"outfeed_shape", W::kSpecial}, {"outfeed_config", W::kNonEmpty}};
constexpr AttrRule kConvolution[] = {R{"window", W::kNonEmpty},
                                     R{"dim_labels", W::kAlways},
                                     R{"feature_group_count", W::kNotDefault, "1"},
                                     R{"batch_group_count", W::kNotDefault, "1"},
                                     R{"operand_precision", W::kSpecial},
                                     R{"algorithm", W::kNotDefault, "unset"}};
constexpr AttrRule kWindowOnly[] = {{"window", W::kNonEmpty}};
constexpr AttrRule kCustomCall[] = {R{"window", W::kNonEmpty},
                                    R{"dim_labels", W::kPresent},
                                    R{"feature_group_count", W::kNotDefault, "1"},
                                    R{"batch_group_count", W::kNotDefault, "1"},
                                    R{"operand_precision", W::kSpecial},
                                    R{"algorithm", W::kNotDefault, "unset"},
                                    R{"padding_type", W::kNotDefault, "PADDING_INVALID"},
                                    R{"custom_call_target", W::kAlways, "\"\""},
                                    R{"operand_layout_constraints", W::kPresent},
                                    R{"custom_call_has_side_effect", W::kTrue},
                                    R{"literal", W::kPresent},
                                    R{"output_to_operand_aliasing", W::kNonEmpty},
                                    R{"schedule", W::kNotDefault, "SCHEDULE_NONE"},
                                    R{"api_version", W::kNotDefault, "API_VERSION_ORIGINAL"}};
constexpr AttrRule kPad[] = {{"padding", W::kAlways, ""}};
constexpr AttrRule kDynamicSlice[] = {{"dynamic_slice_sizes", W::kAlways, "{}"}};
constexpr AttrRule kGather[] = {{"offset_dims", W::kAlways, "{}"},
                                {"collapsed_slice_dims", W::kAlways, "{}"},
                                {"start_index_map", W::kAlways, "{}"},
                                {"operand_batching_dims", W::kNonEmpty},
                                {"start_indices_batching_dims", W::kNonEmpty},
                                {"index_vector_dim", W::kAlways},
                                {"slice_sizes", W::kAlways, "{}"},
                                {"indices_are_sorted", W::kTrue}};
constexpr AttrRule kScatter[] = {{"update_window_dims", W::kAlways, "{}"},
                                 {"inserted_window_dims", W::kAlways, "{}"},
                                 {"scatter_dims_to_operand_dims", W::kAlways, "{}"},
                                 {"input_batching_dims", W::kNonEmpty},
                                 {"scatter_indices_batching_dims", W::kNonEmpty},
                                 {"index_vector_dim", W::kAlways},
                                 {"indices_are_sorted", W::kTrue},
                                 {"unique_indices", W::kTrue}};
constexpr AttrRule kIota[] = {{"iota_dimension", W::kAlways}};
constexpr AttrRule kDot[] = {R{"lhs_batch_dims", W::kNonEmpty},   R{"lhs_contracting_dims", W::kAlways, "{}"},
                             R{"rhs_batch_dims", W::kNonEmpty},   R{"rhs_contracting_dims", W::kAlways, "{}"},
                             R{"operand_precision", W::kSpecial}, R{"algorithm", W::kNotDefault, "unset"},
                             R{"sparsity", W::kNonEmpty}};
constexpr AttrRule kRaggedDot[] = {R{"lhs_batch_dims", W::kNonEmpty},      R{"lhs_contracting_dims", W::kAlways, "{}"},
                                   R{"rhs_batch_dims", W::kNonEmpty},      R{"rhs_contracting_dims", W::kAlways, "{}"},
                                   R{"lhs_ragged_dims", W::kAlways, "{}"}, R{"rhs_group_dims", W::kNonEmpty},
                                   R{"operand_precision", W::kSpecial},    R{"algorithm", W::kNotDefault, "unset"}};
constexpr AttrRule kDomain[] = {{"domain", W::kPresent}};
constexpr AttrRule kDimensionSize[] = {{"dimensions", W::kAlways}};
constexpr AttrRule kRngGetAndUpdateState[] = {{"delta", W::kAlways}};
constexpr AttrRule kRngBitGenerator[] = {{"algorithm", W::kAlways}};
constexpr AttrRule kScan[] = {{"dimensions", W::kAlways, "{}"},
                              {"num_carries", W::kPresent},
                              {"is_reverse", W::kTrue},
                              {"is_associative", W::kPresent}};

std::span<const AttrRule> RulesFor(Opcode op) {
  switch (op) {
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return kBatchNorm;
    case Opcode::kFft:
      return kFft;
    case Opcode::kAsyncStart:
      return kAsyncStart;
    case Opcode::kCopyStart:
      return kCopyStart;
    case Opcode::kCompare:
      return kCompare;
    case Opcode::kTriangularSolve:
      return kTriangularSolve;
    case Opcode::kCholesky:
      return kCholesky;
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return kSendRecv;
    case Opcode::kTopK:
      return kTopK;
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
      return kAllGather;
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      return kAllReduce;
    case Opcode::kReduceScatter:
      return kReduceScatter;
    case Opcode::kAllToAll:
      return kAllToAll;
    case Opcode::kRaggedAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectiveReduce:
      return kCollective;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      return kCollectivePermute;
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kReduce:
    case Opcode::kTranspose:
    case Opcode::kBroadcast:
      return kDimensions;
    case Opcode::kSort:
      return kSort;
    case Opcode::kReshape:
      return kReshape;
    case Opcode::kMap:
      return kMap;
    case Opcode::kSlice:
      return kSlice;
    case Opcode::kFusion:
      return kFusion;
    case Opcode::kCall:
      return kCall;
    case Opcode::kRng:
      return kRng;
    case Opcode::kParameter:
      return kParameter;
    case Opcode::kGetTupleElement:
      return kGetTupleElement;
    case Opcode::kReducePrecision:
      return kReducePrecision;
    case Opcode::kInfeed:
      return kInfeed;
    case Opcode::kOutfeed:
      return kOutfeed;
    case Opcode::kConvolution:
      return kConvolution;
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
      return kWindowOnly;
    case Opcode::kCustomCall:
      return kCustomCall;
    case Opcode::kPad:
      return kPad;
    case Opcode::kDynamicSlice:
      return kDynamicSlice;
    case Opcode::kGather:
      return kGather;
    case Opcode::kScatter:
      return kScatter;
    case Opcode::kIota:
      return kIota;
    case Opcode::kDot:
    case Opcode::kScaledDot:
      return kDot;
    case Opcode::kRaggedDot:
      return kRaggedDot;
    case Opcode::kDomain:
      return kDomain;
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      return kDimensionSize;
    case Opcode::kRngGetAndUpdateState:
      return kRngGetAndUpdateState;
    case Opcode::kRngBitGenerator:
      return kRngBitGenerator;
    case Opcode::kScan:
      return kScan;
    default:
      return {};
  }
}

std::string FormatFloatAttr(double v) {
  // XLA keeps these as float and prints them with absl::StrCat (six significant digits).
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.6g", static_cast<double>(static_cast<float>(v)));
  return buf;
}

std::string IntListText(const std::vector<int64_t>& v) { return absl::StrCat("{", absl::StrJoin(v, ","), "}"); }

std::string ValueText(const AttrValue& v) {
  switch (v.kind) {
    case AttrKind::kInt:
      return std::to_string(v.get<int64_t>());
    case AttrKind::kBool:
      return v.get<bool>() ? "true" : "false";
    case AttrKind::kFloat:
      return FormatFloatAttr(v.get<double>());
    case AttrKind::kString:
      return absl::StrCat("\"", CEscape(v.get<std::string>()), "\"");
    case AttrKind::kEnum:
    case AttrKind::kRaw:
      return v.get<std::string>();
    case AttrKind::kIntList:
      return IntListText(v.get<std::vector<int64_t>>());
    case AttrKind::kIntListList: {
      std::string out = "{";
      const auto& lists = v.get<std::vector<std::vector<int64_t>>>();
      for (size_t i = 0; i < lists.size(); ++i) {
        if (i > 0) out += ",";
        out += IntListText(lists[i]);
      }
      return out + "}";
    }
    case AttrKind::kEnumList:
      return absl::StrCat("{", absl::StrJoin(v.get<std::vector<std::string>>(), ","), "}");
    case AttrKind::kWindow:
      return absl::StrCat("{", WindowToString(v.get<Window>()), "}");
    case AttrKind::kConvDnums:
      return ConvDnumsToString(v.get<ConvolutionDimensionNumbers>());
    case AttrKind::kPaddingConfig:
      return PaddingConfigToString(v.get<PaddingConfig>());
    case AttrKind::kSlice:
      return SliceRangesToString(v.get<std::vector<SliceRange>>());
    case AttrKind::kReplicaGroups:
      return ReplicaGroupsToString(v.get<ReplicaGroups>());
    case AttrKind::kShapeList: {
      std::vector<std::string> shapes;
      for (const Shape& s : v.get<std::vector<Shape>>()) shapes.push_back(PrintShape(s, /*print_layout=*/true));
      return absl::StrCat("{", absl::StrJoin(shapes, ", "), "}");
    }
    case AttrKind::kLiteral: {
      const auto& literal = v.get<std::shared_ptr<const Literal>>();
      return literal ? LiteralText(*literal, /*print_shape=*/true) : "{...}";
    }
    case AttrKind::kAliasing:
      return AliasingToString(v.get<std::vector<OutputOperandAlias>>());
  }
  return "";
}

bool IsEmptyValue(const AttrValue& v) {
  switch (v.kind) {
    case AttrKind::kString:
    case AttrKind::kEnum:
    case AttrKind::kRaw:
      return v.get<std::string>().empty();
    case AttrKind::kIntList:
      return v.get<std::vector<int64_t>>().empty();
    case AttrKind::kIntListList:
      return v.get<std::vector<std::vector<int64_t>>>().empty();
    case AttrKind::kEnumList:
      return v.get<std::vector<std::string>>().empty();
    case AttrKind::kWindow:
      return v.get<Window>().dimensions.empty();
    case AttrKind::kSlice:
      return v.get<std::vector<SliceRange>>().empty();
    case AttrKind::kShapeList:
      return v.get<std::vector<Shape>>().empty();
    case AttrKind::kAliasing:
      return v.get<std::vector<OutputOperandAlias>>().empty();
    default:
      return false;
  }
}

bool IsTrue(const AttrValue& v) { return v.kind != AttrKind::kBool || v.get<bool>(); }

// Comparison::DefaultComparisonType for the operands' element type.
std::string_view DefaultComparisonType(PrimitiveType type) {
  if (IsFloatingPointType(type) || IsComplexType(type)) return "FLOAT";
  if (IsSignedIntegralType(type)) return "SIGNED";
  return "UNSIGNED";
}

// The rules XLA implements in code rather than as a plain default.
void SpecialAttr(const Instruction& inst, const AttrRule& rule, const AttrValue* v, std::vector<std::string>& out) {
  std::string_view name = rule.name;
  if (name == "type") {  // compare: omitted when it is the default for the operand type
    if (v == nullptr || inst.operand_count() == 0) return;
    std::string text = ValueText(*v);
    if (text != DefaultComparisonType(inst.operand(0)->shape().element_type)) out.push_back("type=" + text);
  } else if (name == "operand_precision") {  // omitted when every operand uses the default precision
    if (v == nullptr) return;
    bool all_default = true;
    if (v->kind == AttrKind::kEnumList) {
      for (const std::string& p : v->get<std::vector<std::string>>()) all_default &= p == "default" || p == "DEFAULT";
    } else {
      all_default = false;
    }
    if (!all_default) out.push_back("operand_precision=" + ValueText(*v));
  } else if (name == "dimensions") {  // map: XLA always uses (and prints) all dimensions of the result
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < inst.shape().rank(); ++i) dims.push_back(i);
    out.push_back("dimensions=" + IntListText(dims));
  } else if (name == "outfeed_shape") {  // a single shape; the parser defaults it to the outfed operand's shape
    const Shape* shape = nullptr;
    absl::StatusOr<Shape> parsed = absl::InvalidArgumentError("no shape");
    if (v != nullptr && v->kind == AttrKind::kShapeList && v->get<std::vector<Shape>>().size() == 1) {
      shape = &v->get<std::vector<Shape>>()[0];
    } else if (v != nullptr && v->kind == AttrKind::kRaw) {
      // Kept as written; reprinted so that missing layouts appear as XLA prints them.
      parsed = ParseShape(v->get<std::string>());
      if (parsed.ok()) shape = &*parsed;
    } else if (v == nullptr && inst.operand_count() > 0) {
      shape = &inst.operand(0)->shape();
    }
    if (shape != nullptr) {
      out.push_back("outfeed_shape=" + PrintShape(*shape, /*print_layout=*/true));
    } else if (v != nullptr) {
      out.push_back("outfeed_shape=" + ValueText(*v));
    }
  }
}

const std::string* FindExtra(const Instruction& inst, std::string_view name) {
  for (const auto& [key, value] : inst.extra_attributes()) {
    if (key == name) return &value;
  }
  return nullptr;
}

// Attributes that PrintExtraAttributes prints itself (not as part of the opcode-specific list).
bool IsInstructionLevelAttr(std::string_view name) { return name == "is_composite"; }

void AppendRuleAttrs(const Instruction& inst, std::span<const AttrRule> rules, const HloPrintOptions& options,
                     std::vector<std::string>& out) {
  const AttrMap& attrs = inst.attrs();
  for (const AttrRule& rule : rules) {
    const AttrValue* v = attrs.Find(rule.name);
    // Some opcode attributes (parameter_replication) are kept as raw text among the extra attributes.
    AttrValue raw;
    if (v == nullptr) {
      if (const std::string* text = FindExtra(inst, rule.name)) {
        std::string compact;
        for (char ch : *text) {
          if (ch != ' ' && ch != '\n' && ch != '\t' && ch != '\r') compact += ch;
        }
        raw = AttrValue::Raw(std::move(compact));
        v = &raw;
      }
    }
    std::string prefix = std::string(rule.name) + "=";
    switch (rule.when) {
      case When::kAlways:
        if (v != nullptr) {
          out.push_back(prefix + ValueText(*v));
        } else if (rule.dflt != nullptr) {
          out.push_back(prefix + rule.dflt);
        }
        break;
      case When::kPresent:
        if (v != nullptr) out.push_back(prefix + ValueText(*v));
        break;
      case When::kTrue:
        if (v != nullptr && IsTrue(*v)) out.push_back(prefix + ValueText(*v));
        break;
      case When::kNonEmpty:
        if (v != nullptr && !IsEmptyValue(*v)) out.push_back(prefix + ValueText(*v));
        break;
      case When::kNotDefault:
        if (v != nullptr) {
          std::string text = ValueText(*v);
          if (rule.dflt == nullptr || text != rule.dflt) out.push_back(prefix + text);
        }
        break;
      case When::kSpecial:
        SpecialAttr(inst, rule, v, out);
        break;
    }
  }
  // Attributes the schema does not know keep their source order after the known ones, so nothing is lost.
  for (const auto& [name, value] : attrs.entries()) {
    if (IsInstructionLevelAttr(name)) continue;
    bool known = false;
    for (const AttrRule& rule : rules) known |= rule.name == name;
    if (!known) out.push_back(absl::StrCat(name, "=", ValueText(value)));
  }
  (void)options;
}

std::string JoinComputationNames(const std::vector<Computation*>& comps, const HloPrintOptions& options) {
  std::vector<std::string> names;
  for (const Computation* c : comps) names.push_back(NameRef(c->name(), options));
  return absl::StrJoin(names, ", ");
}

// `role` is the opcode whose called-computation attributes apply: the instruction's own, or for an async-start that
// stores its wrapped instruction inline, the wrapped opcode.
void AppendCalledComputations(const Instruction& inst, Opcode role, const HloPrintOptions& options,
                              std::vector<std::string>& out) {
  const auto& called = inst.called_computations();
  auto ref = [&](size_t i) { return i < called.size() ? NameRef(called[i]->name(), options) : std::string(); };
  switch (role) {
    case Opcode::kWhile:
      out.push_back("condition=" + ref(0));
      out.push_back("body=" + ref(1));
      return;
    case Opcode::kSelectAndScatter:
      out.push_back("select=" + ref(0));
      out.push_back("scatter=" + ref(1));
      return;
    case Opcode::kConditional:
      if (inst.operand_count() > 0 && inst.operand(0)->shape().element_type == PrimitiveType::kPred) {
        out.push_back("true_computation=" + ref(0));
        out.push_back("false_computation=" + ref(1));
      } else {
        out.push_back("branch_computations={" + JoinComputationNames(called, options) + "}");
      }
      return;
    case Opcode::kCall:
    case Opcode::kMap:
    case Opcode::kReduceWindow:
    case Opcode::kReduce:
    case Opcode::kAllReduce:
    case Opcode::kReduceScatter:
    case Opcode::kAllReduceStart:
    case Opcode::kScatter:
    case Opcode::kSort:
    case Opcode::kScan:
      if (!called.empty()) out.push_back("to_apply=" + ref(0));
      if (role == Opcode::kCall) {
        const AttrValue* composite = inst.FindAttr("is_composite");
        if (composite != nullptr && IsTrue(*composite)) out.push_back("is_composite=true");
      }
      return;
    case Opcode::kCustomCall:
      if (!called.empty()) out.push_back("called_computations={" + JoinComputationNames(called, options) + "}");
      return;
    case Opcode::kAsyncStart:
      if (!UsesAsyncSyntaxSugar(inst, options) && !called.empty()) out.push_back("calls=" + ref(0));
      return;
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return;
    default:
      if (!called.empty()) out.push_back("calls=" + JoinComputationNames(called, options));
      return;
  }
}

}  // namespace

void AppendOpcodeAttributes(const Instruction& inst, const HloPrintOptions& options, std::vector<std::string>& out) {
  switch (inst.opcode()) {
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return;  // XLA prints nothing of its own for these
    case Opcode::kAsyncStart: {
      if (!UsesAsyncSyntaxSugar(inst, options)) {
        AppendRuleAttrs(inst, kAsyncStart, options, out);
        return;
      }
      // Syntax sugar: the async-start's own thread, then everything the wrapped instruction would print.
      const AttrValue* thread = inst.FindAttr("async_execution_thread");
      if (thread != nullptr && ValueText(*thread) != "\"main\"") {
        out.push_back("async_execution_thread=" + ValueText(*thread));
      }
      const Computation* wrapped = AsyncWrappedComputation(inst);
      auto wrapped_rules = RulesFor(*AsyncWrappedOpcode(inst));
      // Without a wrapped computation the parser keeps one attribute list, and an aliasing the wrapped opcode
      // takes too (custom-call, fusion, call) was parsed as the wrapped op's: it prints where that op prints it,
      // so that the text does not depend on where the input wrote it (nor on whether it came from a computation).
      const bool aliasing_is_wrapped =
          wrapped == nullptr && OpcodePrintsAttribute(*AsyncWrappedOpcode(inst), "output_to_operand_aliasing");
      const AttrValue* aliasing = inst.FindAttr("output_to_operand_aliasing");
      if (aliasing != nullptr && !IsEmptyValue(*aliasing) && !aliasing_is_wrapped) {
        out.push_back("output_to_operand_aliasing=" + ValueText(*aliasing));
      }
      if (wrapped != nullptr) {
        AppendExtraAttributes(*wrapped->root(), options, out);
        return;
      }
      // No wrapped computation: the wrapped instruction's attributes live on the async-start itself.
      std::vector<AttrRule> rules;
      for (const AttrRule& r : kAsyncStart) {
        if (!(aliasing_is_wrapped && r.name == "output_to_operand_aliasing")) rules.push_back(r);
      }
      rules.insert(rules.end(), wrapped_rules.begin(), wrapped_rules.end());
      std::vector<std::string> own;
      AppendRuleAttrs(inst, rules, options, own);
      size_t skip = out.size();
      for (std::string& attr : own) {
        // The async-start's own attributes were printed above; a name the wrapped opcode shares stays.
        bool printed = false;
        for (size_t i = 0; i < skip; ++i) printed |= out[i] == attr;
        if (!printed) out.push_back(std::move(attr));
      }
      return;
    }
    default:
      AppendRuleAttrs(inst, RulesFor(inst.opcode()), options, out);
      return;
  }
}

// A named (mesh) sharding prints as written while it still means the instruction's sharding (a pass may have
// replaced it since) and metadata is printed; otherwise the sharding prints in XLA's tiled form.
static std::string ShardingText(const Instruction& inst, const HloPrintOptions& options) {
  if (const std::string* named = FindExtra(inst, "sharding")) {
    DiagnosticEngine diags;
    std::optional<Sharding> parsed = ParseShardingText(*named, diags);
    if (parsed.has_value() && *parsed == *inst.sharding() &&
        (options.print_metadata || named->find("metadata=") == std::string::npos)) {
      return *named;
    }
  }
  return ShardingToString(*inst.sharding(), options.print_metadata);
}

bool OpcodePrintsAttribute(Opcode op, std::string_view name) {
  auto rules = RulesFor(op);
  return std::any_of(rules.begin(), rules.end(), [&](const AttrRule& r) { return r.name == name; });
}

bool IsPrintedWithExtraAttributes(std::string_view name) {
  return name == "statistics" || name == "result_accuracy" || name == "parameter_replication" || name == "sharding";
}

void AppendExtraAttributes(const Instruction& inst, const HloPrintOptions& options, std::vector<std::string>& out) {
  AppendOpcodeAttributes(inst, options, out);
  Opcode role = inst.opcode();
  if (role == Opcode::kAsyncStart && StoresWrappedInline(inst) && AsyncWrappedOpcode(inst)) {
    role = *AsyncWrappedOpcode(inst);
  }
  AppendCalledComputations(inst, role, options, out);
  if (inst.sharding()) out.push_back("sharding=" + ShardingText(inst, options));
  if (!inst.frontend_attributes().empty()) {
    out.push_back("frontend_attributes=" + FrontendAttributesToString(inst.frontend_attributes()));
  }
  if (options.print_control_dependencies && !inst.control_predecessors().empty()) {
    std::vector<std::string> names;
    for (const Instruction* pred : inst.control_predecessors()) names.push_back(NameRef(pred->name(), options));
    out.push_back("control-predecessors={" + absl::StrJoin(names, ", ") + "}");
  }
  for (std::string_view name : {"statistics", "result_accuracy"}) {
    if (const std::string* value = FindExtra(inst, name)) out.push_back(std::string(name) + "=" + *value);
  }
}

}  // namespace xlac::hlo_print
