// Custom-call kernels written in C++ for xlac (docs/custom_calls.md). xlac compiles the file you give it with
// `--custom-call-src=FILE.cc` (xla-run, xlac), CompileOptions::custom_call_sources (C++ API) or
// `custom_call_sources=[...]` (Python) in process with Clang, for the same CPU as the program, and links the result
// into the program's LLVM module before optimizing it. This header is built into xlac: `#include <xlac/custom_call.h>`
// works without an include path.
//
// An elementwise kernel is a function of scalars that computes one result element from the operand elements at the
// same index:
//
//   #include <xlac/custom_call.h>
//   #include <cmath>
//
//   XLAC_ELEMENTWISE("AwsNeuronGelu")
//   float NeuronGelu(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }
//
// Every custom call in the program whose custom_call_target is "AwsNeuronGelu" then is an elementwise op: its operands
// and result must have the same dimensions (rank-0 operands are broadcast) and the element types the signature
// names. xlac fuses it into loop fusions like any other elementwise op, inlines the function there and vectorizes
// it; the SPMD partitioner shards it as elementwise; the reference interpreter runs the same compiled function.
//
// Parameter and result types map to element types: bool -> pred; int8_t, int16_t, int32_t, int64_t -> s8..s64;
// uint8_t..uint64_t -> u8..u64; _Float16 -> f16; __bf16 -> bf16; float -> f32; double -> f64.
//
// Kernels are compiled as C++20 with -O2, no exceptions and no RTTI; they may call libm and header-only code. A
// kernel must not keep state between calls: xlac may call it in any order, on any thread, any number of times.
//
// Two kinds of kernels: elementwise kernels (XLAC_ELEMENTWISE, above) and buffer kernels (XLAC_BUFFER_KERNEL, below),
// which see whole operands and results, take attributes from backend_config and may fail with a message.
#pragma once

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

// Marks the function that follows as the elementwise kernel of custom-call target `target` (a string literal). The
// function is emitted even when it is `static` or `inline`, so xlac can link it.
#define XLAC_ELEMENTWISE(target) [[clang::annotate("xlac.elementwise", target), gnu::used]]

// ---------------------------------------------------------------------------------------------------------------
// Buffer kernels
//
// A buffer kernel sees whole operands and results: a function taking `xlac::Buffer<const T, Rank>` views of the
// call's operands, then `xlac::Buffer<T, Rank>` views of its results (the array result, or each element of a tuple
// result), then optionally `const Attrs&`, a struct of scalars filled from the call's backend_config; it returns an
// xlac::Status (or void). XLAC_BUFFER_KERNEL after the function registers it:
//
//   struct TopKAttrs { int32_t k; };
//   xlac::Status TopK(xlac::Buffer<const float, 2> x, xlac::Buffer<float, 2> values, const TopKAttrs& attrs) {
//     if (attrs.k <= 0) return xlac::Status::Error("k must be positive, got %d", attrs.k);
//     for (int64_t row = 0; row < x.dim(0); ++row) ... values.at(row, j) = ...;
//     return xlac::Status::Ok();
//   }
//   XLAC_BUFFER_KERNEL("my.topk", TopK, XLAC_SHARDING_BATCH_DIMS(0));
//
// xlac checks every call of "my.topk" against the signature: operand and result counts, element types, and ranks
// where the Buffer fixes them (Rank -1: any). `backend_config` must name exactly the struct's fields, as JSON
// (`backend_config="{\"k\": 3}"`, as JAX and PyTorch write it) or as a StableHLO dictionary
// (`mhlo.backend_config = {k = 3 : i32}`); numbers convert to the field's type when they fit.
//
// Buffers are dense and row-major (the last dimension is contiguous) whatever layout the program chose elsewhere:
// xlac copies around the call where needed. Operands are read-only and never alias results. A kernel may not keep
// pointers into the buffers after it returns. An error status stops the program: the run fails with
// "custom call 'NAME' (target 'T') at FILE:LINE:COL failed: MESSAGE".
//
// Sharding rule (the last, optional argument of XLAC_BUFFER_KERNEL), which the SPMD partitioner follows:
//   XLAC_SHARDING_REPLICATED       (the default) every core runs the kernel on whole operands (gathered first);
//   XLAC_SHARDING_BATCH_DIMS(d...) dimensions d... of every operand and result are batch dimensions of equal sizes:
//                                  the kernel computes each index along them independently, so operands sharded
//                                  along them run per shard, with no collective;
//   XLAC_SHARDING_ELEMENTWISE      operands and results all have one shape and the kernel is elementwise: any
//                                  sharding runs per shard.
// A rule that does not hold for the kernel gives wrong results when the program is partitioned.

