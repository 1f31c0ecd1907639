#include "compiler/auto_shard.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/compiler.h"
#include "ir/diagnostics.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/spmd/tiling.h"
#include "passes/tpu_cost_model.h"
#include "passes/tpu_memory.h"

namespace xlac {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<int64_t>());
}

int64_t BytesOf(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& s : shape.tuple_shapes) n += BytesOf(s);
    return n;
  }
  if (!shape.IsArray()) return 0;
  return shape.ByteSizeOf().value_or(0);
}

// Mesh axes per array dimension, major first.
using DimAxes = std::vector<std::vector<int64_t>>;

struct Candidate {
  DimAxes axes;
  std::optional<Sharding> sharding;  // nullopt never for a candidate (replicated is {replicated})
  std::string spec;
};

class Search {
 public:
  Search(const Module& module, const AutoShardConfig& config, const TpuTopology& topology)
      : module_(module), config_(config), topology_(topology) {
    n_ = Product(config.mesh_shape);
    std::vector<int64_t> iota(static_cast<size_t>(n_));
    std::iota(iota.begin(), iota.end(), 0);
    iota_mesh_ = config.device_ids.empty() || config.device_ids == iota;
    hbm_per_core_ = config.chip->hbm_bytes / std::max<int64_t>(1, config.chip->devices_per_chip);
  }

  std::string AxisLabel(int64_t axis) const {
    if (!config_.axis_names.empty()) return "'" + config_.axis_names[static_cast<size_t>(axis)] + "'";
    return std::to_string(axis);
  }

  std::string SpecOf(const DimAxes& axes) const {
    bool any = false;
    std::vector<std::string> entries;
    for (const std::vector<int64_t>& d : axes) {
      any |= !d.empty();
      if (d.empty()) {
        entries.push_back("None");
      } else if (d.size() == 1) {
        entries.push_back(AxisLabel(d[0]));
      } else {
        std::vector<std::string> labels;
        for (int64_t a : d) labels.push_back(AxisLabel(a));
        entries.push_back("(" + absl::StrJoin(labels, ", ") + ")");
      }
    }
    if (!any) return "replicated";
    if (entries.size() == 1) return "(" + entries[0] + ",)";
    return "(" + absl::StrJoin(entries, ", ") + ")";
  }

  // The NamedSharding rule of api/spmd.cc's ShardingFor: the mesh transposed to the used axes in dimension order,
  // then the unused ones (last_tile_dim_replicate).
  Sharding ShardingOf(const DimAxes& axes) const {
    const std::vector<int64_t>& mesh = config_.mesh_shape;
    std::vector<int64_t> order, tile_dims;
    std::vector<bool> used(mesh.size(), false);
    for (const std::vector<int64_t>& d : axes) {
      int64_t t = 1;
      for (int64_t a : d) {
        order.push_back(a);
        used[static_cast<size_t>(a)] = true;
        t *= mesh[static_cast<size_t>(a)];
      }
      tile_dims.push_back(t);
    }
    if (order.empty()) return Sharding::Replicated();
    int64_t replicated = 1;
    for (size_t a = 0; a < mesh.size(); ++a) {
      if (used[a]) continue;
      order.push_back(static_cast<int64_t>(a));
      replicated *= mesh[a];
    }
    Sharding s;
    s.kind = Sharding::Kind::kTiled;
    s.tile_dims = tile_dims;
    if (replicated > 1) {
      s.tile_dims.push_back(replicated);
      s.last_tile_dim_replicate = true;
    }
    if (iota_mesh_) {
      IotaList list;
      list.dims = s.tile_dims;
      list.reshape_dims = mesh;
      list.transpose_perm = order;
      bool identity = true;
      for (size_t i = 0; i < order.size(); ++i) identity &= order[i] == static_cast<int64_t>(i);
      if (identity) {
        list.reshape_dims = {n_};
        list.transpose_perm.clear();
      }
      s.iota = std::move(list);
      return s;
    }
    std::vector<int64_t> strides(mesh.size(), 1);
    for (size_t i = mesh.size(); i-- > 1;) strides[i - 1] = strides[i] * mesh[i];
    std::vector<int64_t> coord(order.size(), 0);
    for (int64_t flat = 0; flat < n_; ++flat) {
      int64_t source = 0;
      for (size_t k = 0; k < order.size(); ++k) source += coord[k] * strides[static_cast<size_t>(order[k])];
      s.device_ids.push_back(config_.device_ids[static_cast<size_t>(source)]);
      for (size_t k = order.size(); k-- > 0;) {
        if (++coord[k] < mesh[static_cast<size_t>(order[k])]) break;
        coord[k] = 0;
      }
    }
    return s;
  }

