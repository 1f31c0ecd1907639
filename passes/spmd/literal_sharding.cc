#include "passes/spmd/literal_sharding.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "passes/spmd/tiling.h"

namespace xlac::spmd {
namespace {

Sharding ElementSharding(const Sharding& sharding, size_t i) {
  if (!sharding.IsTuple()) return sharding;
  return i < sharding.tuple_elements.size() ? sharding.tuple_elements[i] : Sharding::Replicated();
}

// Copies the box [src_start, src_start + extent) of `src` (dims `src_dims`) to [dst_start, ...) of `dst`.
void CopyBox(const uint8_t* src, const std::vector<int64_t>& src_dims, const std::vector<int64_t>& src_start,
             uint8_t* dst, const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_start,
             const std::vector<int64_t>& extent, int64_t element_bytes) {
  const size_t rank = extent.size();
  for (int64_t e : extent) {
    if (e <= 0) return;
  }
  if (rank == 0) {
    std::memcpy(dst, src, static_cast<size_t>(element_bytes));
    return;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t row = extent[rank - 1] * element_bytes;
  while (true) {
    int64_t s = 0, d = 0;
    for (size_t i = 0; i < rank; ++i) {
      s = s * src_dims[i] + src_start[i] + index[i];
      d = d * dst_dims[i] + dst_start[i] + index[i];
    }
    std::memcpy(dst + d * element_bytes, src + s * element_bytes, static_cast<size_t>(row));
    size_t i = rank - 1;
    while (i-- > 0) {
      if (++index[i] < extent[i]) break;
      index[i] = 0;
    }
    if (i == static_cast<size_t>(-1)) return;
  }
}

int64_t ElementBytes(const Literal& literal) {
  return literal.element_count() == 0 ? 0 : literal.byte_size() / literal.element_count();
}

}  // namespace

absl::StatusOr<Literal> ShardLiteral(const Literal& global, const Sharding& sharding, int64_t partition,
                                     int64_t num_partitions) {
  const Shape& shape = global.shape();
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (size_t i = 0; i < global.tuple_elements().size(); ++i) {
      XLAC_ASSIGN_OR_RETURN(
          Literal e, ShardLiteral(global.tuple_elements()[i], ElementSharding(sharding, i), partition, num_partitions));
      elements.push_back(std::move(e));
    }
    return Literal::CreateTuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);
  XLAC_ASSIGN_OR_RETURN(Tiling tiling, TilingOf(sharding, shape.rank(), num_partitions));
  // A whole-array shard shares the global literal's bytes (copy on write): 32 devices of a replicated 2 GiB
  // parameter hold it once.
  if (tiling.manual || tiling.IsReplicated()) return global;
  Shape shard_shape = ShardShape(shape, tiling);
  std::vector<int64_t> offsets = ShardOffsets(shape.dimensions, tiling, partition);
  if (shard_shape.dimensions == shape.dimensions &&
      std::all_of(offsets.begin(), offsets.end(), [](int64_t o) { return o == 0; })) {
    return global;
  }
  Literal shard(shard_shape);
  std::vector<int64_t> extent(shard_shape.dimensions.size());
  for (size_t i = 0; i < extent.size(); ++i) {
    extent[i] = std::min(shard_shape.dimensions[i], shape.dimensions[i] - offsets[i]);
  }
  CopyBox(global.raw_data(), shape.dimensions, offsets, shard.mutable_raw_data(), shard_shape.dimensions,
          std::vector<int64_t>(extent.size(), 0), extent, ElementBytes(global));
  return shard;
}

absl::StatusOr<Literal> AssembleLiteral(const std::vector<const Literal*>& shards, const Sharding& sharding,
                                        const Shape& global_shape) {
  const int64_t n = static_cast<int64_t>(shards.size());
  if (global_shape.IsTuple()) {
    std::vector<Literal> elements;
    for (size_t i = 0; i < global_shape.tuple_shapes.size(); ++i) {
      std::vector<const Literal*> parts;
      for (const Literal* s : shards) parts.push_back(&s->tuple_elements().at(i));
      XLAC_ASSIGN_OR_RETURN(Literal e,
                            AssembleLiteral(parts, ElementSharding(sharding, i), global_shape.tuple_shapes[i]));
      elements.push_back(std::move(e));
    }
    return Literal::CreateTuple(std::move(elements));
  }
  Shape shape = global_shape;
  if (!shape.IsArray()) return Literal(shape);
  XLAC_ASSIGN_OR_RETURN(Tiling tiling, TilingOf(sharding, shape.rank(), n));
  Literal global(shape);
  if (tiling.manual || tiling.IsReplicated()) {
    const Literal* from = shards.at(static_cast<size_t>(tiling.maximal_device.value_or(0)));
    if (from->byte_size() != global.byte_size()) {
      return absl::InternalError(
          absl::StrCat("a replicated result has ", from->byte_size(), " bytes, expected ", global.byte_size()));
    }
    if (global.byte_size() > 0) std::memcpy(global.mutable_raw_data(), from->raw_data(), global.byte_size());
    return global;
  }
  std::vector<int64_t> shard_dims = ShardDims(shape.dimensions, tiling);
  for (int64_t p = 0; p < n; ++p) {
    const Literal& shard = *shards[p];
    if (shard.shape().dimensions != shard_dims) {
      return absl::InternalError(absl::StrCat("partition ", p, " returned a shard of the wrong shape"));
    }
    std::vector<int64_t> offsets = ShardOffsets(shape.dimensions, tiling, p);
    std::vector<int64_t> extent(shard_dims.size());
    for (size_t i = 0; i < extent.size(); ++i) extent[i] = std::min(shard_dims[i], shape.dimensions[i] - offsets[i]);
    CopyBox(shard.raw_data(), shard_dims, std::vector<int64_t>(extent.size(), 0), global.mutable_raw_data(),
            shape.dimensions, offsets, extent, ElementBytes(global));
  }
  return global;
}

}  // namespace xlac::spmd