#ifdef __cplusplus
extern "C" {
#endif

// One operand or result of a buffer-kernel call: dense row-major data of dims[0] x ... x dims[rank - 1] elements.
typedef struct XlacKernelBuffer {
  void* data;
  const int64_t* dims;
  int64_t rank;
} XlacKernelBuffer;

// What a buffer kernel's registered entry point receives. `attrs` points to the attribute struct (null without one).
// On failure the kernel writes a NUL-terminated message of at most error_capacity bytes to `error` and returns
// nonzero.
typedef struct XlacKernelFrame {
  const XlacKernelBuffer* operands;
  int64_t num_operands;
  const XlacKernelBuffer* results;
  int64_t num_results;
  const void* attrs;
  char* error;
  int64_t error_capacity;
} XlacKernelFrame;

#ifdef __cplusplus
}  // extern "C"

#include <cstdarg>
#include <cstdio>
#include <type_traits>
#include <utility>

namespace xlac {

// A typed view of one operand (`T` const) or result of a buffer kernel. Rank -1 accepts any rank.
template <typename T, int Rank = -1>
class Buffer {
  static_assert(Rank >= -1, "Rank is -1 (any) or a rank");

 public:
  using element_type = T;
  static constexpr int kRank = Rank;

  explicit Buffer(const XlacKernelBuffer& buffer)
      : data_(static_cast<T*>(buffer.data)), dims_(buffer.dims), rank_(buffer.rank) {}

  T* data() const { return data_; }
  int64_t rank() const { return Rank >= 0 ? Rank : rank_; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  const int64_t* dims() const { return dims_; }
  // Number of elements.
  int64_t size() const {
    int64_t n = 1;
    for (int64_t i = 0; i < rank(); ++i) n *= dims_[i];
    return n;
  }
  // Elements between consecutive indices of dimension i (row-major: the last dimension's stride is 1).
  int64_t stride(int64_t i) const {
    int64_t s = 1;
    for (int64_t j = rank() - 1; j > i; --j) s *= dims_[j];
    return s;
  }
  // Element `i` in row-major order.
  T& operator[](int64_t i) const { return data_[i]; }
  // The element at a multi-index, one index per dimension.
  template <typename... I>
  T& at(I... index) const {
    static_assert(Rank < 0 || sizeof...(I) == static_cast<size_t>(Rank), "at() takes one index per dimension");
    const int64_t indices[] = {static_cast<int64_t>(index)..., 0};
    int64_t linear = 0;
    for (size_t d = 0; d < sizeof...(I); ++d) linear = linear * dims_[d] + indices[d];
    return data_[linear];
  }
  T* begin() const { return data_; }
  T* end() const { return data_ + size(); }

 private:
  T* data_;
  const int64_t* dims_;
  int64_t rank_;
};

// What a buffer kernel returns: Ok, or an error with a printf-style message (truncated to 255 bytes).
class Status {
 public:
  static Status Ok() { return Status(); }
  [[gnu::format(printf, 1, 2)]] static Status Error(const char* format, ...) {
    Status status;
    status.ok_ = false;
    va_list args;
    va_start(args, format);
    std::vsnprintf(status.message_, sizeof(status.message_), format, args);
    va_end(args);
    return status;
  }
  bool ok() const { return ok_; }
  const char* message() const { return message_; }

