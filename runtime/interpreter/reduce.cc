// reduce (variadic), reduce-window (all window attributes), select-and-scatter and map.
//
// Accumulation is sequential in row-major order over the reduced elements, the accumulator being the reducer's
// first argument(s), as in XLA's evaluator.
#include <algorithm>

#include "runtime/interpreter/fast_kernels.h"
#include "runtime/interpreter/kernels.h"

namespace xlac::interp {
namespace {

using In = ScalarComputation::In;
constexpr int64_t kLanes = 64;  // outputs folded side by side by the f32/f64 reduce
using Out = ScalarComputation::Out;

// Results of a variadic op: one array per input, each initialized to its init value.
std::vector<Literal> InitResults(const Shape& shape, Operands inits) {
  std::vector<Literal> results;
  size_t n = inits.size();
  for (size_t i = 0; i < n; ++i) {
    Shape s = shape.IsTuple() ? shape.tuple_shapes[i] : shape;
    Literal lit(s);
    int64_t w = ByteWidth(s.element_type);
    for (int64_t j = 0; j < lit.element_count(); ++j) CopyElement(*inits[i], 0, lit, j, w);
    results.push_back(std::move(lit));
  }
  return results;
}

Literal PackResults(const Shape& shape, std::vector<Literal> results) {
  if (!shape.IsTuple()) return std::move(results[0]);
  return Literal::CreateTuple(std::move(results));
}

// Offsets (row-major over `dims` restricted to `selected`) of every combination of the selected dims.
std::vector<int64_t> SubOffsets(const std::vector<int64_t>& dims, const std::vector<int64_t>& selected) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> sub_dims, sub_strides;
  for (int64_t d : selected) {
    sub_dims.push_back(dims[static_cast<size_t>(d)]);
    sub_strides.push_back(strides[static_cast<size_t>(d)]);
  }
  int64_t count = 1;
  for (int64_t d : sub_dims) count *= d;
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(count));
  if (count == 0) return offsets;
  std::vector<int64_t> index(sub_dims.size(), 0);
  do {
    int64_t off = 0;
    for (size_t k = 0; k < index.size(); ++k) off += index[k] * sub_strides[k];
    offsets.push_back(off);
  } while (NextIndex(index, sub_dims));
  return offsets;
}

// Fast path: one input, reducer is a single binary op.
template <typename C>
void ReduceFast(const Literal& input, const Literal& init, Literal& result, Opcode op, bool swapped,
                const std::vector<int64_t>& base_offsets, const std::vector<int64_t>& reduce_offsets, int64_t threads) {
  PrimitiveType t = result.shape().element_type;
  BinaryFn<C> fn = GetBinaryFn<C>(op);
  if constexpr (kIsFloat<C>) {
    // f32 / f64: storage is the compute type and Normalize is the identity, so read and write storage directly;
    // outputs are independent, each one's sum stays sequential on one thread.
    if (t == (std::is_same_v<C, float> ? PrimitiveType::kF32 : PrimitiveType::kF64)) {
      const C* x = reinterpret_cast<const C*>(input.raw_data());
      C* out = reinterpret_cast<C*>(result.mutable_raw_data());
      C init_v = LoadOne<C>(init, 0);
      int64_t outputs = static_cast<int64_t>(base_offsets.size());
      int64_t per_block = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, reduce_offsets.size()));
      per_block = (per_block + kLanes - 1) / kLanes * kLanes;
      ParallelBlocks((outputs + per_block - 1) / per_block, threads, [&](int64_t block) {
        int64_t end = std::min(outputs, (block + 1) * per_block);
        for (int64_t o0 = block * per_block; o0 < end; o0 += kLanes) {
          // Runs of outputs at consecutive offsets (reductions over outer dims) walk memory row by row, each
          // output still folding its elements in order.
          int64_t count = std::min(kLanes, end - o0);
          int64_t first = base_offsets[static_cast<size_t>(o0)];
          if (count < 2 || base_offsets[static_cast<size_t>(o0 + count - 1)] - first != count - 1) continue;
          C acc[kLanes];
          for (int64_t l = 0; l < count; ++l) acc[l] = init_v;
          auto fold = [&](auto f) {
            for (int64_t off : reduce_offsets) {
              const C* row = x + first + off;
              for (int64_t l = 0; l < count; ++l) acc[l] = f(acc[l], row[l]);
            }
          };
          if (op == Opcode::kAdd && !swapped) {
            fold([](C a, C b) { return a + b; });  // the kernel's IEEE sum, operands in the same order
          } else if (op == Opcode::kAdd) {
            fold([](C a, C b) { return b + a; });
          } else if (swapped) {
            fold([&](C a, C b) { return fn(b, a, t); });
          } else {
            fold([&](C a, C b) { return fn(a, b, t); });
          }
          for (int64_t l = 0; l < count; ++l) out[o0 + l] = acc[l];
        }
        for (int64_t o = block * per_block; o < end; ++o) {
          int64_t run0 = o - (o - block * per_block) % kLanes;
          int64_t count = std::min(kLanes, end - run0);
          if (count >= 2 &&
              base_offsets[static_cast<size_t>(run0 + count - 1)] - base_offsets[static_cast<size_t>(run0)] ==
                  count - 1) {
            continue;  // done above
          }
          C acc = init_v;
          const C* base = x + base_offsets[static_cast<size_t>(o)];
          if (op == Opcode::kAdd && !swapped) {
            for (int64_t off : reduce_offsets) acc = acc + base[off];
          } else if (swapped) {
            for (int64_t off : reduce_offsets) acc = fn(base[off], acc, t);
          } else {
            for (int64_t off : reduce_offsets) acc = fn(acc, base[off], t);
          }
          out[o] = acc;
        }
      });
      return;
    }
  }
  std::vector<C> x = LoadAll<C>(input);
  C init_v = LoadOne<C>(init, 0);
  std::vector<C> out(base_offsets.size());
  for (size_t o = 0; o < base_offsets.size(); ++o) {
    C acc = init_v;
    for (int64_t off : reduce_offsets) {
      C v = x[static_cast<size_t>(base_offsets[o] + off)];
      acc = Normalize<C>(swapped ? fn(v, acc, t) : fn(acc, v, t), t);
    }
    out[o] = acc;
  }
  StoreAll<C>(result, out);
}

}  // namespace

