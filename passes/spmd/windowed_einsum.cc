// Windowed einsum, GSPMD's collective matmul (XLA's dot_handler.cc EmitWindowedDotGeneral), in its two main forms:
//
//  - all-gather: the result needs operand X whole along a free dimension g that X holds in N blocks. Instead of
//    all-gathering X, every core keeps its block, and in iteration i computes the dot of the other operand with the
//    block it holds (block (p + i) mod N for the core at ring position p), writes it into that block's slot of the
//    result with a dynamic-update-slice, and passes the block to its ring predecessor;
//  - reduce-scatter: the operands are sharded on a contracting dimension and the result is wanted scattered by the
//    same N cores along a dimension d. The accumulator for one slot of d travels around the ring: in iteration i the
//    core at position p adds its partial dot for slot (p + i + 1) mod N to the accumulator it received, so after N
//    steps each core holds the full sum of its own slot p.
//
// Loop form: a while loop with a tuple carry (the iteration index, the operands, the travelling value), as XLA emits
// by default, rather than an unrolled chain: the program stays the same size for 4 or 256 cores, and a scheduler
// overlapping the loop's permute with its dot needs only the one body. The loop runs N - 1 iterations with one
// collective-permute each (the same bytes as the single collective); the remaining dot (the last block for the
// all-gather, the first slot for the reduce-scatter) is peeled out of the loop so that no iteration sends a value
// nobody uses. Within an iteration the permute and the dot are independent, which is what lets them overlap.
#include "passes/spmd/windowed_einsum.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"

