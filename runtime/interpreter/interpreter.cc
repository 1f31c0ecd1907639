// The multi-device entry point: validates arguments, runs one Evaluator per device (each on its own thread when
// there are several, so collectives rendezvous for real) and reports the root-cause error.
#include "runtime/interpreter/interpreter.h"

#include <algorithm>
#include <thread>

#include "ir/buffer_shapes.h"
#include "ir/status_macros.h"
#include "runtime/interpreter/collective_hub.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {

namespace {

bool IsAbortError(const absl::Status& s) { return s.code() == absl::StatusCode::kAborted; }

}  // namespace

absl::StatusOr<std::vector<Literal>> Evaluate(const Module& module, const std::vector<std::vector<Literal>>& arguments,
                                              const InterpreterOptions& options) {
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  XLAC_RETURN_IF_ERROR(RejectBufferShapes(module, "the interpreter"));
  int64_t replicas = options.num_replicas > 0 ? options.num_replicas : module.config().replica_count;
  int64_t partitions = options.num_partitions > 0 ? options.num_partitions : module.config().num_partitions;
  replicas = std::max<int64_t>(replicas, 1);
  partitions = std::max<int64_t>(partitions, 1);
  int64_t devices = replicas * partitions;
  if (devices > 4096) return absl::InvalidArgumentError(fmt::format("{} devices is too many to simulate", devices));
  static const std::vector<std::vector<Literal>> kNoArguments(1);
  const std::vector<std::vector<Literal>>& args_in = arguments.empty() ? kNoArguments : arguments;
  if (args_in.size() != 1 && static_cast<int64_t>(args_in.size()) != devices) {
    return absl::InvalidArgumentError(
        fmt::format("expected one argument list per device ({}) or a single list for all devices, got {}", devices,
                    args_in.size()));
  }
  for (size_t d = 0; d < args_in.size(); ++d) {
    const std::vector<Literal>& args = args_in[d];
    if (static_cast<int64_t>(args.size()) != entry->parameter_count()) {
      return absl::InvalidArgumentError(fmt::format("entry computation {} takes {} parameters but {} were given",
                                                    entry->name(), entry->parameter_count(), args.size()));
    }
    for (int64_t p = 0; p < entry->parameter_count(); ++p) {
      const Shape& want = entry->parameter(p)->shape();
      if (!args[p].shape().Compatible(want) || args[p].is_unknown()) {
        return absl::InvalidArgumentError(fmt::format("argument {} has shape {} but parameter {} expects {}", p,
                                                      ShapeToString(args[p].shape(), false),
                                                      entry->parameter(p)->name(), ShapeToString(want, false)));
      }
    }
  }

  std::vector<const Computation*> programs(static_cast<size_t>(devices), entry);
  std::vector<std::vector<const Literal*>> device_args;
  for (int64_t d = 0; d < devices; ++d) {
    const std::vector<Literal>& args = args_in.size() == 1 ? args_in[0] : args_in[static_cast<size_t>(d)];
    std::vector<const Literal*> ptrs;
    for (const Literal& a : args) ptrs.push_back(&a);
    device_args.push_back(std::move(ptrs));
  }
  return RunDevices(module, programs, device_args, replicas, partitions, options);
}

absl::StatusOr<std::vector<Literal>> RunDevices(const Module& module, const std::vector<const Computation*>& programs,
                                                const std::vector<std::vector<const Literal*>>& args, int64_t replicas,
                                                int64_t partitions, const InterpreterOptions& options) {
  int64_t devices = replicas * partitions;
  CollectiveHub hub(devices, options.collective_timeout_ms);
  std::vector<absl::StatusOr<Literal>> results(static_cast<size_t>(devices), absl::UnknownError("not run"));
  auto run = [&](int64_t d) {
    DeviceContext ctx;
    ctx.device_id = d;
    ctx.replica_id = d / partitions;
    ctx.partition_id = d % partitions;
    ctx.num_replicas = replicas;
    ctx.num_partitions = partitions;
    ctx.options = &options;
    ctx.hub = &hub;
    Evaluator ev(module, ctx);
    results[static_cast<size_t>(d)] = ev.Call(*programs[static_cast<size_t>(d)], args[static_cast<size_t>(d)]);
    hub.DeviceFinished(d, results[static_cast<size_t>(d)].ok());
  };
  if (devices == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(devices));
    for (int64_t d = 0; d < devices; ++d) threads.emplace_back(run, d);
    for (std::thread& t : threads) t.join();
  }
  // Report the root cause: a device's own failure before failures that merely aborted because of it.
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t d = 0; d < devices; ++d) {
      const absl::Status& s = results[static_cast<size_t>(d)].status();
      if (s.ok() || (pass == 0 && IsAbortError(s))) continue;
      if (devices == 1) return s;
      return absl::Status(s.code(), fmt::format("device {} (replica {}, partition {}): {}", d, d / partitions,
                                                d % partitions, std::string(s.message())));
    }
  }
  std::vector<Literal> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(*std::move(r));
  return out;
}

}  // namespace xlac::interp
