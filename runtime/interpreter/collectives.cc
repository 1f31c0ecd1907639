// Cross-device ops: all-reduce, all-gather, reduce-scatter, all-to-all (array and tuple forms), ragged-all-to-all,
// collective-permute, collective-broadcast, send/recv, replica-id and partition-id.
//
// Participants come from ir/collective_groups.h (XLA's group modes and participant order, shared with codegen).
// Devices outside every group of a collective-broadcast get zeros.
//
// Collectives meet by (instruction, how often this device executed it, participant set), so devices that reach
// different collectives time out with a diagnosis instead of exchanging data. send/recv with
// _xla_send_recv_source_target_pairs pair up per (source, target) in program order; without pairs they pair per
// channel id in program order (host transfers, StableHLO programs).

#include <algorithm>
#include <cstring>

#include "ir/collective_groups.h"
#include "runtime/interpreter/collective_hub.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {
namespace {

std::string Describe(const Instruction& inst, int64_t occurrence) {
  return fmt::format("{} '{}' (execution #{})", OpcodeName(inst.opcode()), inst.name(), occurrence);
}

// Device ids taking part with this device, in XLA's order.
absl::StatusOr<std::vector<int64_t>> Participants(const Instruction& inst, const DeviceContext& dev) {
  return ParticipatingDevices(inst, dev.num_replicas, dev.num_partitions, dev.device_id);
}

std::vector<int64_t> PairDomainOf(const Instruction& inst, const DeviceContext& dev, int64_t max_id) {
  return PairDomain(inst, dev.num_replicas, dev.num_partitions, dev.device_id, max_id);
}

int64_t RankOf(const std::vector<int64_t>& participants, int64_t device) {
  return std::find(participants.begin(), participants.end(), device) - participants.begin();
}

std::vector<const Literal*> Flatten(const Literal& lit) {
  if (!lit.is_tuple()) return {&lit};
  std::vector<const Literal*> out;
  for (const Literal& e : lit.tuple_elements()) out.push_back(&e);
  return out;
}

Literal Pack(const Shape& shape, std::vector<Literal> parts) {
  if (!shape.IsTuple()) return std::move(parts[0]);
  return Literal::CreateTuple(std::move(parts));
}

// Concatenates `parts` along `dim` into an array of `shape`.
Literal ConcatAlong(const std::vector<const Literal*>& parts, int64_t dim, const Shape& shape) {
  Literal result(shape);
  int64_t w = ByteWidth(shape.element_type);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape.dimensions[d];
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.dimensions.size(); ++d) inner *= shape.dimensions[d];
  int64_t row = shape.dimensions[dim] * inner;
  int64_t offset = 0;
  for (const Literal* p : parts) {
    int64_t run = p->shape().dimensions[dim] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      CopyBytes(result.mutable_raw_data() + (o * row + offset) * w, p->raw_data() + o * run * w, run * w);
    }
    offset += run;
  }
  return result;
}

// Chunk `index` of `count` equal chunks of `lit` along `dim`.
Literal ChunkAlong(const Literal& lit, int64_t dim, int64_t count, int64_t index) {
  Shape shape = lit.shape();
  shape.ClearLayout();
  int64_t size = shape.dimensions[dim] / count;
  shape.dimensions[dim] = size;
  Literal result(shape);
  int64_t w = ByteWidth(shape.element_type);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape.dimensions[d];
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.dimensions.size(); ++d) inner *= shape.dimensions[d];
  int64_t run = size * inner, row = lit.shape().dimensions[dim] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    CopyBytes(result.mutable_raw_data() + o * run * w, lit.raw_data() + (o * row + index * run) * w, run * w);
  }
  return result;
}

// Elementwise reduction of each participant's operands, in participant order.
absl::StatusOr<std::vector<Literal>> ReduceAll(const Instruction& inst, const std::vector<Literal>& contributions,
                                               Evaluator& ev) {
  if (inst.called_computations().empty()) return Error(inst, "missing reduction computation");
  ScalarComputation reducer(ev, *inst.called_computation(0));
  std::vector<const Literal*> first = Flatten(contributions[0]);
  std::vector<Literal> acc;
  for (const Literal* l : first) acc.push_back(*l);
  for (size_t p = 1; p < contributions.size(); ++p) {
    std::vector<const Literal*> next = Flatten(contributions[p]);
    for (size_t i = 0; i < acc.size(); ++i) {
      for (int64_t e = 0; e < acc[i].element_count(); ++e) {
        ScalarComputation::In args[2] = {{&acc[i], e}, {next[i], e}};
        ScalarComputation::Out out{&acc[i], e};
        XLAC_RETURN_IF_ERROR(reducer.Apply(args, absl::MakeConstSpan(&out, 1)));
      }
    }
  }
  return acc;
}

