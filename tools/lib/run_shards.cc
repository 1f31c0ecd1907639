#include "tools/lib/run_shards.h"

#include <fstream>
#include <sstream>

#include "ir/instruction.h"
#include "ir/shape.h"
#include "runtime/harness/npy.h"

namespace xlac {

std::string InputShardPath(const std::string& dir, int64_t device, int64_t parameter) {
  return dir + "/device_" + std::to_string(device) + "/result_" + std::to_string(parameter) + ".npy";
}

absl::StatusOr<std::vector<std::vector<Literal>>> ReadInputShards(const std::string& dir,
                                                                  const Computation& shard_entry, int64_t devices,
                                                                  int64_t begin, int64_t end) {
  std::vector<std::vector<Literal>> shards(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) {
    for (int64_t i = 0; i < shard_entry.parameter_count(); ++i) {
      const Shape& want = shard_entry.parameter(i)->shape();
      if (!want.IsArray()) {
        return absl::InvalidArgumentError("--input-shards: parameter " + std::to_string(i) + " has shape " +
                                          ShapeToString(want, false) + ", which a .npy file cannot hold");
      }
      if (d < begin || d >= end) {
        shards[static_cast<size_t>(d)].emplace_back(want);
        continue;
      }
      const std::string path = InputShardPath(dir, d, i);
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        return absl::NotFoundError("--input-shards: cannot open '" + path + "' (device " + std::to_string(d) +
                                   "'s shard of parameter " + std::to_string(i) + ")");
      }
      std::stringstream bytes;
      bytes << in.rdbuf();
      absl::StatusOr<Literal> value = harness::NpyToLiteral(bytes.str(), want.element_type);
      if (!value.ok()) {
        return absl::InvalidArgumentError("--input-shards: '" + path + "': " + std::string(value.status().message()));
      }
      if (value->shape().dimensions != want.dimensions) {
        return absl::InvalidArgumentError("--input-shards: '" + path + "' has shape " +
                                          harness::NpyShapeString(value->shape().dimensions) + ", but device " +
                                          std::to_string(d) + "'s shard of parameter " + std::to_string(i) + " is " +
                                          ShapeToString(want, false));
      }
      shards[static_cast<size_t>(d)].push_back(*std::move(value));
    }
  }
  return shards;
}

}  // namespace xlac