WindowTaps MakeWindowTaps(const WindowDimension& wd, int64_t operand_size, int64_t output_size) {
  WindowTaps taps(static_cast<size_t>(output_size));
  for (int64_t o = 0; o < output_size; ++o) {
    for (int64_t w = 0; w < wd.size; ++w) {
      int64_t x = o * wd.stride - wd.padding_low + w * wd.window_dilation;
      if (wd.base_dilation > 1) {
        if (x % wd.base_dilation != 0) continue;
        x /= wd.base_dilation;
      }
      if (x >= 0 && x < operand_size) taps[static_cast<size_t>(o)].emplace_back(x, w);
    }
  }
  return taps;
}

absl::StatusOr<Literal> EvalReduce(const Instruction& inst, Operands operands, Evaluator& ev) {
  if (operands.size() % 2 != 0 || inst.called_computations().empty()) return Error(inst, "malformed reduce");
  size_t n = operands.size() / 2;
  Operands inputs = operands.subspan(0, n), inits = operands.subspan(n);
  const std::vector<int64_t>& in_dims = inputs[0]->shape().dimensions;
  std::vector<int64_t> reduced = IntList(inst, "dimensions");
  std::sort(reduced.begin(), reduced.end());
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(in_dims.size()); ++d) {
    if (!std::binary_search(reduced.begin(), reduced.end(), d)) kept.push_back(d);
  }
  std::vector<int64_t> base_offsets = SubOffsets(in_dims, kept);
  std::vector<int64_t> reduce_offsets = SubOffsets(in_dims, reduced);
  std::vector<Literal> results = InitResults(inst.shape(), inits);
  ScalarComputation reducer(ev, *inst.called_computation(0));
  Opcode op;
  bool swapped;
  if (n == 1 && reducer.FastBinary(&op, &swapped) &&
      inputs[0]->shape().element_type == results[0].shape().element_type) {
    DispatchKind(KindOf(results[0].shape().element_type), [&](auto tag) {
      ReduceFast<decltype(tag)>(*inputs[0], *inits[0], results[0], op, swapped, base_offsets, reduce_offsets,
                                KernelThreads(ev.device()));
    });
    return PackResults(inst.shape(), std::move(results));
  }
  std::vector<In> args(2 * n);
  std::vector<Out> outs(n);
  for (size_t o = 0; o < base_offsets.size(); ++o) {
    for (size_t i = 0; i < n; ++i) {
      args[i] = In{&results[i], static_cast<int64_t>(o)};
      outs[i] = Out{&results[i], static_cast<int64_t>(o)};
    }
    for (int64_t off : reduce_offsets) {
      for (size_t i = 0; i < n; ++i) args[n + i] = In{inputs[i], base_offsets[o] + off};
      XLAC_RETURN_IF_ERROR(reducer.Apply(args, outs));
    }
  }
  return PackResults(inst.shape(), std::move(results));
}

