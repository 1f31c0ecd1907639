// StableHLO ops that HLO has no opcode for and that XLA's StableHLO -> HLO translation expands with its client
// library: `einsum` / `unary_einsum` (xla::Einsum: sums of labels only one side has, one dot_general, a transpose to
// the output order) and `torch_index_select` (xla::TorchIndexSelect: a gather, with iotas for the batch dims).
// Reactant.jl exports contractions as `stablehlo.einsum`; torch_index_select comes from MHLO-era exporters.
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <numeric>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

using Results = Lowerer::Results;

// One side of an einsum config: a label per dimension. A `...` stands for the dims the labels leave; they get
// labels of their own, numbered from the right so that every operand's ellipsis dims line up as numpy's do.
bool ParseEinsumTerm(Lowerer& l, const Attr& at, std::string_view term, int64_t rank, std::vector<int>* labels) {
  labels->clear();
  const size_t dots = term.find("...");
  const std::string_view before = dots == std::string_view::npos ? term : term.substr(0, dots);
  const std::string_view after = dots == std::string_view::npos ? std::string_view() : term.substr(dots + 3);
  auto add = [&](std::string_view part) {
    for (char c : part) {
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        return l.Error(at.pos, fmt::format("einsum config: '{}' is not a dimension label (letters and '...')", c));
      }
      labels->push_back(static_cast<unsigned char>(c));
    }
    return true;
  };
  if (!add(before)) return false;
  if (dots != std::string_view::npos) {
    const int64_t named = static_cast<int64_t>(before.size() + after.size());
    if (named > rank) {
      return l.Error(at.pos, fmt::format("einsum config '{}' names more dimensions than the rank {}", term, rank));
    }
    for (int64_t k = rank - named; k > 0; --k) labels->push_back(-static_cast<int>(k));
  }
  return add(after);
}

// Sums away the dims of `x` whose labels `keep` rejects (xla::Einsum reduces them before the dot).
Instruction* SumUnused(Lowerer& l, Instruction* x, std::vector<int>* labels, const std::function<bool(int)>& keep) {
  std::vector<int64_t> reduced, kept_dims;
  std::vector<int> kept_labels;
  for (size_t i = 0; i < labels->size(); ++i) {
    if (keep((*labels)[i])) {
      kept_dims.push_back(x->shape().dimensions[i]);
      kept_labels.push_back((*labels)[i]);
    } else {
      reduced.push_back(static_cast<int64_t>(i));
    }
  }
  if (reduced.empty()) return x;
  const PrimitiveType type = x->shape().element_type;
  Instruction* sum = l.Emit(Opcode::kReduce, Shape::Array(type, kept_dims), {x, l.ConstScalar(type, 0)});
  sum->SetAttr("dimensions", AttrValue::IntList(std::move(reduced)));
  sum->set_called_computations(
      {l.ScalarBinaryComputation(type == PrimitiveType::kPred ? Opcode::kOr : Opcode::kAdd, type)});
  *labels = std::move(kept_labels);
  return sum;
}