  // Replicated, then every assignment of the mesh's axes (of size > 1) to dimensions they divide.
  std::vector<Candidate> CandidatesFor(const std::vector<int64_t>& dims) const {
    std::vector<Candidate> out;
    const int64_t rank = static_cast<int64_t>(dims.size());
    out.push_back(Candidate{DimAxes(static_cast<size_t>(rank)), Sharding::Replicated(), "replicated"});
    std::vector<int64_t> axes;
    for (size_t a = 0; a < config_.mesh_shape.size(); ++a) {
      if (config_.mesh_shape[a] > 1) axes.push_back(static_cast<int64_t>(a));
    }
    if (rank == 0 || axes.empty()) return out;
    std::vector<int64_t> target(axes.size(), -1);  // axis -> dim or -1
    std::vector<std::string> seen;
    while (true) {
      // Odometer over (rank + 1)^axes.
      size_t k = 0;
      for (; k < target.size(); ++k) {
        if (++target[k] < rank) break;
        target[k] = -1;
      }
      if (k == target.size()) break;
      DimAxes base(static_cast<size_t>(rank));
      for (size_t i = 0; i < axes.size(); ++i) {
        if (target[i] >= 0) base[static_cast<size_t>(target[i])].push_back(axes[i]);
      }
      bool divides = true;
      for (int64_t d = 0; d < rank && divides; ++d) {
        int64_t t = 1;
        for (int64_t a : base[static_cast<size_t>(d)]) t *= config_.mesh_shape[static_cast<size_t>(a)];
        divides = dims[static_cast<size_t>(d)] % t == 0 && dims[static_cast<size_t>(d)] >= t;
      }
      if (!divides) continue;
      // Every order of the axes on each dimension.
      std::vector<DimAxes> variants = {base};
      for (int64_t d = 0; d < rank; ++d) {
        if (base[static_cast<size_t>(d)].size() < 2) continue;
        std::vector<DimAxes> next;
        for (const DimAxes& v : variants) {
          std::vector<int64_t> perm = v[static_cast<size_t>(d)];
          std::sort(perm.begin(), perm.end());
          do {
            DimAxes w = v;
            w[static_cast<size_t>(d)] = perm;
            next.push_back(std::move(w));
          } while (std::next_permutation(perm.begin(), perm.end()));
        }
        variants = std::move(next);
      }
      for (DimAxes& v : variants) {
        Sharding s = ShardingOf(v);
        std::string text = spmd::ShardingToString(s);
        if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
        seen.push_back(text);
        std::string spec = SpecOf(v);
        out.push_back(Candidate{std::move(v), std::move(s), std::move(spec)});
      }
    }
    return out;
  }

  struct Score {
    double seconds = kInf;  // inf: infeasible
    int64_t bytes = 0;
    bool memory_checked = false;
    std::string why;  // why it is infeasible
  };

  static std::string Key(const std::vector<std::optional<Sharding>>& plan) {
    std::string key;
    for (const std::optional<Sharding>& s : plan) absl::StrAppend(&key, s ? spmd::ShardingToString(*s) : "-", ";");
    return key;
  }