namespace xlac::spmd {
namespace {

// The devices of `groups` as rings: every device in exactly one group, all groups of one size n >= 2. A core sends
// to its predecessor in its group, so it receives from its successor.
struct Ring {
  int64_t n = 0;
  std::vector<int64_t> position;  // per device: its index in its group
  std::vector<std::pair<int64_t, int64_t>> to_previous;
};

std::optional<Ring> MakeRing(const std::vector<std::vector<int64_t>>& groups, int64_t num_devices) {
  if (groups.empty()) return std::nullopt;
  Ring ring;
  ring.n = static_cast<int64_t>(groups[0].size());
  if (ring.n < 2) return std::nullopt;
  ring.position.assign(static_cast<size_t>(num_devices), -1);
  for (const std::vector<int64_t>& g : groups) {
    if (static_cast<int64_t>(g.size()) != ring.n) return std::nullopt;
    for (int64_t k = 0; k < ring.n; ++k) {
      const int64_t device = g[static_cast<size_t>(k)];
      if (device < 0 || device >= num_devices || ring.position[static_cast<size_t>(device)] >= 0) return std::nullopt;
      ring.position[static_cast<size_t>(device)] = k;
      ring.to_previous.emplace_back(device, g[static_cast<size_t>((k + ring.n - 1) % ring.n)]);
    }
  }
  if (std::find(ring.position.begin(), ring.position.end(), -1) != ring.position.end()) return std::nullopt;
  return ring;
}

// Whether a collective of `bytes` per core should become a windowed loop. In a fusion being partitioned the loop cuts
// the fusion like a collective does (handlers_fusion.cc).
bool Windowed(ComputationBuilder& b, int64_t bytes) {
  const int64_t threshold = b.partitioner().options().windowed_einsum_threshold_bytes;
  return threshold > 0 && bytes >= threshold;
}

// Every device holds the same block under both tilings (the replicas may be ordered differently).
bool SameBlocks(const Tiling& a, const Tiling& b, int64_t num_devices) {
  if (a.manual || b.manual || a.manual_subgroup != 1 || b.manual_subgroup != 1 || a.tiles != b.tiles) return false;
  for (int64_t device = 0; device < num_devices; ++device) {
    std::optional<std::vector<int64_t>> ca = DeviceCoordinates(a, device), cb = DeviceCoordinates(b, device);
    if (!ca || !cb || !std::equal(ca->begin(), ca->begin() + a.rank(), cb->begin())) return false;
  }
  return true;
}

Instruction* S32Op(ComputationBuilder& b, Opcode op, Instruction* x, Instruction* y) {
  return b.Add(op, Shape::Scalar(PrimitiveType::kS32), {x, y});
}

// (position + i + shift) mod n, times `chunk`: the element offset of the slot this core works on in iteration i.
Instruction* SlotOffset(ComputationBuilder& b, const Ring& ring, Instruction* i, int64_t shift, int64_t chunk) {
  Instruction* slot = S32Op(b, Opcode::kAdd, b.TableLookup(ring.position), i);
  if (shift != 0) slot = S32Op(b, Opcode::kAdd, slot, b.ConstantS32(shift));
  slot = S32Op(b, Opcode::kRemainder, slot, b.ConstantS32(ring.n));
  return S32Op(b, Opcode::kMultiply, slot, b.ConstantS32(chunk));
}

// Start indices that are 0 except `offset` at `dim`.
std::vector<Instruction*> StartsAt(ComputationBuilder& b, int64_t rank, int64_t dim, Instruction* offset) {
  std::vector<Instruction*> starts;
  for (int64_t k = 0; k < rank; ++k) starts.push_back(k == dim ? offset : b.ConstantS32(0));
  return starts;
}

// A collective-permute inside the loop runs once per iteration: the report counts its bytes that many times.
Instruction* LoopPermute(ComputationBuilder& b, Instruction* value, const Ring& ring, int64_t trips,
                         const Instruction& source) {
  Instruction* cp = b.CollectivePermute(value, ring.to_previous, source);
  if (SpmdReport* report = b.partitioner().report(); report != nullptr && !report->collectives.empty()) {
    report->collectives.back().group_size = ring.n;
    report->collectives.back().bytes_per_core *= trips;
  }
  return cp;
}

using RingStep =
    std::function<std::vector<Instruction*>(ComputationBuilder&, Instruction* i, const std::vector<Instruction*>&)>;

// A while loop running `step` for i = first, ..., last - 1 on the state (i, values...); returns the final values.
std::vector<Instruction*> RingLoop(ComputationBuilder& b, const Instruction& dot, int64_t first, int64_t last,
                                   std::vector<Instruction*> values, const RingStep& step) {
  Module& module = b.partitioner().module();
  const Shape index_shape = Shape::Scalar(PrimitiveType::kS32);
  std::vector<Shape> shapes = {index_shape};
  for (Instruction* v : values) shapes.push_back(v->shape());
  const Shape state = Shape::Tuple(shapes);

  Computation* body = module.AddComputation(
      std::make_unique<Computation>(module.UniqueComputationName(absl::StrCat(dot.name(), ".windowed_body"))));
  {
    ComputationBuilder bb(b.partitioner(), body);
    Instruction* param =
        body->AddInstruction(Instruction::CreateParameter(0, module.UniqueInstructionName("state"), state));
    Instruction* i = bb.Gte(param, 0);
    std::vector<Instruction*> carried;
    for (size_t k = 0; k < values.size(); ++k) carried.push_back(bb.Gte(param, static_cast<int64_t>(k + 1)));
    std::vector<Instruction*> next = step(bb, i, carried);
    next.insert(next.begin(), S32Op(bb, Opcode::kAdd, i, bb.ConstantS32(1)));
    body->set_root(bb.Add(Opcode::kTuple, state, std::move(next)));
  }
  Computation* cond = module.AddComputation(
      std::make_unique<Computation>(module.UniqueComputationName(absl::StrCat(dot.name(), ".windowed_cond"))));
  {
    ComputationBuilder cb(b.partitioner(), cond);
    Instruction* param =
        cond->AddInstruction(Instruction::CreateParameter(0, module.UniqueInstructionName("state"), state));
    Instruction* less =
        cb.Add(Opcode::kCompare, Shape::Scalar(PrimitiveType::kPred), {cb.Gte(param, 0), cb.ConstantS32(last)});
    less->SetAttr("direction", AttrValue::Enum("LT"));
    cond->set_root(less);
  }
  values.insert(values.begin(), b.ConstantS32(first));
  Instruction* loop = b.Add(Opcode::kWhile, state, {b.Add(Opcode::kTuple, state, std::move(values))},
                            absl::StrCat(dot.name(), ".windowed"));
  loop->set_called_computations({cond, body});
  // The cost model (and XLA) read the trip count from here.
  loop->set_backend_config(absl::StrCat("{\"known_trip_count\":{\"n\":\"", last - first, "\"}}"), /*raw=*/true);
  std::vector<Instruction*> results;
  for (size_t k = 1; k < shapes.size(); ++k) results.push_back(b.Gte(loop, static_cast<int64_t>(k)));
  return results;
}

// Where free dimension `dim` of operand `which` (0 = lhs) lands in the dot's result.
int64_t ResultDimOfFree(const DotDims& d, int which, int64_t dim) {
  const std::vector<int64_t>& free = which == 0 ? d.lhs_free : d.rhs_free;
  const int64_t base = static_cast<int64_t>(d.lhs_batch.size()) + (which == 0 ? 0 : d.lhs_free.size());
  return base + (std::find(free.begin(), free.end(), dim) - free.begin());
}

}  // namespace

absl::StatusOr<std::optional<PValue>> WindowedAllGatherDot(ComputationBuilder& b, const Instruction& dot,
                                                           const DotDims& d, const Tiling& out,
                                                           const Tiling& lhs_target, const Tiling& rhs_target) {
  if (b.partitioner().options().windowed_einsum_threshold_bytes <= 0 || !dot.shape().IsArray()) return std::nullopt;
  struct Candidate {
    int which = -1;
    int64_t dim = -1;
    Tiling tiling;
    int64_t bytes = 0;
  };
  std::optional<Candidate> best;
  for (int which = 0; which < 2; ++which) {
    const Instruction* operand = dot.operand(which);
    const Tiling& target = which == 0 ? lhs_target : rhs_target;
    absl::StatusOr<Tiling> held = TilingOf(b.Get(operand).sharding, operand->shape().rank(), b.num_devices());
    if (!held.ok() || held->manual || held->manual_subgroup != 1) continue;
    const std::vector<int64_t>& free = which == 0 ? d.lhs_free : d.rhs_free;
    std::vector<int64_t> gathered;
    for (int64_t dim : free) {
      if (held->tiles[dim] > 1 && target.tiles[dim] == 1) gathered.push_back(dim);
    }
    if (gathered.size() != 1) continue;
    // Exactly an all-gather along that dimension must reach the target; anything else is today's general reshard.
    std::vector<std::vector<int64_t>> keep(static_cast<size_t>(held->rank()));
    for (int64_t k = 0; k < held->rank(); ++k) {
      if (k != gathered[0]) keep[static_cast<size_t>(k)] = {k};
    }
    if (!SameBlocks(RegroupAxes(*held, keep), target, b.num_devices())) continue;
    const int64_t bytes = ShardShape(operand->shape(), target).ByteSizeOf().value_or(0);
    if (!Windowed(b, bytes) || (best && best->bytes >= bytes)) continue;
    best = Candidate{which, gathered[0], *held, bytes};
  }
  if (!best) return std::nullopt;
  std::optional<Ring> ring = MakeRing(GroupsAlongAxes(best->tiling, {best->dim}), b.num_devices());
  if (!ring || ring->n != best->tiling.tiles[best->dim]) return std::nullopt;

  const int other = 1 - best->which;
  XLAC_ASSIGN_OR_RETURN(PValue y,
                        b.ReshardToTiling(b.Get(dot.operand(other)), other == 0 ? lhs_target : rhs_target, dot));
  Instruction* x = b.Get(dot.operand(best->which)).hlo;
  const int64_t chunk = x->shape().dimensions[static_cast<size_t>(best->dim)];
  const int64_t r = ResultDimOfFree(d, best->which, best->dim);
  const Shape result_shard = ShardShape(dot.shape(), out);
  Shape padded = result_shard;
  padded.dimensions[static_cast<size_t>(r)] = chunk * ring->n;
  const int64_t rank = padded.rank();
  const int x_index = best->which;
  // One block of the result: the dot of the other operand with the block of X held, into its slot.
  auto compute = [&, x_index](ComputationBuilder& cb, Instruction* i, Instruction* held, Instruction* other_value,
                              Instruction* acc) {
    Instruction* partial =
        x_index == 0 ? LocalDot(cb, dot, d, held, other_value) : LocalDot(cb, dot, d, other_value, held);
    std::vector<Instruction*> operands = {acc, partial};
    for (Instruction* s : StartsAt(cb, rank, r, SlotOffset(cb, *ring, i, 0, chunk))) operands.push_back(s);
    return cb.Add(Opcode::kDynamicUpdateSlice, acc->shape(), std::move(operands));
  };
  const int64_t trips = ring->n - 1;
  Instruction* init = b.Broadcast(b.Zero(padded.element_type), padded);
  std::vector<Instruction*> state = RingLoop(
      b, dot, 0, trips, {x, y.hlo, init},
      [&](ComputationBuilder& cb, Instruction* i, const std::vector<Instruction*>& v) -> std::vector<Instruction*> {
        Instruction* next = LoopPermute(cb, v[0], *ring, trips, dot);
        return {next, v[1], compute(cb, i, v[0], v[1], v[2])};
      });
  Instruction* result = compute(b, b.ConstantS32(trips), state[0], state[1], state[2]);
  if (padded.dimensions != result_shard.dimensions) result = b.Slice(result, result_shard.dimensions);
  b.partitioner().Note(dot, absl::StrCat("windowed einsum: all-gather of operand ", best->which, " (", best->bytes,
                                         " bytes per core) as a loop of ", trips, " collective-permute",
                                         trips == 1 ? "" : "s", " over ", ring->n, " cores"));
  return PValue{result, ToSharding(out), dot.shape()};
}

Instruction* WindowedReduceScatterDot(ComputationBuilder& b, const Instruction& dot, const DotDims& d, Instruction* lhs,
                                      Instruction* rhs, PrimitiveType sum_type, int64_t dim, int64_t chunk,
                                      const std::vector<std::vector<int64_t>>& groups) {
  if (b.partitioner().options().windowed_einsum_threshold_bytes <= 0) return nullptr;
  std::optional<Ring> ring = MakeRing(groups, b.num_devices());
  if (!ring) return nullptr;
  // The operand dimensions the scattered result dimension comes from: both operands' for a batch dimension.
  const int64_t nb = static_cast<int64_t>(d.lhs_batch.size());
  const int64_t nlf = static_cast<int64_t>(d.lhs_free.size());
  int64_t lhs_dim = -1, rhs_dim = -1;
  if (dim < nb) {
    lhs_dim = d.lhs_batch[static_cast<size_t>(dim)];
    rhs_dim = d.rhs_batch[static_cast<size_t>(dim)];
  } else if (dim < nb + nlf) {
    lhs_dim = d.lhs_free[static_cast<size_t>(dim - nb)];
  } else {
    rhs_dim = d.rhs_free[static_cast<size_t>(dim - nb - nlf)];
  }
  std::vector<int64_t> partial_dims;
  for (int64_t k : d.lhs_batch) partial_dims.push_back(lhs->shape().dimensions[static_cast<size_t>(k)]);
  for (int64_t k : d.lhs_free) partial_dims.push_back(lhs->shape().dimensions[static_cast<size_t>(k)]);
  for (int64_t k : d.rhs_free) partial_dims.push_back(rhs->shape().dimensions[static_cast<size_t>(k)]);
  partial_dims[static_cast<size_t>(dim)] = chunk * ring->n;
  if (!Windowed(b, Shape::Array(sum_type, partial_dims).ByteSizeOf().value_or(0))) return nullptr;

  // Uneven: the operand is padded (with zeros: rows past the end of the result) to whole chunks.
  auto pad = [&](Instruction* operand, int64_t k) {
    if (k < 0 || operand->shape().dimensions[static_cast<size_t>(k)] == chunk * ring->n) return operand;
    std::vector<int64_t> high(operand->shape().dimensions.size(), 0);
    high[static_cast<size_t>(k)] = chunk * ring->n - operand->shape().dimensions[static_cast<size_t>(k)];
    return b.PadHigh(operand, high);
  };
  lhs = pad(lhs, lhs_dim);
  rhs = pad(rhs, rhs_dim);
  // This core's partial result for the slot it works on in iteration i.
  auto partial = [&](ComputationBuilder& cb, Instruction* i, Instruction* l, Instruction* r) {
    Instruction* offset = SlotOffset(cb, *ring, i, 1, chunk);
    auto slice = [&](Instruction* operand, int64_t k) {
      if (k < 0) return operand;
      std::vector<int64_t> sizes = operand->shape().dimensions;
      sizes[static_cast<size_t>(k)] = chunk;
      return cb.DynamicSlice(operand, StartsAt(cb, operand->shape().rank(), k, offset), sizes);
    };
    return LocalDot(cb, dot, d, slice(l, lhs_dim), slice(r, rhs_dim), sum_type);
  };
  const int64_t trips = ring->n - 1;
  Instruction* first = partial(b, b.ConstantS32(0), lhs, rhs);
  std::vector<Instruction*> state = RingLoop(
      b, dot, 1, ring->n, {lhs, rhs, first},
      [&](ComputationBuilder& cb, Instruction* i, const std::vector<Instruction*>& v) -> std::vector<Instruction*> {
        Instruction* received = LoopPermute(cb, v[2], *ring, trips, dot);
        Instruction* mine = partial(cb, i, v[0], v[1]);
        // As the reduce-scatter's reducer: a pred dot's partial results combine by or.
        const Opcode combine = sum_type == PrimitiveType::kPred ? Opcode::kOr : Opcode::kAdd;
        return {v[0], v[1], cb.Add(combine, received->shape(), {received, mine})};
      });
  b.partitioner().Note(dot, absl::StrCat("windowed einsum: reduce-scatter of the partial sums as a loop of ", trips,
                                         " collective-permute", trips == 1 ? "" : "s", " over ", ring->n, " cores"));
  return state[2];
}

}  // namespace xlac::spmd
