// Timing helpers shared by the kernel benchmarks (gemm, convolution).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/jit.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {

using Clock = std::chrono::steady_clock;

// Fastest of `runs` runs, in seconds (negative on error).
inline double Fastest(codegen::JitExecutable& exe, const std::vector<Literal>& args, int runs) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    Clock::time_point start = Clock::now();
    absl::StatusOr<std::vector<Literal>> r = exe.Run(args);
    if (!r.ok()) return -1;
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// Times one kernel inside a while loop, tiled against the loop nest: `compile(trips, tiled)` builds the module with
// the kernel run `trips` times. The tiled kernel's time is the difference between 1 + extra trips and 1 trip, per
// extra trip (the loop nest's: 2 trips minus 1), so JitExecutable::Run's argument and result copies cancel out.
// Counters: GFLOPs and loop_GFLOPs (`flops` per kernel run), speedup (loop-nest time / tiled time).
template <typename Compile>
void TimeTiledAgainstLoops(benchmark::State& state, double flops, int extra_trips, Compile compile) {
  auto tiled1 = compile(1, true);
  auto tiled_more = compile(1 + extra_trips, true);
  auto loop1 = compile(1, false);
  auto loop2 = compile(2, false);
  if (!tiled1 || !tiled_more || !loop1 || !loop2) return;
  std::vector<Literal> args;
  for (size_t i = 0; i < tiled1->parameter_shapes().size(); ++i) {
    args.push_back(interp::MakeRandomLiteral(tiled1->parameter_shapes()[i], i + 1));
  }
  double loop_time = Fastest(*loop2, args, 3) - Fastest(*loop1, args, 3);
  double tiled_base = Fastest(*tiled1, args, 10);
  double tiled_best = 1e30;
  for (auto _ : state) {
    Clock::time_point start = Clock::now();
    absl::StatusOr<std::vector<Literal>> r = tiled_more->Run(args);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(r->data());
    tiled_best = std::min(tiled_best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  double tiled_time = (tiled_best - tiled_base) / extra_trips;
  state.counters["GFLOPs"] = flops * 1e-9 / tiled_time;
  state.counters["loop_GFLOPs"] = flops * 1e-9 / loop_time;
  state.counters["speedup"] = loop_time / tiled_time;
}

}  // namespace xlac