  // The module with `plan`'s parameter shardings, partitioned over the mesh; null with `why` when it fails.
  // `was_partitioned`: whether the partition step ran (and with it the optimization steps before partitioning).
  std::unique_ptr<Module> Partition(const std::vector<std::optional<Sharding>>& plan, std::string& why,
                                    bool* was_partitioned = nullptr) const {
    std::unique_ptr<Module> clone = module_.Clone();
    Computation* entry = clone->entry_computation();
    for (size_t i = 0; i < plan.size(); ++i) entry->parameters()[i]->set_sharding(plan[i]);
    CompilerOptions options;
    options.num_partitions = n_;
    options.optimization.tpu_numerics = true;  // as the step model below
    SpmdReport report;
    DiagnosticEngine diags;
    absl::StatusOr<bool> partitioned = PartitionModule(*clone, options, report, diags);
    if (!partitioned.ok()) {
      why = std::string(partitioned.status().message());
      return nullptr;
    }
    if (was_partitioned != nullptr) *was_partitioned = *partitioned;
    if (config_.require_sharded) {
      bool sharded = false;
      for (const Sharding& s : report.parameter_shardings) sharded |= s.IsTiled();
      if (!*partitioned || !sharded) {
        why = "no parameter is sharded (require_sharded)";
        return nullptr;
      }
    }
    return clone;
  }

  Score& Evaluate(const std::vector<std::optional<Sharding>>& plan) {
    std::string key = Key(plan);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    Score& score = cache_[key];
    ++evaluations_;
    bool was_partitioned = false;
    std::unique_ptr<Module> partitioned = Partition(plan, score.why, &was_partitioned);
    if (partitioned == nullptr) return score;
    const Computation* entry = partitioned->entry_computation();
    int64_t bytes = BytesOf(entry->root()->shape());
    for (const Instruction* p : entry->parameters()) bytes += BytesOf(p->shape());
    score.bytes = bytes;
    if (bytes > hbm_per_core_) {
      score.why = absl::StrCat("its parameters and results need ", FormatBytes(bytes), " per core, more than the ",
                               FormatBytes(hbm_per_core_), " of HBM");
      return score;
    }
    absl::StatusOr<TpuStepReport> step = ModelOptimizedTpuStep(*partitioned, topology_, /*num_replicas=*/1, n_,
                                                               /*tpu_numerics=*/true, was_partitioned);
    if (!step.ok()) {
      score.why = std::string(step.status().message());
      return score;
    }
    score.seconds = step->total_seconds();
    return score;
  }

  // The caller's full per-core memory check, run once per accepted assignment.
  bool FitsMemory(const std::vector<std::optional<Sharding>>& plan, Score& score) {
    if (!config_.per_core_bytes || score.memory_checked) return std::isfinite(score.seconds);
    score.memory_checked = true;
    std::string why;
    std::unique_ptr<Module> partitioned = Partition(plan, why);
    absl::StatusOr<int64_t> bytes =
        partitioned ? config_.per_core_bytes(*partitioned) : absl::StatusOr<int64_t>(absl::InternalError(why));
    if (!bytes.ok()) {
      score.seconds = kInf;
      score.why = std::string(bytes.status().message());
    } else if (*bytes > hbm_per_core_) {
      score.seconds = kInf;
      score.why = absl::StrCat("needs ", FormatBytes(*bytes), " of HBM per core, more than the ",
                               FormatBytes(hbm_per_core_));
    } else {
      score.bytes = *bytes;
    }
    return std::isfinite(score.seconds);
  }

  int64_t n() const { return n_; }
  int64_t evaluations() const { return evaluations_; }

 private:
  const Module& module_;
  const AutoShardConfig& config_;
  const TpuTopology& topology_;
  int64_t n_ = 1;
  bool iota_mesh_ = true;
  int64_t hbm_per_core_ = 0;
  std::map<std::string, Score> cache_;
  int64_t evaluations_ = 0;
};

std::string Seconds(double s) { return std::isfinite(s) ? FormatSeconds(s) : std::string("infeasible"); }

}  // namespace