bool EmitEinsum(Lowerer& l, const Op& op, const Attr& config_attr, const std::string& config, Instruction* lhs,
                Instruction* rhs, Results* results) {
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  const size_t comma = config.find(',');
  const size_t arrow = config.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) {
    return l.Error(config_attr.pos, fmt::format("einsum config '{}' is not of the form 'lhs,rhs->result'", config));
  }
  std::vector<int> lhs_labels, rhs_labels, out_labels;
  if (!ParseEinsumTerm(l, config_attr, std::string_view(config).substr(0, comma), lhs->shape().rank(), &lhs_labels) ||
      !ParseEinsumTerm(l, config_attr, std::string_view(config).substr(comma + 1, arrow - comma - 1),
                       rhs->shape().rank(), &rhs_labels) ||
      !ParseEinsumTerm(l, config_attr, std::string_view(config).substr(arrow + 2),
                       config.find("...", arrow) == std::string::npos ? -1 : shape.rank(), &out_labels)) {
    return false;
  }
  const std::pair<Instruction*, const std::vector<int>*> sides[] = {{lhs, &lhs_labels}, {rhs, &rhs_labels}};
  std::map<int, int64_t> size_of;
  for (const auto& [x, labels] : sides) {
    if (static_cast<int64_t>(labels->size()) != x->shape().rank()) {
      return l.Error(config_attr.pos, fmt::format("einsum config '{}' does not match the operand ranks {} and {}",
                                                  config, lhs->shape().rank(), rhs->shape().rank()));
    }
    for (size_t i = 0; i < labels->size(); ++i) {
      const int label = (*labels)[i];
      if (std::count(labels->begin(), labels->end(), label) > 1) {
        return l.Error(
            config_attr.pos,
            fmt::format("einsum config '{}' repeats a label in one operand (a diagonal): not supported", config));
      }
      auto [it, inserted] = size_of.emplace(label, x->shape().dimensions[i]);
      if (!inserted && it->second != x->shape().dimensions[i]) {
        return l.Error(config_attr.pos, fmt::format("einsum config '{}': a label has sizes {} and {}", config,
                                                    it->second, x->shape().dimensions[i]));
      }
    }
  }
  auto has = [](const std::vector<int>& v, int label) { return std::find(v.begin(), v.end(), label) != v.end(); };
  for (int label : out_labels) {
    if (!size_of.count(label) || std::count(out_labels.begin(), out_labels.end(), label) > 1) {
      return l.Error(config_attr.pos,
                     fmt::format("einsum config '{}': every result label must appear once, and in an operand", config));
    }
  }
  lhs = SumUnused(l, lhs, &lhs_labels, [&](int x) { return has(rhs_labels, x) || has(out_labels, x); });
  rhs = SumUnused(l, rhs, &rhs_labels, [&](int x) { return has(lhs_labels, x) || has(out_labels, x); });

  // dot_general's result: batch dims (lhs order), then lhs's free dims, then rhs's.
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  std::vector<int> dot_labels;
  for (size_t i = 0; i < lhs_labels.size(); ++i) {
    const int label = lhs_labels[i];
    if (!has(rhs_labels, label)) continue;
    const int64_t j = std::find(rhs_labels.begin(), rhs_labels.end(), label) - rhs_labels.begin();
    if (has(out_labels, label)) {
      lhs_batch.push_back(static_cast<int64_t>(i));
      rhs_batch.push_back(j);
      dot_labels.push_back(label);
    } else {
      lhs_contracting.push_back(static_cast<int64_t>(i));
      rhs_contracting.push_back(j);
    }
  }
  for (int label : lhs_labels) {
    if (!has(rhs_labels, label)) dot_labels.push_back(label);
  }
  for (int label : rhs_labels) {
    if (!has(lhs_labels, label)) dot_labels.push_back(label);
  }
  std::vector<int64_t> dot_dims;
  for (int label : dot_labels) dot_dims.push_back(size_of[label]);
  Instruction* dot = l.Emit(Opcode::kDot, Shape::Array(shape.element_type, dot_dims), {lhs, rhs});
  dot->SetAttr("lhs_batch_dims", AttrValue::IntList(std::move(lhs_batch)));
  dot->SetAttr("rhs_batch_dims", AttrValue::IntList(std::move(rhs_batch)));
  dot->SetAttr("lhs_contracting_dims", AttrValue::IntList(std::move(lhs_contracting)));
  dot->SetAttr("rhs_contracting_dims", AttrValue::IntList(std::move(rhs_contracting)));

  std::vector<int64_t> permutation, out_dims;
  for (int label : out_labels) {
    permutation.push_back(std::find(dot_labels.begin(), dot_labels.end(), label) - dot_labels.begin());
    out_dims.push_back(size_of[label]);
  }
  if (out_dims != shape.dimensions) {
    return l.OpError(op, fmt::format("einsum config '{}' gives a result of dimensions [{}], not the declared type's",
                                     config, fmt::join(out_dims, ", ")));
  }
  Instruction* result = dot;
  std::vector<int64_t> identity(permutation.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (permutation != identity) {
    result = l.Emit(Opcode::kTranspose, shape, {dot});
    result->SetAttr("dimensions", AttrValue::IntList(std::move(permutation)));
  }
  results->push_back(result);
  return true;
}

// einsum(lhs, rhs), and unary_einsum(x) as XLA's UnaryEinsum: einsum(1, x) with the config "," + config.
bool LowerEinsum(Lowerer& l, const Op& op, Results* results) {
  const bool unary = BaseOpName(op.name) == "unary_einsum";
  const size_t arity = unary ? 1 : 2;
  if (op.operands.size() != arity) {
    return l.OpError(
        op, fmt::format("'{}' takes {} operand{}, but has {}", op.name, arity, unary ? "" : "s", op.operands.size()));
  }
  std::vector<Instruction*> operands;
  const Attr* config_attr;
  std::string config;
  if (!l.LookupOperands(op, &operands) || !l.RequireAttr(op, "einsum_config", &config_attr) ||
      !l.GetString(op, "einsum_config", &config)) {
    return false;
  }
  config.erase(std::remove(config.begin(), config.end(), ' '), config.end());
  if (unary) {
    operands.insert(operands.begin(), l.ConstScalar(operands[0]->shape().element_type, 1));
    config = "," + config;
  }
  return EmitEinsum(l, op, *config_attr, config, operands[0], operands[1], results);
}