namespace {

struct WindowTables {
  std::vector<WindowTaps> taps;  // per dim
};

WindowTables MakeWindowTables(const Window& window, const std::vector<int64_t>& operand_dims,
                              const std::vector<int64_t>& output_dims) {
  WindowTables t;
  for (size_t d = 0; d < operand_dims.size(); ++d) {
    t.taps.push_back(MakeWindowTaps(window.dimensions[d], operand_dims[d], output_dims[d]));
  }
  return t;
}

// Calls f(operand_linear_index) for each in-bounds window element of output index `out`, in row-major window order.
template <typename F>
absl::Status ForEachWindowElement(const WindowTables& t, const std::vector<int64_t>& out,
                                  const std::vector<int64_t>& operand_strides, F&& f) {
  size_t rank = t.taps.size();
  std::vector<const std::vector<std::pair<int64_t, int64_t>>*> lists(rank);
  std::vector<int64_t> sizes(rank);
  for (size_t d = 0; d < rank; ++d) {
    lists[d] = &t.taps[d][static_cast<size_t>(out[d])];
    sizes[d] = static_cast<int64_t>(lists[d]->size());
    if (sizes[d] == 0) return absl::OkStatus();
  }
  std::vector<int64_t> k(rank, 0);
  do {
    int64_t lin = 0;
    for (size_t d = 0; d < rank; ++d) lin += (*lists[d])[static_cast<size_t>(k[d])].first * operand_strides[d];
    XLAC_RETURN_IF_ERROR(f(lin));
  } while (NextIndex(k, sizes));
  return absl::OkStatus();
}

// reduce-window with a single-op reducer over f32 / f64 (storage = compute type, Normalize is the identity): each
// output folds its in-bounds window elements in row-major window order, as ForEachWindowElement visits them;
// blocks of outputs run on threads.
template <typename C>
void ReduceWindowFast(const Literal& input, const Literal& init, Literal& result, Opcode op, bool swapped,
                      const WindowTables& t, const std::vector<int64_t>& strides, int64_t threads) {
  PrimitiveType type = result.shape().element_type;
  BinaryFn<C> fn = GetBinaryFn<C>(op);
  const C* x = reinterpret_cast<const C*>(input.raw_data());
  C* out = reinterpret_cast<C*>(result.mutable_raw_data());
  C init_v = LoadOne<C>(init, 0);
  const std::vector<int64_t>& out_dims = result.shape().dimensions;
  size_t rank = out_dims.size();
  int64_t outputs = result.element_count();
  constexpr int64_t kBlock = 4096;
  ParallelBlocks((outputs + kBlock - 1) / kBlock, threads, [&](int64_t block) {
    int64_t o0 = block * kBlock, o1 = std::min(outputs, o0 + kBlock);
    std::vector<int64_t> index(rank), k(rank), sizes(rank);
    std::vector<const std::vector<std::pair<int64_t, int64_t>>*> lists(rank);
    int64_t rest = o0;
    for (size_t d = rank; d-- > 0;) {
      index[d] = rest % out_dims[d];
      rest /= out_dims[d];
    }
    for (int64_t o = o0; o < o1; ++o, NextIndex(index, out_dims)) {
      C acc = init_v;
      bool any = true;
      for (size_t d = 0; d < rank; ++d) {
        lists[d] = &t.taps[d][static_cast<size_t>(index[d])];
        sizes[d] = static_cast<int64_t>(lists[d]->size());
        if (sizes[d] == 0) any = false;
      }
      if (any) {
        std::fill(k.begin(), k.end(), 0);
        do {
          int64_t lin = 0;
          for (size_t d = 0; d < rank; ++d) lin += (*lists[d])[static_cast<size_t>(k[d])].first * strides[d];
          acc = swapped ? fn(x[lin], acc, type) : fn(acc, x[lin], type);
        } while (NextIndex(k, sizes));
      }
      out[o] = acc;
    }
  });
}

}  // namespace

absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst, Operands operands, Evaluator& ev) {
  const Window* window = WindowAttr(inst);
  if (operands.size() % 2 != 0 || window == nullptr || inst.called_computations().empty()) {
    return Error(inst, "malformed reduce-window");
  }
  size_t n = operands.size() / 2;
  Operands inputs = operands.subspan(0, n), inits = operands.subspan(n);
  const std::vector<int64_t>& in_dims = inputs[0]->shape().dimensions;
  if (window->dimensions.size() != in_dims.size()) return Error(inst, "window rank differs from operand rank");
  std::vector<Literal> results = InitResults(inst.shape(), inits);
  const std::vector<int64_t>& out_dims = results[0].shape().dimensions;
  WindowTables tables = MakeWindowTables(*window, in_dims, out_dims);
  std::vector<int64_t> strides = RowMajorStrides(in_dims);
  ScalarComputation reducer(ev, *inst.called_computation(0));
  Opcode op;
  bool swapped;
  PrimitiveType type = results[0].shape().element_type;
  if (n == 1 && reducer.FastBinary(&op, &swapped) && inputs[0]->shape().element_type == type &&
      (type == PrimitiveType::kF32 || type == PrimitiveType::kF64)) {
    auto run = [&](auto tag) {
      using C = decltype(tag);
      ReduceWindowFast<C>(*inputs[0], *inits[0], results[0], op, swapped, tables, strides, KernelThreads(ev.device()));
    };
    if (type == PrimitiveType::kF32)
      run(float{});
    else
      run(double{});
    return PackResults(inst.shape(), std::move(results));
  }
  std::vector<In> args(2 * n);
  std::vector<Out> outs(n);
  std::vector<int64_t> out(out_dims.size(), 0);
  for (int64_t o = 0; o < results[0].element_count(); ++o) {
    for (size_t i = 0; i < n; ++i) {
      args[i] = In{&results[i], o};
      outs[i] = Out{&results[i], o};
    }
    XLAC_RETURN_IF_ERROR(ForEachWindowElement(tables, out, strides, [&](int64_t lin) {
      for (size_t i = 0; i < n; ++i) args[n + i] = In{inputs[i], lin};
      return reducer.Apply(args, outs);
    }));
    NextIndex(out, out_dims);
  }
  return PackResults(inst.shape(), std::move(results));
}

absl::StatusOr<Literal> EvalSelectAndScatter(const Instruction& inst, Operands operands, Evaluator& ev) {
  const Window* window = WindowAttr(inst);
  if (operands.size() != 3 || window == nullptr || inst.called_computations().size() != 2) {
    return Error(inst, "malformed select-and-scatter");
  }
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  std::vector<Literal> results = InitResults(inst.shape(), operands.subspan(2, 1));
  Literal& result = results[0];
  const std::vector<int64_t>& in_dims = operand.shape().dimensions;
  const std::vector<int64_t>& src_dims = source.shape().dimensions;
  if (window->dimensions.size() != in_dims.size()) return Error(inst, "window rank differs from operand rank");
  WindowTables tables = MakeWindowTables(*window, in_dims, src_dims);
  std::vector<int64_t> strides = RowMajorStrides(in_dims);
  ScalarComputation select(ev, *inst.called_computation(0));
  ScalarComputation scatter(ev, *inst.called_computation(1));
  std::vector<int64_t> s(src_dims.size(), 0);
  for (int64_t si = 0; si < source.element_count(); ++si) {
    int64_t selected = -1;
    XLAC_RETURN_IF_ERROR(ForEachWindowElement(tables, s, strides, [&](int64_t lin) -> absl::Status {
      if (selected < 0) {
        selected = lin;
        return absl::OkStatus();
      }
      In args[2] = {In{&operand, selected}, In{&operand, lin}};
      absl::StatusOr<bool> keep = select.ApplyPred(args);
      if (!keep.ok()) return keep.status();
      if (!*keep) selected = lin;
      return absl::OkStatus();
    }));
    if (selected >= 0) {
      In args[2] = {In{&result, selected}, In{&source, si}};
      Out out{&result, selected};
      XLAC_RETURN_IF_ERROR(scatter.Apply(args, absl::MakeConstSpan(&out, 1)));
    }
    NextIndex(s, src_dims);
  }
  return std::move(result);
}

absl::StatusOr<Literal> EvalMap(const Instruction& inst, Operands operands, Evaluator& ev) {
  if (inst.called_computations().empty()) return Error(inst, "map without a computation");
  ScalarComputation fn(ev, *inst.called_computation(0));
  Literal result(inst.shape());
  std::vector<In> args(operands.size());
  for (int64_t i = 0; i < result.element_count(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k) args[k] = In{operands[k], i};
    Out out{&result, i};
    XLAC_RETURN_IF_ERROR(fn.Apply(args, absl::MakeConstSpan(&out, 1)));
  }
  return result;
}

}  // namespace xlac::interp