absl::StatusOr<AutoShardResult> AutoShardModule(const Module& module, const AutoShardConfig& config) {
  const auto started = std::chrono::steady_clock::now();
  if (config.chip == nullptr) return absl::InvalidArgumentError("auto_shard: no TPU chip given");
  if (config.mesh_shape.empty()) return absl::InvalidArgumentError("auto_shard: the mesh has no axes");
  for (int64_t s : config.mesh_shape) {
    if (s < 1) return absl::InvalidArgumentError("auto_shard: a mesh axis has size < 1");
  }
  const int64_t n = Product(config.mesh_shape);
  if (!config.device_ids.empty() && static_cast<int64_t>(config.device_ids.size()) != n) {
    return absl::InvalidArgumentError("auto_shard: the device ids do not match the mesh shape");
  }
  if (!config.axis_names.empty() && config.axis_names.size() != config.mesh_shape.size()) {
    return absl::InvalidArgumentError("auto_shard: one axis name per mesh axis");
  }
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("auto_shard: the module has no entry computation");
  absl::StatusOr<TpuTopology> topology = DefaultTpuTopology(*config.chip, n);
  if (!topology.ok()) return topology.status();
  Search search(module, config, *topology);

  const std::vector<Instruction*>& params = entry->parameters();
  const size_t np = params.size();
  std::vector<std::optional<Sharding>> user(np);
  std::vector<int64_t> bytes(np, 0);
  int64_t largest = 0;
  for (size_t i = 0; i < np; ++i) {
    user[i] = params[i]->sharding();
    bytes[i] = BytesOf(params[i]->shape());
    if (!user[i] && params[i]->shape().IsArray()) largest = std::max(largest, bytes[i]);
  }
  // Searched: unannotated arrays of at least small_fraction of the largest; small: the other unannotated arrays.
  std::vector<int64_t> searched, small;
  for (size_t i = 0; i < np; ++i) {
    if (user[i] || !params[i]->shape().IsArray()) continue;
    const bool big = static_cast<double>(bytes[i]) >= config.small_fraction * static_cast<double>(largest) &&
                     params[i]->shape().rank() > 0;
    (big ? searched : small).push_back(static_cast<int64_t>(i));
  }
  std::stable_sort(searched.begin(), searched.end(), [&](int64_t a, int64_t b) {
    return bytes[static_cast<size_t>(a)] > bytes[static_cast<size_t>(b)];
  });

  // ------------------------------------------------------------------ seed plans
  const std::vector<int64_t>& mesh = config.mesh_shape;
  std::vector<int64_t> all_axes, data_axes;
  for (size_t a = 0; a < mesh.size(); ++a) {
    if (mesh[a] > 1) all_axes.push_back(static_cast<int64_t>(a));
  }
  data_axes.assign(all_axes.begin(), all_axes.end() - (all_axes.size() > 1 ? 1 : 0));
  const int64_t model_axis = all_axes.size() > 1 ? all_axes.back() : -1;
  auto axes_size = [&](const std::vector<int64_t>& axes) {
    int64_t t = 1;
    for (int64_t a : axes) t *= mesh[static_cast<size_t>(a)];
    return t;
  };
  // `axes` on dimension `dim` if its size allows, else nullopt.
  auto on_dim = [&](size_t p, int64_t dim, const std::vector<int64_t>& axes) -> std::optional<Sharding> {
    const std::vector<int64_t>& dims = params[p]->shape().dimensions;
    const int64_t t = axes_size(axes);
    if (axes.empty() || dim < 0 || dim >= static_cast<int64_t>(dims.size()) ||
        dims[static_cast<size_t>(dim)] % t != 0 || dims[static_cast<size_t>(dim)] < t) {
      return std::nullopt;
    }
    DimAxes d(dims.size());
    d[static_cast<size_t>(dim)] = axes;
    return search.ShardingOf(d);
  };
  // Batch parameters: the first array parameter of rank >= 1 and those of its shape (inputs and targets).
  std::vector<bool> batch(np, false);
  for (size_t i = 0; i < np; ++i) {
    if (!params[i]->shape().IsArray() || params[i]->shape().rank() == 0) continue;
    const Shape& first = params[i]->shape();
    for (size_t j = i; j < np; ++j) {
      const Shape& s = params[j]->shape();
      batch[j] = s.IsArray() && s.dimensions == first.dimensions;
    }
    batch[i] = true;
    break;
  }
  auto seed_with = [&](std::string name, auto weight, const std::vector<int64_t>& batch_axes) {
    AutoShardPlan plan{std::move(name), user};
    for (size_t i = 0; i < np; ++i) {
      if (user[i] || !params[i]->shape().IsArray()) continue;
      std::optional<Sharding> s;
      if (batch[i]) {
        s = on_dim(i, 0, batch_axes);
        if (!s && batch_axes.size() > 1) s = on_dim(i, 0, {batch_axes[0]});
      } else {
        s = weight(i);
      }
      plan.parameters[i] = s ? *s : Sharding::Replicated();
    }
    return plan;
  };
  std::vector<AutoShardPlan> seeds;
  seeds.push_back(AutoShardPlan{"propagation only", user});
  seeds.push_back(seed_with("data-parallel", [](size_t) { return std::optional<Sharding>(); }, all_axes));
  seeds.push_back(seed_with(
      "fsdp",
      [&](size_t i) -> std::optional<Sharding> {
        const std::vector<int64_t>& dims = params[i]->shape().dimensions;
        int64_t best = -1;
        for (size_t d = 0; d < dims.size(); ++d) {
          if (dims[d] >= n && dims[d] % n == 0 && (best < 0 || dims[d] > dims[static_cast<size_t>(best)])) {
            best = static_cast<int64_t>(d);
          }
        }
        return on_dim(i, best, all_axes);
      },
      all_axes));
  // Megatron-style: consecutive matrices (w1, w2) with w1's columns = w2's rows, w1 column- and w2 row-sharded
  // over the last mesh axis and the batch over the others ("megatron"), or both over the whole mesh and the batch
  // replicated ("tensor-parallel").
  std::vector<int> role(np, 0);  // 1: column, 2: row
  std::vector<size_t> matrices;
  for (size_t i = 0; i < np; ++i) {
    if (!user[i] && !batch[i] && params[i]->shape().IsArray() && params[i]->shape().rank() == 2) matrices.push_back(i);
  }
  for (size_t k = 0; k + 1 < matrices.size(); ++k) {
    const std::vector<int64_t>& a = params[matrices[k]]->shape().dimensions;
    const std::vector<int64_t>& b = params[matrices[k + 1]]->shape().dimensions;
    if (a[1] == b[0]) {
      role[matrices[k]] = 1;
      role[matrices[k + 1]] = 2;
      ++k;
    }
  }
  auto megatron = [&](const std::vector<int64_t>& model_axes) {
    return [&, model_axes](size_t i) -> std::optional<Sharding> {
      if (role[i] == 0) return std::nullopt;
      return on_dim(i, role[i] == 1 ? 1 : 0, model_axes);
    };
  };
  if (model_axis >= 0) seeds.push_back(seed_with("megatron", megatron({model_axis}), data_axes));
  if (!all_axes.empty()) seeds.push_back(seed_with("tensor-parallel", megatron(all_axes), {}));
  for (const AutoShardPlan& s : config.seeds) {
    if (s.parameters.size() != np) {
      return absl::InvalidArgumentError(absl::StrCat("auto_shard: the seed plan '", s.name, "' has ",
                                                     s.parameters.size(), " shardings for ", np, " parameters"));
    }
    AutoShardPlan plan = s;
    for (size_t i = 0; i < np; ++i) {
      if (user[i]) plan.parameters[i] = user[i];
    }
    seeds.push_back(std::move(plan));
  }

  AutoShardResult result;
  std::vector<std::string> seed_texts;
  struct Start {
    size_t seed;
    double seconds;
  };
  std::vector<Start> starts;
  for (size_t k = 0; k < seeds.size(); ++k) {
    const AutoShardPlan& plan = seeds[k];
    Search::Score& score = search.Evaluate(plan.parameters);
    if (std::isfinite(score.seconds)) search.FitsMemory(plan.parameters, score);
    result.seed_seconds.emplace_back(plan.name, score.seconds);
    seed_texts.push_back(absl::StrCat(plan.name, " ", Seconds(score.seconds)));
    if (std::isfinite(score.seconds)) starts.push_back({k, score.seconds});
  }
  if (starts.empty()) {
    const std::string& why = search.Evaluate(seeds.front().parameters).why;
    return absl::ResourceExhaustedError(absl::StrCat("auto_shard: no start plan fits on the mesh (",
                                                     absl::StrJoin(seed_texts, ", "), ")",
                                                     why.empty() ? "" : ": " + why));
  }
  std::stable_sort(starts.begin(), starts.end(), [](const Start& a, const Start& b) { return a.seconds < b.seconds; });
  // The descent runs from the best `starts` distinct start plans (a greedy descent stops in the first local minimum
  // it meets; different starts meet different ones), sharing the score cache.
  const size_t runs = std::min<size_t>(starts.size(), static_cast<size_t>(std::max(1, config.max_starts)));
  std::vector<std::string>& explain = result.explanation;
  std::vector<std::string> mesh_text;
  for (int64_t s : mesh) mesh_text.push_back(std::to_string(s));
  int64_t annotated = 0;
  for (size_t i = 0; i < np; ++i) annotated += user[i] ? 1 : 0;
  explain.push_back(absl::StrCat("auto-shard: mesh ", absl::StrJoin(mesh_text, "x"), " (", n, " devices) on ",
                                 config.chip->name, "; ", np, " parameters: ", searched.size(),
                                 " searched (largest first), ", small.size(), " small (kept from the start plan), ",
                                 annotated, " annotated by the user (kept)"));
  explain.push_back(absl::StrCat("auto-shard: start plans (modeled step): ", absl::StrJoin(seed_texts, ", "),
                                 "; descending from the best ", runs));

  std::vector<std::vector<Candidate>> candidates(np);
  for (int64_t p : searched) {
    candidates[static_cast<size_t>(p)] = search.CandidatesFor(params[static_cast<size_t>(p)]->shape().dimensions);
  }
  auto spec_of = [&](size_t pi, const std::optional<Sharding>& s) -> std::string {
    if (!s) return "unannotated";
    for (const Candidate& c : candidates[pi]) {
      if (*s == *c.sharding) return c.spec;
    }
    return spmd::ShardingToString(*s);
  };

  struct Run {
    std::vector<std::optional<Sharding>> plan;
    double best = kInf;
    std::vector<AutoShardChoice> choices;
    std::vector<std::string> lines;
  };
  auto descend = [&](std::vector<std::optional<Sharding>> current, double best) {
    Run run;
    for (int sweep = 1; sweep <= std::max(1, config.max_sweeps); ++sweep) {
      bool changed = false;
      for (int64_t p : searched) {
        const size_t pi = static_cast<size_t>(p);
        AutoShardChoice choice;
        choice.parameter = p;
        choice.name = params[pi]->name();
        choice.shape = ShapeToString(params[pi]->shape(), false);
        choice.sweep = sweep;
        // The candidates, and the parameter's current sharding when it is none of them (e.g. unannotated).
        std::vector<std::optional<Sharding>> options;
        for (const Candidate& c : candidates[pi]) options.push_back(c.sharding);
        if (std::find(options.begin(), options.end(), current[pi]) == options.end()) options.push_back(current[pi]);
        struct Tried {
          std::optional<Sharding> sharding;
          double seconds;
          bool current;
        };
        std::vector<Tried> tried;
        for (const std::optional<Sharding>& o : options) {
          std::vector<std::optional<Sharding>> plan = current;
          plan[pi] = o;
          const double s = search.Evaluate(plan).seconds;
          ++choice.candidates;
          if (!std::isfinite(s)) {
            ++choice.infeasible;
            continue;
          }
          if (o && o->kind == Sharding::Kind::kReplicated && !o->IsTuple()) choice.replicated_seconds = s;
          tried.push_back({o, s, o == current[pi]});
        }
        // Fastest first; the current sharding wins ties (no churn).
        std::stable_sort(tried.begin(), tried.end(), [](const Tried& a, const Tried& b) {
          if (a.seconds != b.seconds) return a.seconds < b.seconds;
          return a.current && !b.current;
        });
        for (const Tried& t : tried) {
          if (t.current || t.seconds >= best) break;  // nothing faster than what we have
          std::vector<std::optional<Sharding>> plan = current;
          plan[pi] = t.sharding;
          Search::Score& score = search.Evaluate(plan);
          if (!search.FitsMemory(plan, score)) {
            ++choice.infeasible;
            continue;
          }
          current[pi] = t.sharding;
          best = t.seconds;
          choice.changed = changed = true;
          break;
        }
        choice.spec = spec_of(pi, current[pi]);
        choice.sharding = current[pi] ? spmd::ShardingToString(*current[pi]) : "";
        choice.seconds = best;
        for (const Tried& t : tried) {
          if (t.sharding == current[pi]) continue;
          choice.runner_up_spec = spec_of(pi, t.sharding);
          choice.runner_up_seconds = t.seconds;
          break;
        }
        std::string line = absl::StrCat("auto-shard: sweep ", sweep, ": parameter ", p, " ", choice.name, " ",
                                        choice.shape, (choice.changed ? " -> " : " keeps "), choice.spec, ": ",
                                        Seconds(choice.seconds));
        if (!choice.runner_up_spec.empty()) {
          absl::StrAppend(&line, " (runner-up ", choice.runner_up_spec, ": ", Seconds(choice.runner_up_seconds));
        } else {
          absl::StrAppend(&line, " (no other feasible candidate");
        }
        if (choice.spec != "replicated" && choice.replicated_seconds > 0 && choice.runner_up_spec != "replicated") {
          absl::StrAppend(&line, "; replicated: ", Seconds(choice.replicated_seconds));
        }
        absl::StrAppend(&line, "; ", choice.candidates, " candidates",
                        choice.infeasible ? absl::StrCat(", ", choice.infeasible, " infeasible") : "", ")");
        run.lines.push_back(std::move(line));
        run.choices.push_back(std::move(choice));
      }
      if (!changed) break;
    }
    // The small parameters: all handed to propagation at once, or all replicated, if that is faster.
    for (int variant = 0; variant < 2 && !small.empty(); ++variant) {
      std::vector<std::optional<Sharding>> plan = current;
      for (int64_t p : small) {
        plan[static_cast<size_t>(p)] = variant == 0 ? std::nullopt : std::optional(Sharding::Replicated());
      }
      Search::Score& score = search.Evaluate(plan);
      if (score.seconds < best && search.FitsMemory(plan, score)) {
        run.lines.push_back(absl::StrCat("auto-shard: the ", small.size(), " small parameters ",
                                         variant == 0 ? "left to propagation" : "replicated", ": ",
                                         Seconds(score.seconds), " (was ", Seconds(best), ")"));
        best = score.seconds;
        current = plan;
      }
    }
    run.plan = std::move(current);
    run.best = best;
    return run;
  };

  std::optional<Run> winner;
  std::vector<std::string> summary;
  for (size_t r = 0; r < runs; ++r) {
    const AutoShardPlan& seed = seeds[starts[r].seed];
    Run run = descend(seed.parameters, starts[r].seconds);
    summary.push_back(absl::StrCat(seed.name, " ", Seconds(starts[r].seconds), " -> ", Seconds(run.best)));
    if (!winner || run.best < winner->best) {
      winner = std::move(run);
      result.start = seed.name;
    }
  }
  explain.push_back(absl::StrCat("auto-shard: descents: ", absl::StrJoin(summary, ", "), "; the best, from ",
                                 result.start, ":"));
  for (std::string& line : winner->lines) explain.push_back(std::move(line));
  result.choices = std::move(winner->choices);
  std::vector<std::optional<Sharding>> current = std::move(winner->plan);
  const double best = winner->best;
  Search::Score& final_score = search.Evaluate(current);
  search.FitsMemory(current, final_score);
  result.parameters = current;
  result.seconds = best;
  result.per_core_bytes = final_score.bytes;
  result.evaluations = search.evaluations();
  result.search_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  double start_seconds = kInf;
  for (const auto& [name, s] : result.seed_seconds) {
    if (name == result.start) start_seconds = s;
  }
  explain.push_back(absl::StrCat("auto-shard: plan: ", Seconds(best), " modeled step (", result.start, ": ",
                                 Seconds(start_seconds), "), ", FormatBytes(result.per_core_bytes),
                                 " per core; ", result.evaluations, " assignments partitioned and modeled in ",
                                 absl::StrFormat("%.2f", result.search_seconds), " s"));
  for (size_t i = 0; i < np; ++i) {
    explain.push_back(absl::StrCat("auto-shard:   parameter ", i, " ", params[i]->name(), " ",
                                   ShapeToString(params[i]->shape(), false), ": ",
                                   current[i] ? spmd::ShardingToString(*current[i]) : "unannotated",
                                   user[i] ? " (user)" : ""));
  }
  return result;
}

}  // namespace xlac