// xla::TorchIndexSelect: picks, along `dim`, the entries `index` names; the first `batch_dims` dims of the operand
// and the index are batch dims (entry b of the index selects within entry b of the operand).
bool LowerTorchIndexSelect(Lowerer& l, const Op& op, Results* results) {
  if (op.operands.size() != 2) {
    return l.OpError(op, fmt::format("'{}' takes 2 operands, but has {}", op.name, op.operands.size()));
  }
  std::vector<Instruction*> operands;
  Shape shape;
  int64_t dim, batch_dims;
  if (!l.LookupOperands(op, &operands) || !l.ResultShape(op, 0, &shape) || !l.GetInt(op, "dim", &dim) ||
      !l.GetInt(op, "batch_dims", &batch_dims)) {
    return false;
  }
  Instruction* input = operands[0];
  Instruction* index = operands[1];
  const int64_t rank = input->shape().rank();
  const int64_t index_rank = index->shape().rank();
  if (dim < 0) dim += rank;
  if (batch_dims < 0) batch_dims += index_rank;
  if (!IsIntegralType(index->shape().element_type)) {
    return l.OpError(op, "torch_index_select's index must have an integer element type");
  }
  if (dim < 0 || dim >= rank || batch_dims < 0 || batch_dims > dim || batch_dims > index_rank) {
    return l.OpError(op, fmt::format("torch_index_select needs 0 <= batch_dims <= dim < operand rank and batch_dims "
                                     "<= index rank (dim {}, batch_dims {}, ranks {} and {})",
                                     dim, batch_dims, rank, index_rank));
  }
  for (int64_t i = 0; i < batch_dims; ++i) {
    if (input->shape().dimensions[i] != index->shape().dimensions[i]) {
      return l.OpError(op, fmt::format("torch_index_select batch dim {} has size {} in the operand but {} in the index",
                                       i, input->shape().dimensions[i], index->shape().dimensions[i]));
    }
  }
  if (batch_dims > 0) {
    // Index vectors (iota_0, ..., iota_{batch_dims-1}, index) along a new minor dim.
    std::vector<int64_t> column_dims = index->shape().dimensions;
    column_dims.push_back(1);
    std::vector<Instruction*> columns;
    for (int64_t b = 0; b < batch_dims; ++b) {
      Instruction* iota = l.Emit(Opcode::kIota, Shape::Array(index->shape().element_type, column_dims), {});
      iota->SetAttr("iota_dimension", AttrValue::Int(b));
      columns.push_back(iota);
    }
    columns.push_back(l.Emit(Opcode::kReshape, Shape::Array(index->shape().element_type, column_dims), {index}));
    std::vector<int64_t> concat_dims = column_dims;
    concat_dims.back() = batch_dims + 1;
    index = l.Emit(Opcode::kConcatenate, Shape::Array(index->shape().element_type, concat_dims), std::move(columns));
    index->SetAttr("dimensions", AttrValue::IntList({index_rank}));
  }
  std::vector<int64_t> offset_dims, collapsed, start_index_map;
  std::vector<int64_t> slice_sizes = input->shape().dimensions;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < batch_dims || i == dim) {
      slice_sizes[static_cast<size_t>(i)] = std::min<int64_t>(slice_sizes[static_cast<size_t>(i)], 1);
      collapsed.push_back(i);
      start_index_map.push_back(i);
    } else {
      offset_dims.push_back(i < dim ? i : i + index_rank - (1 + batch_dims));
    }
  }
  Instruction* gather = l.Emit(Opcode::kGather, std::move(shape), {input, index});
  gather->SetAttr("offset_dims", AttrValue::IntList(std::move(offset_dims)));
  gather->SetAttr("collapsed_slice_dims", AttrValue::IntList(std::move(collapsed)));
  gather->SetAttr("start_index_map", AttrValue::IntList(std::move(start_index_map)));
  gather->SetAttr("index_vector_dim", AttrValue::Int(index_rank));
  gather->SetAttr("slice_sizes", AttrValue::IntList(std::move(slice_sizes)));
  gather->SetAttr("indices_are_sorted", AttrValue::Bool(false));
  results->push_back(gather);
  return true;
}

}  // namespace

void RegisterLegacyOps(OpTable* table) {
  OpTable& t = *table;
  t["stablehlo.einsum"] = &LowerEinsum;
  t["stablehlo.unary_einsum"] = &LowerEinsum;
  t["stablehlo.torch_index_select"] = &LowerTorchIndexSelect;
}

}  // namespace xlac::shlo
