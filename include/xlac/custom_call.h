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
#pragma once

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

// Marks the function that follows as the elementwise kernel of custom-call target `target` (a string literal). The
// function is emitted even when it is `static` or `inline`, so xlac can link it.
#define XLAC_ELEMENTWISE(target) [[clang::annotate("xlac.elementwise", target), gnu::used]]