 private:
  bool ok_ = true;
  char message_[256] = {};
};

namespace internal {

template <typename P>
struct BufferParam : std::false_type {};
template <typename T, int R>
struct BufferParam<Buffer<T, R>> : std::true_type {
  static constexpr bool kOperand = std::is_const_v<T>;
};

// 0: operand, 1: result, 2: the attribute struct.
template <typename P>
constexpr int ParamKind() {
  using Bare = std::remove_cvref_t<P>;
  if constexpr (BufferParam<Bare>::value) {
    return BufferParam<Bare>::kOperand ? 0 : 1;
  } else {
    static_assert(std::is_reference_v<P> && std::is_const_v<std::remove_reference_t<P>> && std::is_class_v<Bare>,
                  "a buffer kernel takes xlac::Buffer<const T, R> operands, xlac::Buffer<T, R> results and an "
                  "optional const reference to its attribute struct");
    return 2;
  }
}

// Position of parameter `i` among the parameters of its kind.
template <size_t N>
constexpr int64_t PositionOf(const int (&kinds)[N], size_t i) {
  int64_t n = 0;
  for (size_t j = 0; j < i; ++j) n += kinds[j] == kinds[i] ? 1 : 0;
  return n;
}

template <typename P>
decltype(auto) Argument(const XlacKernelFrame* frame, int kind, int64_t position) {
  using Bare = std::remove_cvref_t<P>;
  if constexpr (BufferParam<Bare>::value) {
    return Bare(kind == 0 ? frame->operands[position] : frame->results[position]);
  } else {
    return *static_cast<const Bare*>(frame->attrs);
  }
}

template <typename R, typename... P, size_t... I>
int32_t Invoke(R (*kernel)(P...), const XlacKernelFrame* frame, std::index_sequence<I...>) {
  constexpr int kinds[] = {ParamKind<P>()..., -1};
  static_assert(((kinds[I] != 2 || I + 1 == sizeof...(P)) && ...), "the attribute struct is the last parameter");
  if constexpr (std::is_void_v<R>) {
    kernel(Argument<P>(frame, kinds[I], PositionOf(kinds, I))...);
    return 0;
  } else {
    static_assert(std::is_same_v<R, Status>, "a buffer kernel returns xlac::Status or void");
    Status status = kernel(Argument<P>(frame, kinds[I], PositionOf(kinds, I))...);
    if (status.ok()) return 0;
    std::snprintf(frame->error, static_cast<size_t>(frame->error_capacity), "%s", status.message());
    return 1;
  }
}

template <typename R, typename... P>
int32_t InvokeBufferKernel(R (*kernel)(P...), const XlacKernelFrame* frame) {
  return Invoke(kernel, frame, std::index_sequence_for<P...>());
}

}  // namespace internal
}  // namespace xlac

#define XLAC_INTERNAL_CONCAT2(a, b) a##b
#define XLAC_INTERNAL_CONCAT(a, b) XLAC_INTERNAL_CONCAT2(a, b)

#define XLAC_SHARDING_REPLICATED "replicated"
#define XLAC_SHARDING_ELEMENTWISE "elementwise"
#define XLAC_SHARDING_BATCH_DIMS(...) "batch_dims", __VA_ARGS__

// Registers `function` (a buffer kernel defined above) as the kernel of custom-call target `target` (a string
// literal), with an optional sharding rule. It defines the entry point xlac calls, an extern "C" function of the
// frame that unpacks it into the function's parameters; xlac reads the signature from the function itself.
#define XLAC_BUFFER_KERNEL(target, function, ...)                                                            \
  extern "C" [[clang::annotate("xlac.buffer_kernel", target __VA_OPT__(, ) __VA_ARGS__), gnu::used]] int32_t \
  XLAC_INTERNAL_CONCAT(xlac_buffer_kernel_, __LINE__)(const XlacKernelFrame* frame) {                        \
    return ::xlac::internal::InvokeBufferKernel(&function, frame);                                           \
  }                                                                                                          \
  static_assert(true, "")

#endif  // __cplusplus