Literal TupleOf(Operands operands) {
  std::vector<Literal> parts;
  for (const Literal* op : operands) parts.push_back(*op);
  return Literal::CreateTuple(std::move(parts));
}

// The (data, u32 context, token) tuple of send/recv.
Literal SendRecvTuple(const Shape& shape, Literal data) {
  std::vector<Literal> parts;
  parts.push_back(std::move(data));
  for (size_t i = 1; i < shape.tuple_shapes.size(); ++i) parts.emplace_back(shape.tuple_shapes[i]);
  return Literal::CreateTuple(std::move(parts));
}

// source_target_pairs of send/recv live in a frontend attribute: "{{0,1},{1,2}}".
std::vector<std::pair<int64_t, int64_t>> SendRecvPairs(const Instruction& inst) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const auto& [key, value] : inst.frontend_attributes()) {
    if (key != "_xla_send_recv_source_target_pairs") continue;
    std::vector<int64_t> nums;
    int64_t cur = 0;
    bool in_num = false;
    for (char c : value) {
      if (c >= '0' && c <= '9') {
        cur = cur * 10 + (c - '0');
        in_num = true;
      } else if (in_num) {
        nums.push_back(cur);
        cur = 0;
        in_num = false;
      }
    }
    if (in_num) nums.push_back(cur);
    for (size_t i = 0; i + 1 < nums.size(); i += 2) pairs.emplace_back(nums[i], nums[i + 1]);
  }
  return pairs;
}

absl::StatusOr<Literal> CollectivePermute(const Instruction& inst, Operands operands, Evaluator& ev,
                                          const std::string& key, const std::string& what) {
  DeviceContext& dev = ev.device();
  if (operands.size() != 1) return Unsupported(inst, "collective-permute with {} operands", operands.size());
  const AttrValue* pairs_attr = inst.FindAttr("source_target_pairs");
  std::vector<std::vector<int64_t>> pairs;
  if (pairs_attr != nullptr) pairs = pairs_attr->get<std::vector<std::vector<int64_t>>>();
  int64_t max_id = -1;
  for (const auto& pair : pairs) {
    for (int64_t id : pair) max_id = std::max(max_id, id);
  }
  std::vector<int64_t> domain = PairDomainOf(inst, dev, max_id);
  int64_t my_rank = RankOf(domain, dev.device_id);
  absl::StatusOr<std::vector<Literal>> all = dev.hub->Exchange(key, dev.device_id, domain, *operands[0], what);
  if (!all.ok()) return all.status();
  Shape out_shape = inst.opcode() == Opcode::kCollectivePermuteStart ? inst.shape().tuple_shapes.at(1) : inst.shape();
  Literal received(out_shape);
  for (const auto& pair : pairs) {
    if (pair.size() != 2 || pair[0] < 0 || pair[1] < 0 || pair[0] >= static_cast<int64_t>(domain.size()) ||
        pair[1] >= static_cast<int64_t>(domain.size())) {
      return Error(inst, "source_target_pair out of range for {} participants", domain.size());
    }
    if (pair[1] == my_rank) {
      const Literal& src = (*all)[static_cast<size_t>(pair[0])];
      CopyBytes(received.mutable_raw_data(), src.raw_data(), received.byte_size());
    }
  }
  if (inst.opcode() != Opcode::kCollectivePermuteStart) return received;
  std::vector<Literal> parts;
  parts.push_back(*operands[0]);
  parts.push_back(std::move(received));
  for (size_t i = 2; i < inst.shape().tuple_shapes.size(); ++i) parts.emplace_back(inst.shape().tuple_shapes[i]);
  return Literal::CreateTuple(std::move(parts));
}