namespace xlac::interp {
namespace {

// Copies slice `t` along `dim` of `src` into `dst` (whose shape lacks `dim`), or back when `to_src`.
void CopySlice(const Literal& src_shape_owner, Literal& slice, Literal* full, const Literal* full_in, int64_t dim,
               int64_t t, bool to_full) {
  const std::vector<int64_t>& dims = src_shape_owner.shape().dimensions;
  int64_t w = ByteWidth(src_shape_owner.shape().element_type);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= dims[d];
  for (size_t d = static_cast<size_t>(dim) + 1; d < dims.size(); ++d) inner *= dims[d];
  int64_t n = dims[dim];
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = (o * n + t) * inner * w;
    if (to_full) {
      CopyBytes(full->mutable_raw_data() + base, slice.raw_data() + o * inner * w, inner * w);
    } else {
      CopyBytes(slice.mutable_raw_data() + o * inner * w, full_in->raw_data() + base, inner * w);
    }
  }
}

Shape WithoutDim(const Shape& shape, int64_t dim) {
  Shape s = shape;
  s.ClearLayout();
  s.dimensions.erase(s.dimensions.begin() + dim);
  s.dynamic_dimensions.erase(s.dynamic_dimensions.begin() + dim);
  return s;
}

}  // namespace

// scan: walks `dimensions={d}` (backwards when is_reverse), calling the body with the inputs' slices and the
// carries; the body returns (output slices..., new carries...). Results are the stacked outputs, then the carries.
absl::StatusOr<Literal> EvalScan(const Instruction& inst, Operands operands, Evaluator& ev) {
  const std::vector<int64_t>& dims = IntList(inst, "dimensions");
  int64_t carries = IntAttr(inst, "num_carries", 0);
  if (dims.size() != 1 || inst.called_computations().empty() || carries < 0 ||
      carries > static_cast<int64_t>(operands.size())) {
    return Error(inst, "malformed scan");
  }
  int64_t dim = dims[0];
  bool reverse = BoolAttr(inst, "is_reverse", false);
  size_t num_inputs = operands.size() - static_cast<size_t>(carries);
  std::vector<Shape> result_shapes =
      inst.shape().IsTuple() ? inst.shape().tuple_shapes : std::vector<Shape>{inst.shape()};
  if (result_shapes.size() < static_cast<size_t>(carries)) return Error(inst, "fewer results than carries");
  size_t num_outputs = result_shapes.size() - static_cast<size_t>(carries);
  std::vector<Literal> outputs;
  for (size_t i = 0; i < num_outputs; ++i) outputs.emplace_back(result_shapes[i]);
  int64_t len = num_inputs > 0 ? operands[0]->shape().dimensions.at(dim)
                               : (num_outputs > 0 ? result_shapes[0].dimensions.at(dim) : 0);
  std::vector<Literal> state;
  for (size_t i = num_inputs; i < operands.size(); ++i) state.push_back(*operands[i]);
  std::vector<Literal> slices;
  for (size_t i = 0; i < num_inputs; ++i) slices.emplace_back(WithoutDim(operands[i]->shape(), dim));
  for (int64_t step = 0; step < len; ++step) {
    int64_t t = reverse ? len - 1 - step : step;
    std::vector<const Literal*> args;
    for (size_t i = 0; i < num_inputs; ++i) {
      CopySlice(*operands[i], slices[i], nullptr, operands[i], dim, t, false);
      args.push_back(&slices[i]);
    }
    for (const Literal& c : state) args.push_back(&c);
    absl::StatusOr<Literal> r = ev.Call(*inst.called_computation(0), args);
    if (!r.ok()) return r.status();
    std::vector<Literal> parts;
    if (r->is_tuple()) {
      parts = std::move(r->mutable_tuple_elements());
    } else {
      parts.push_back(*std::move(r));
    }
    if (parts.size() != result_shapes.size()) return Error(inst, "body returns {} values", parts.size());
    for (size_t i = 0; i < num_outputs; ++i) CopySlice(outputs[i], parts[i], &outputs[i], nullptr, dim, t, true);
    for (size_t i = 0; i < static_cast<size_t>(carries); ++i) state[i] = std::move(parts[num_outputs + i]);
  }
  for (Literal& c : state) outputs.push_back(std::move(c));
  if (!inst.shape().IsTuple()) return std::move(outputs[0]);
  return Literal::CreateTuple(std::move(outputs));
}

}  // namespace xlac::interp
