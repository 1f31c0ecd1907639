#include "ir/device_counts.h"

#include <algorithm>

#include "fmt/format.h"
#include "ir/collective_groups.h"

namespace xlac {
namespace {

// The largest device count one kind of evidence asks for, and the first instruction that asks for it.
struct Evidence {
  int64_t devices = 0;
  const Instruction* inst = nullptr;
  std::string what;

  void Offer(int64_t n, const Instruction& at, std::string description) {
    if (n <= devices) return;
    devices = n;
    inst = &at;
    what = std::move(description);
  }
};

// Devices a sharding spans: its tile assignment's size (Shardy and GSPMD shardings list every device of the mesh,
// replicated ones in a trailing dim), or the device of a maximal sharding.
int64_t ShardingDevices(const Sharding& s) {
  switch (s.kind) {
    case Sharding::Kind::kTiled: {
      int64_t n = 1;
      for (int64_t d : s.tile_dims) n *= std::max<int64_t>(d, 1);
      for (int64_t id : s.device_ids) n = std::max(n, id + 1);
      return n;
    }
    case Sharding::Kind::kMaximal:
      return s.device + 1;
    case Sharding::Kind::kTuple: {
      int64_t n = 0;
      for (const Sharding& e : s.tuple_elements) n = std::max(n, ShardingDevices(e));
      return n;
    }
    default:
      return 0;
  }
}

int64_t MaxListId(const std::vector<std::vector<int64_t>>& lists) {
  int64_t max_id = -1;
  for (const auto& l : lists) {
    for (int64_t id : l) max_id = std::max(max_id, id);
  }
  return max_id;
}

struct AllEvidence {
  Evidence shardings;      // partitions
  Evidence partition_ids;  // partitions: cross-partition collectives
  Evidence replica_ids;    // replicas: cross-replica collectives (and replica ids across partitions)
  Evidence flattened_ids;  // replicas x partitions
};

void Collect(const Module& module, AllEvidence& ev) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->sharding().has_value()) {
        if (int64_t n = ShardingDevices(*inst->sharding()); n > 1) {
          ev.shardings.Offer(n, *inst, fmt::format("the sharding of %{} spans {} devices", inst->name(), n));
        }
      }
      std::vector<std::vector<int64_t>> ids = ReplicaGroupsOf(*inst);
      const char* kind = "replica_groups";
      if (ids.empty()) {
        const AttrValue* pairs = inst->FindAttr("source_target_pairs");
        if (pairs == nullptr || pairs->kind != AttrKind::kIntListList) continue;
        ids = pairs->get<std::vector<std::vector<int64_t>>>();
        kind = "source_target_pairs";
      }
      const int64_t n = MaxListId(ids) + 1;
      if (n <= 1) continue;
      const std::string what =
          fmt::format("the {} of %{} ({}) name {} devices", kind, inst->name(), OpcodeName(inst->opcode()), n);
      switch (StrictCollectiveGroupMode(*inst)) {
        case CollectiveGroupMode::kCrossReplica:
        case CollectiveGroupMode::kCrossReplicaAndPartition:
          ev.replica_ids.Offer(n, *inst, what);
          break;
        case CollectiveGroupMode::kCrossPartition:
          ev.partition_ids.Offer(n, *inst, what);
          break;
        case CollectiveGroupMode::kFlattenedId:
          ev.flattened_ids.Offer(n, *inst, what);
          break;
      }
    }
  }
}

}  // namespace

bool ResolveDeviceCounts(Module& module, const DeviceCountOptions& options, DiagnosticEngine& diags) {
  ModuleConfig& config = module.mutable_config();
  if (options.num_partitions > 0) {
    config.num_partitions = options.num_partitions;
    config.num_partitions_given = true;
    config.device_count_source = "given on the command line";
  }
  if (options.num_replicas > 0) {
    config.replica_count = options.num_replicas;
    config.replica_count_given = true;
    config.device_count_source = "given on the command line";
  }
  if (options.num_partitions > 0 || options.num_replicas > 0) return true;

  AllEvidence ev;
  Collect(module, ev);
  std::string source;
  const Evidence* from = nullptr;
  auto take = [&](int64_t& count, const Evidence& e, const char* axis) {
    count = e.devices;
    source += fmt::format("{}{} {} from {}", source.empty() ? "" : "; ", count, axis, e.what);
    if (from == nullptr) from = &e;
  };
  if (!config.num_partitions_given) {
    if (ev.shardings.devices > 1) take(config.num_partitions, ev.shardings, "partitions");
    // Ids of cross-partition collectives read as replica ids when partitions are 1 and replicas several
    // (ir/collective_groups.h's leniency); only ids beyond the replica count make partitions.
    const int64_t replicas = config.replica_count_given ? config.replica_count : 1;
    if (ev.partition_ids.devices > config.num_partitions && (replicas == 1 || ev.partition_ids.devices > replicas)) {
      take(config.num_partitions, ev.partition_ids, "partitions");
    }
  }
  if (!config.replica_count_given) {
    // The same leniency the other way: test programs leave out channel ids on collectives over partitions.
    const int64_t partitions = config.num_partitions;
    if (ev.replica_ids.devices > 1 && (partitions == 1 || ev.replica_ids.devices > partitions)) {
      take(config.replica_count, ev.replica_ids, "replicas");
    }
  }
  // Flattened ids number replica x partition devices; an SPMD program's are partitions.
  if (ev.flattened_ids.devices > config.replica_count * config.num_partitions) {
    if (!config.num_partitions_given) {
      const int64_t r = std::max<int64_t>(config.replica_count, 1);
      config.num_partitions = (ev.flattened_ids.devices + r - 1) / r;
      source += fmt::format("{}{} partitions from {}", source.empty() ? "" : "; ", config.num_partitions,
                            ev.flattened_ids.what);
      if (from == nullptr) from = &ev.flattened_ids;
    } else if (!config.replica_count_given) {
      const int64_t p = std::max<int64_t>(config.num_partitions, 1);
      config.replica_count = (ev.flattened_ids.devices + p - 1) / p;
      source +=
          fmt::format("{}{} replicas from {}", source.empty() ? "" : "; ", config.replica_count, ev.flattened_ids.what);
      if (from == nullptr) from = &ev.flattened_ids;
    }
  }
  if (from == nullptr) return true;
  config.device_count_source = source;
  diags.Note(from->inst->loc(), fmt::format("the module does not state its device count: {}", source));
  return true;
}

}  // namespace xlac
