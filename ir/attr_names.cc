// The one table mapping every opcode-specific attribute name XLA prints to its value kind.
#include <string_view>

#include "ir/attributes.h"

namespace xlac {
namespace {

struct NameKind {
  std::string_view name;
  AttrKind kind;
};

// Sorted by name for binary search.
constexpr NameKind kAttrKinds[] = {
    {"algorithm", AttrKind::kEnum},  // dot: dot_bf16_bf16_f32; rng-bit-generator: rng_philox
    {"api_version", AttrKind::kEnum},
    {"async_execution_thread", AttrKind::kString},
    {"async_group_id", AttrKind::kInt},
    {"batch_group_count", AttrKind::kInt},
    {"channel_id", AttrKind::kInt},
    {"collapsed_slice_dims", AttrKind::kIntList},
    {"constrain_layout", AttrKind::kBool},
    {"conv_kind", AttrKind::kEnum},
    {"cross_program_prefetch_index", AttrKind::kInt},
    {"custom_call_has_side_effect", AttrKind::kBool},
    {"custom_call_target", AttrKind::kString},
    {"delta", AttrKind::kInt},
    {"dim_labels", AttrKind::kConvDnums},
    {"dimensions", AttrKind::kIntList},
    {"direction", AttrKind::kEnum},
    {"distribution", AttrKind::kEnum},
    {"domain", AttrKind::kRaw},  // {kind="sharding", entry={...}, exit={...}}
    {"dynamic_slice_sizes", AttrKind::kIntList},
    {"epsilon", AttrKind::kFloat},
    {"exponent_bits", AttrKind::kInt},
    {"feature_group_count", AttrKind::kInt},
    {"feature_index", AttrKind::kInt},
    {"fft_length", AttrKind::kIntList},
    {"fft_type", AttrKind::kEnum},
    {"index", AttrKind::kInt},
    {"index_vector_dim", AttrKind::kInt},
    {"indices_are_sorted", AttrKind::kBool},
    {"infeed_config", AttrKind::kString},
    {"inferred_dimension", AttrKind::kInt},
    {"input_batching_dims", AttrKind::kIntList},
    {"inserted_window_dims", AttrKind::kIntList},
    {"iota_dimension", AttrKind::kInt},
    {"is_associative", AttrKind::kBool},
    {"is_composite", AttrKind::kBool},
    {"is_cross_program_prefetch", AttrKind::kBool},
    {"is_host_transfer", AttrKind::kBool},
    {"is_reverse", AttrKind::kBool},
    {"is_stable", AttrKind::kBool},
    {"k", AttrKind::kInt},
    {"kind", AttrKind::kEnum},  // fusion kind: kLoop, kInput, kOutput, kCustom
    {"largest", AttrKind::kBool},
    {"left_side", AttrKind::kBool},
    {"lhs_batch_dims", AttrKind::kIntList},
    {"lhs_contracting_dims", AttrKind::kIntList},
    {"lhs_ragged_dims", AttrKind::kIntList},
    {"literal", AttrKind::kLiteral},
    {"lower", AttrKind::kBool},
    {"mantissa_bits", AttrKind::kInt},
    {"mode", AttrKind::kEnum},
    {"num_carries", AttrKind::kInt},
    {"offset_dims", AttrKind::kIntList},
    {"operand_batching_dims", AttrKind::kIntList},
    {"operand_layout_constraints", AttrKind::kShapeList},
    {"operand_precision", AttrKind::kEnumList},
    {"outfeed_config", AttrKind::kString},
    {"outfeed_shape", AttrKind::kRaw},  // a shape, kept as written
    {"output_to_operand_aliasing", AttrKind::kAliasing},
    {"padding", AttrKind::kPaddingConfig},
    {"padding_type", AttrKind::kEnum},
    {"replica_groups", AttrKind::kReplicaGroups},
    {"rhs_batch_dims", AttrKind::kIntList},
    {"rhs_contracting_dims", AttrKind::kIntList},
    {"rhs_group_dims", AttrKind::kIntList},
    {"scatter_dims_to_operand_dims", AttrKind::kIntList},
    {"scatter_indices_batching_dims", AttrKind::kIntList},
    {"schedule", AttrKind::kEnum},
    {"slice", AttrKind::kSlice},
    // gather slice sizes; collective-permute's combined form slice_sizes={{1},{2}} is stored as kIntListList.
    {"slice_sizes", AttrKind::kIntList},
    {"source_target_pairs", AttrKind::kIntListList},
    {"sparsity", AttrKind::kRaw},  // L.1@2:4_R.0@2:4
    {"start_index_map", AttrKind::kIntList},
    {"start_indices_batching_dims", AttrKind::kIntList},
    {"transpose_a", AttrKind::kEnum},
    {"type", AttrKind::kEnum},  // compare type: FLOAT, TOTALORDER, SIGNED, UNSIGNED
    {"unique_indices", AttrKind::kBool},
    {"unit_diagonal", AttrKind::kBool},
    {"update_window_dims", AttrKind::kIntList},
    {"use_global_device_ids", AttrKind::kBool},
    {"window", AttrKind::kWindow},
};

constexpr bool IsSorted() {
  for (size_t i = 1; i < std::size(kAttrKinds); ++i) {
    if (!(kAttrKinds[i - 1].name < kAttrKinds[i].name)) return false;
  }
  return true;
}
static_assert(IsSorted(), "kAttrKinds must stay sorted by name");

}  // namespace

std::optional<AttrKind> AttrKindForName(std::string_view name) {
  size_t lo = 0, hi = std::size(kAttrKinds);
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (kAttrKinds[mid].name < name) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < std::size(kAttrKinds) && kAttrKinds[lo].name == name) return kAttrKinds[lo].kind;
  return std::nullopt;
}

}  // namespace xlac