absl::StatusOr<Literal> RaggedAllToAll(const Instruction& inst, Operands operands, const std::vector<Literal>& all,
                                       int64_t my_rank) {
  // Sender s puts input[input_offsets[r]...+send_sizes[r]] into receiver r's output at output_offsets[r] (offsets
  // index the leading dimension; several updates per peer are laid out peer-major).
  Literal result = *operands[1];
  const std::vector<int64_t>& od = result.shape().dimensions;
  if (od.empty()) return Error(inst, "ragged-all-to-all needs a non-scalar output");
  int64_t row = 1;
  for (size_t d = 1; d < od.size(); ++d) row *= od[d];
  int64_t w = ByteWidth(result.shape().element_type);
  int64_t peers = static_cast<int64_t>(all.size());
  for (int64_t s = 0; s < peers; ++s) {
    std::vector<const Literal*> parts = Flatten(all[static_cast<size_t>(s)]);
    const Literal& input = *parts[0];
    const Literal& in_off = *parts[2];
    const Literal& sizes = *parts[3];
    const Literal& out_off = *parts[4];
    int64_t updates = in_off.element_count() / peers;
    for (int64_t u = 0; u < updates; ++u) {
      int64_t idx = my_rank * updates + u;
      int64_t src = IndexValue(in_off, idx), n = IndexValue(sizes, idx), dst = IndexValue(out_off, idx);
      if (n < 0 || src < 0 || dst < 0 || src + n > input.shape().dimensions[0] || dst + n > od[0]) {
        return Error(inst, "ragged-all-to-all update from rank {} is out of bounds", s);
      }
      CopyBytes(result.mutable_raw_data() + dst * row * w, input.raw_data() + src * row * w, n * row * w);
    }
  }
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalCollective(const Instruction& inst, Operands operands, Evaluator& ev) {
  DeviceContext& dev = ev.device();
  switch (inst.opcode()) {
    case Opcode::kReplicaId:
      return ScalarS64(inst.shape().element_type, dev.replica_id);
    case Opcode::kPartitionId:
      return ScalarS64(inst.shape().element_type, dev.partition_id);
    default:
      break;
  }
  int64_t occurrence = ev.NextOccurrence(inst);
  std::string what = Describe(inst, occurrence);
  std::string key = fmt::format("{}/{}#{}", inst.parent() ? inst.parent()->name() : "", inst.name(), occurrence);

  switch (inst.opcode()) {
    case Opcode::kSend:
    case Opcode::kRecv: {
      std::vector<std::pair<int64_t, int64_t>> pairs = SendRecvPairs(inst);
      if (pairs.empty()) {
        // No source/target pairs (host transfers, StableHLO programs): sends and receives meet by channel id, the
        // k-th send on a channel feeding the k-th receive on it.
        int64_t channel = IntAttr(inst, "channel_id", 0);
        if (inst.opcode() == Opcode::kSend) {
          int64_t seq = dev.sent_on_channel[channel]++;
          dev.hub->Send(fmt::format("channel {} #{}", channel, seq), -1, -1, *operands[0]);
          return SendRecvTuple(inst.shape(), *operands[0]);
        }
        int64_t seq = dev.received_on_channel[channel]++;
        absl::StatusOr<Literal> got =
            dev.hub->Receive(fmt::format("channel {} #{}", channel, seq), -1, -1, what, dev.device_id);
        if (!got.ok()) return got.status();
        Literal data(inst.shape().tuple_shapes.at(0));
        if (got->byte_size() != data.byte_size()) return Error(inst, "received data of the wrong size");
        CopyBytes(data.mutable_raw_data(), got->raw_data(), data.byte_size());
        return SendRecvTuple(inst.shape(), std::move(data));
      }
      int64_t max_id = -1;
      for (const auto& [a, b] : pairs) max_id = std::max({max_id, a, b});
      std::vector<int64_t> domain = PairDomainOf(inst, dev, max_id);
      int64_t me = RankOf(domain, dev.device_id);
      for (const auto& [src, dst] : pairs) {
        if (src < 0 || dst < 0 || src >= static_cast<int64_t>(domain.size()) ||
            dst >= static_cast<int64_t>(domain.size())) {
          return Error(inst, "send/recv pair {{{},{}}} is out of range for {} devices", src, dst, domain.size());
        }
      }
      if (inst.opcode() == Opcode::kSend) {
        for (const auto& [src, dst] : pairs) {
          if (src != me) continue;
          int64_t target = domain[static_cast<size_t>(dst)];
          int64_t seq = dev.sent[{dev.device_id, target}]++;
          dev.hub->Send(fmt::format("p2p #{}", seq), dev.device_id, target, *operands[0]);
        }
        return SendRecvTuple(inst.shape(), *operands[0]);
      }
      // Messages pair up by (source, target) in program order, whatever their channel ids.
      Literal data(inst.shape().tuple_shapes.at(0));
      for (const auto& [src, dst] : pairs) {
        if (dst != me) continue;
        int64_t source = domain[static_cast<size_t>(src)];
        int64_t seq = dev.received[{source, dev.device_id}]++;
        absl::StatusOr<Literal> got =
            dev.hub->Receive(fmt::format("p2p #{}", seq), source, dev.device_id, what, dev.device_id);
        if (!got.ok()) return got.status();
        if (got->byte_size() != data.byte_size()) return Error(inst, "received data of the wrong size");
        CopyBytes(data.mutable_raw_data(), got->raw_data(), data.byte_size());
      }
      return SendRecvTuple(inst.shape(), std::move(data));
    }
    case Opcode::kSendDone:
      return Literal(Shape::Token());
    case Opcode::kRecvDone: {
      std::vector<Literal> parts;
      parts.push_back(operands[0]->tuple_elements().at(0));
      parts.emplace_back(Shape::Token());
      return Literal::CreateTuple(std::move(parts));
    }
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      return CollectivePermute(inst, operands, ev, key, what);
    default:
      break;
  }

  absl::StatusOr<std::vector<int64_t>> participants = Participants(inst, dev);
  if (!participants.ok()) {
    // collective-broadcast leaves devices outside every group with zeros (StableHLO's definition).
    if (inst.opcode() == Opcode::kCollectiveBroadcast && !ReplicaGroupsOf(inst).empty()) return Literal(inst.shape());
    return participants.status();
  }
  int64_t group_size = static_cast<int64_t>(participants->size());
  int64_t my_rank = RankOf(*participants, dev.device_id);
  absl::StatusOr<std::vector<Literal>> all =
      dev.hub->Exchange(key, dev.device_id, *participants, TupleOf(operands), what);
  if (!all.ok()) return all.status();

  switch (inst.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: {
      absl::StatusOr<std::vector<Literal>> reduced = ReduceAll(inst, *all, ev);
      if (!reduced.ok()) return reduced.status();
      return Pack(inst.shape(), *std::move(reduced));
    }
    case Opcode::kReduceScatter: {
      absl::StatusOr<std::vector<Literal>> reduced = ReduceAll(inst, *all, ev);
      if (!reduced.ok()) return reduced.status();
      int64_t dim = IntList(inst, "dimensions").at(0);
      std::vector<Literal> parts;
      for (size_t i = 0; i < reduced->size(); ++i) {
        const Literal& r = (*reduced)[i];
        const Shape& want = inst.shape().IsTuple() ? inst.shape().tuple_shapes[i] : inst.shape();
        if (r.shape().dimensions[dim] != want.dimensions[dim] * group_size) {
          return Error(inst, "scattering {} over {} participants cannot give {}", ShapeToString(r.shape(), false),
                       group_size, ShapeToString(want, false));
        }
        parts.push_back(ChunkAlong(r, dim, group_size, my_rank));
      }
      return Pack(inst.shape(), std::move(parts));
    }
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart: {
      int64_t dim = IntList(inst, "dimensions").at(0);
      const Shape& result_shape =
          inst.opcode() == Opcode::kAllGatherStart ? inst.shape().tuple_shapes.at(1) : inst.shape();
      std::vector<Literal> gathered;
      for (size_t i = 0; i < operands.size(); ++i) {
        const Shape& want = result_shape.IsTuple() ? result_shape.tuple_shapes[i] : result_shape;
        if (operands[i]->shape().dimensions[dim] * group_size != want.dimensions[dim]) {
          return Error(inst, "gathering {} from {} participants cannot give {}",
                       ShapeToString(operands[i]->shape(), false), group_size, ShapeToString(want, false));
        }
        std::vector<const Literal*> parts;
        for (const Literal& c : *all) parts.push_back(Flatten(c)[i]);
        gathered.push_back(
            ConcatAlong(parts, dim, result_shape.IsTuple() ? result_shape.tuple_shapes[i] : result_shape));
      }
      Literal result = Pack(result_shape, std::move(gathered));
      if (inst.opcode() == Opcode::kAllGather) return result;
      std::vector<Literal> start;
      start.push_back(operands.size() == 1 ? *operands[0] : TupleOf(operands));
      start.push_back(std::move(result));
      return Literal::CreateTuple(std::move(start));
    }
    case Opcode::kAllToAll: {
      const std::vector<int64_t>& dims = IntList(inst, "dimensions");
      if (!dims.empty()) {
        // Array form: chunk j of every participant's operand goes to participant j, concatenated in rank order.
        std::vector<Literal> chunks;
        for (const Literal& c : *all) chunks.push_back(ChunkAlong(*Flatten(c)[0], dims[0], group_size, my_rank));
        std::vector<const Literal*> parts;
        for (const Literal& c : chunks) parts.push_back(&c);
        return ConcatAlong(parts, dims[0], inst.shape());
      }
      // Tuple form: operand j goes to participant j; result element i comes from participant i.
      if (static_cast<int64_t>(operands.size()) != group_size) {
        return Error(inst, "tuple all-to-all needs one operand per participant ({}), got {}", group_size,
                     operands.size());
      }
      std::vector<Literal> parts;
      for (const Literal& c : *all) parts.push_back(*Flatten(c)[static_cast<size_t>(my_rank)]);
      return Pack(inst.shape(), std::move(parts));
    }
    case Opcode::kCollectiveBroadcast: {
      std::vector<const Literal*> root = Flatten((*all)[0]);
      std::vector<Literal> parts;
      for (const Literal* l : root) parts.push_back(*l);
      return Pack(inst.shape(), std::move(parts));
    }
    case Opcode::kRaggedAllToAll:
      return RaggedAllToAll(inst, operands, *all, my_rank);
    default:
      return Unsupported(inst, "not a collective");
  }
}

}  // namespace xlac::interp
