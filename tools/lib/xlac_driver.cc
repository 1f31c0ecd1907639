#include "tools/lib/xlac_driver.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/aot.h"
#include "codegen/compilation_cache.h"
#include "codegen/pipeline.h"
#include "compiler/auto_shard.h"
#include "compiler/compiler.h"
#include "compiler/custom_call_libs.h"
#include "compiler/kernel_sources.h"
#include "fmt/format.h"
#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "ir/diagnostics.h"
#include "ir/status_macros.h"
#include "passes/annotation_custom_calls.h"
#include "passes/spmd/tiling.h"
#include "passes/tpu_cost_model.h"
#include "passes/tpu_memory.h"
#include "tools/lib/observe_flags.h"

namespace xlac {
namespace {

constexpr std::string_view kHelp = R"(USAGE: xlac [options] <input file>

Compiles an XLA HLO module (.hlo text) or StableHLO (.mlir) ahead of time for the CPU.

OPTIONS:
  -o <file>              Output file ('-' for stdout). Default: <input stem>.o for objects, stdout otherwise.
  --emit=<kind>          obj (default), asm, llvm (optimized LLVM IR), hlo (the module after codegen
                         preparation), header (C declarations of the entry function and its buffer table),
                         buffers (the buffer assignment: allocations, arena layout, live ranges, peak bytes),
                         spmd-report (the collectives the SPMD partitioner inserted, bytes per core, warnings),
                         tpu-report (with --tpu: HBM per core, padded and unpadded, the largest buffers, and
                         a modeled step time split into compute, memory and communication)
  -O0, -O1, -O2, -O3     Optimization level (default -O2)
  --target-cpu=<name>    'host' (default: detect the host CPU and its features) or an LLVM CPU name
  --strict               Reject HLO text that XLA's parser rejects even where exporters write it with one
                         meaning (api_version=API_VERSION_UNSPECIFIED); default: read it with a warning
  --exact                Exact numerics: libm calls, sequential reductions, no FMA contraction (bit for bit the
                         reference interpreter); default: vectorized approximations within docs/numerics.md
  --tpu-numerics         f32 dots and convolutions at DEFAULT precision round their operands to bf16 and
                         accumulate in f32, as a TPU's matrix unit (HIGH: the 3-pass bf16 split; HIGHEST: f32)
  --tpu=<version>        Compile for one core of a TPU slice of v4, v5e, v5p or v6e chips (docs/tpu_model.md):
                         TPU dot numerics, and a program whose peak of live buffers padded to TPU tiles exceeds
                         the chip's HBM is an error listing the largest buffers
  --topology=<AxB[xC]>   The slice (v5e/v6e: 2x4, 4x4, ...; v4/v5p: 2x2x1, 4x4x4, ...); sets --num-partitions to
                         its device count unless given
  --num-partitions=<n>   Override the module's num_partitions. A module with sharding annotations and more
                         than one partition is partitioned (sharding-propagation, spmd-partitioner): the output
                         is the program each partition runs on its shard
  --spmd-windowed-einsum-threshold-mib=<X>
                         Windowed einsum (collective matmul, docs/spmd.md): a sharded dot whose operand all-gather
                         or result reduce-scatter moves at least X MiB per core (decimals allowed) becomes a while
                         loop of collective-permutes around the ring, one partial dot per step. 0 (default): off
  --custom-call-lib=<lib.so>[:<target>=<symbol>,...]
                         XLA FFI handler library (docs/custom_calls.md): checks that every typed-FFI custom call
                         has a handler in one of the libraries (repeatable); the host that runs the object
                         installs the handlers
  --custom-call-src=<file.cc>
                         C++ kernels for custom calls (docs/custom_calls.md), compiled in process by Clang for
                         --target-cpu and linked into the output: the object runs them with no other library
                         (repeatable)
  --arg-shape=<shape>    The shape of the next entry argument, e.g. f32[4,8] (repeat once per argument, in order):
                         a shape-polymorphic StableHLO export (jax.export with symbolic dimensions, `?` in its
                         types) is refined to these shapes, as XLA does when it loads one; ignored otherwise
  --custom-call-identity=<T1,T2,...>
                         Custom-calls with these targets are identities (one operand, result of its shape;
                         otherwise an error at the call), e.g. PyTorch/XLA's tt.mark_argument; repeatable
  --cache-dir=<dir>      Persistent compilation cache (docs/cache.md) for obj, asm and llvm outputs: a module
                         compiled before with the same options, CPU and xlac build is read from <dir> instead
                         of compiled (default: XLAC_CACHE_DIR)
  --cache-readonly       Look entries up, never write the cache directory
  --cache-max-bytes=<n>  Evict the least recently used entries beyond n bytes (default 1073741824)
  --explain-cache        Print to stderr whether the cache hit and, on a miss, which key component differs
  --dump-to=<dir>        XLA-style dumps of the compilation (docs/observability.md): module before and after
                         optimization and after each pass, buffer assignment, LLVM IR, the object file
  --dump-pass-regex=<re> With --dump-to: per-pass dumps only for the passes whose name matches <re>
  --auto-shard           With --mesh and --tpu: choose shardings for the unannotated entry parameters that minimize
                         the modeled step time of --emit=tpu-report within per-core HBM (docs/spmd.md, "Automatic
                         sharding"), keeping the given ones; --emit=hlo prints the annotated module, other kinds
                         compile it over the mesh's devices
  --mesh=<AxB[xC]>       The device mesh --auto-shard shards over (row-major device ids 0..n-1)
  --explain-sharding     With --auto-shard: print each choice and why (modeled times) to stderr
  (XLAC_FLAGS in the environment adds flags before the command line's)
  -h, --help             Show this help
)";

bool WriteOutputFile(const std::string& filename, const std::string& contents, std::ostream& err) {
  std::string tmp = filename + ".xlac-tmp." + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (file) file << contents;
    file.close();
    if (!file) {
      err << "xlac: error: cannot write output file '" << filename << "': " << std::strerror(errno) << "\n";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), filename.c_str()) != 0) {
    err << "xlac: error: cannot write output file '" << filename << "': " << std::strerror(errno) << "\n";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

std::string CIdentifier(std::string_view s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "m_" + out;
  return out;
}

// C declarations for calling the compiled entry: the buffer table the caller must fill.
absl::StatusOr<std::string> EmitHeader(const Module& module, const codegen::CompileOptions& options,
                                       std::string_view input_name, const SpmdReport* spmd, const Module* global) {
  absl::StatusOr<codegen::PreparedModule> prepared = codegen::PrepareModule(module, options);
  if (!prepared.ok()) return prepared.status();
  const BufferAssignment& ba = prepared->assignment;
  std::string guard = "XLAC_" + CIdentifier(options.entry_name) + "_H_";
  for (char& c : guard) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string id = CIdentifier(options.entry_name);
  std::string out = fmt::format("/* Generated by xlac from {}. Do not edit. */\n#ifndef {}\n#define {}\n\n", input_name,
                                guard, guard);
  out += "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  if (spmd != nullptr && global != nullptr) {
    // A partitioned program: every device runs this entry on its shard.
    const Computation* g = global->entry_computation();
    out += fmt::format(
        "/* SPMD program: run on {} partitions (xlac_rt_group_create(replicas, {}, ...)); each takes its\n"
        " * shard of every parameter and produces its shard of the result. Padding of uneven shards is\n"
        " * ignored on input and undefined on output.\n",
        spmd->num_partitions, spmd->num_partitions);
    for (int64_t i = 0; i < g->parameter_count(); ++i) {
      out +=
          fmt::format(" *   parameter {}: global {} sharding {}\n", i, ShapeToString(g->parameter(i)->shape(), false),
                      spmd::ShardingToString(spmd->parameter_shardings[static_cast<size_t>(i)]));
    }
    out += fmt::format(" *   result: global {} sharding {}\n */\n", ShapeToString(g->root()->shape(), false),
                       spmd::ShardingToString(spmd->result_sharding));
    out += fmt::format("#define {}_NUM_PARTITIONS {}\n\n", CIdentifier(options.entry_name), spmd->num_partitions);
  }
  // C99 forbids repeating a typedef: skip it when runtime/cpu/xlac_runtime.h (which declares it) came first.
  out += "#ifndef XLAC_RUNTIME_CPU_XLAC_RUNTIME_H_\ntypedef struct XlacRtDevice XlacRtDevice;\n#endif\n\n";
  out += fmt::format(
      "/* buffers[i] is the base of allocation i (64-byte aligned): parameter buffers hold the entry parameters in\n"
      " * their layouts, the temp buffer is scratch that also holds the results; constant entries are ignored.\n"
      " * Large loops run on the device's threads when its group has a pool: xlac_rt_group_set_thread_pool(group,\n"
      " * xlac_rt_shared_thread_pool(xlac_rt_available_cpus())); without one everything runs on the device thread. */\n"
      "void {}(void* const* buffers, XlacRtDevice* dev);\n\n",
      options.entry_name);
  out += fmt::format("#define {}_NUM_BUFFERS {}\n", id, ba.allocations().size());
  out += fmt::format("#define {}_TEMP_BUFFER {}\n\n", id, ba.temp_allocation());
  const Computation* entry = prepared->module->entry_computation();
  for (const Allocation& a : ba.allocations()) {
    std::string what;
    switch (a.kind) {
      case AllocationKind::kParameter:
        what = fmt::format(
            "parameter {} {} {}", a.parameter_number, ShapeIndexToString(a.parameter_shape_index),
            ShapeToString(*entry->parameter(a.parameter_number)->shape().Subshape(a.parameter_shape_index)));
        break;
      case AllocationKind::kConstant:
        what = "constant " + a.constant->name() + " (ignored)";
        break;
      case AllocationKind::kTemp:
        what = "temp";
        break;
    }
    out += fmt::format("/* buffer {}: {} bytes, {} */\n", a.index, a.size, what);
  }
  // The same facts as C data, so a caller can allocate the table and find its parameters without parsing comments.
  out += fmt::format(
      "\n/* Bytes of each buffer (allocate every one, 64-byte aligned, e.g. with xlac_rt_aligned_alloc). */\n"
      "static const int64_t {}_buffer_sizes[{}] = {{",
      id, std::max<size_t>(ba.allocations().size(), 1));
  for (size_t i = 0; i < ba.allocations().size(); ++i) {
    out += fmt::format("{}{}", i ? ", " : "", ba.allocations()[i].size);
  }
  if (ba.allocations().empty()) out += "0";
  out += "};\n";
  std::vector<int64_t> parameter_buffers(static_cast<size_t>(entry->parameter_count()), -1);
  for (const Allocation& a : ba.allocations()) {
    if (a.kind == AllocationKind::kParameter && a.parameter_shape_index.empty()) {
      parameter_buffers[static_cast<size_t>(a.parameter_number)] = a.index;
    }
  }
  out += fmt::format("#define {}_NUM_PARAMETERS {}\n", id, parameter_buffers.size());
  out += fmt::format(
      "/* The buffer that holds entry parameter i (row-major for the default layout); -1 for a tuple-shaped or unused\n"
      " * parameter (see the buffer comments above for tuple leaves). */\n"
      "static const int64_t {}_parameter_buffers[{}] = {{",
      id, std::max<size_t>(parameter_buffers.size(), 1));
  for (size_t i = 0; i < parameter_buffers.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", parameter_buffers[i]);
  if (parameter_buffers.empty()) out += "-1";
  out += "};\n";
  out += fmt::format("\n/* Result leaves of {} in flattened tuple order: (buffer, byte offset, bytes). */\n",
                     ShapeToString(entry->root()->shape()));
  out += fmt::format("static const int64_t {}_result_slices[][3] = {{\n", id);
  for (const BufferSlice& s : ba.entry_result_slices()) {
    out += fmt::format("    {{{}, {}, {}}},\n", s.allocation, s.offset, s.size);
  }
  if (ba.entry_result_slices().empty()) out += "    {-1, 0, 0},\n";
  out += "};\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return out;
}

}  // namespace

absl::StatusOr<XlacOptions> ParseXlacArgs(std::span<const std::string_view> args) {
  XlacOptions options;
  bool have_input = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "-" || !arg.starts_with("-")) {
      if (have_input) return absl::InvalidArgumentError("more than one input file: '" + std::string(arg) + "'");
      have_input = true;
      options.input_filename = std::string(arg);
      continue;
    }
    std::string_view body = arg.substr(arg.starts_with("--") ? 2 : 1);
    std::string_view name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (name == "h" || name == "help") {
      options.help = true;
    } else if (name == "o") {
      if (!has_value) {
        if (i + 1 >= args.size()) return absl::InvalidArgumentError("-o needs a file name");
        value = args[++i];
      }
      options.output_filename = std::string(value);
    } else if (name.size() == 2 && name[0] == 'O' && name[1] >= '0' && name[1] <= '3' && !has_value) {
      options.opt_level = name[1] - '0';
    } else if (name == "emit" && has_value) {
      if (value == "obj")
        options.emit = XlacEmit::kObject;
      else if (value == "asm")
        options.emit = XlacEmit::kAssembly;
      else if (value == "llvm")
        options.emit = XlacEmit::kLlvmIr;
      else if (value == "hlo")
        options.emit = XlacEmit::kHlo;
      else if (value == "header")
        options.emit = XlacEmit::kHeader;
      else if (value == "buffers")
        options.emit = XlacEmit::kBufferAssignment;
      else if (value == "spmd-report")
        options.emit = XlacEmit::kSpmdReport;
      else if (value == "tpu-report")
        options.emit = XlacEmit::kTpuReport;
      else
        return absl::InvalidArgumentError("unknown --emit kind '" + std::string(value) +
                                          "' (obj, asm, llvm, hlo, header, buffers, spmd-report, tpu-report)");
    } else if (name == "exact" && !has_value) {
      options.exact = true;
    } else if (name == "strict" && !has_value) {
      options.strict = true;
    } else if (name == "tpu-numerics" && !has_value) {
      options.tpu_numerics = true;
    } else if ((name == "tpu" || name == "topology") && has_value && !value.empty()) {
      (name == "tpu" ? options.tpu : options.topology) = std::string(value);
    } else if ((name == "dump-to" || name == "dump-pass-regex") && has_value && !value.empty()) {
      (name == "dump-to" ? options.dump_to : options.dump_pass_regex) = std::string(value);
    } else if (name == "cache-dir" && has_value && !value.empty()) {
      options.cache_dir = std::string(value);
    } else if ((name == "cache-readonly" || name == "explain-cache") && !has_value) {
      (name == "cache-readonly" ? options.cache_readonly : options.explain_cache) = true;
    } else if (name == "cache-max-bytes" && has_value) {
      int64_t n = 0;
      for (char c : value) {
        if (c < '0' || c > '9' || n > (int64_t{1} << 50)) return absl::InvalidArgumentError("bad --cache-max-bytes");
        n = n * 10 + (c - '0');
      }
      if (value.empty() || n < 1) return absl::InvalidArgumentError("--cache-max-bytes needs a positive integer");
      options.cache_max_bytes = n;
    } else if (name == "arg-shape" && has_value) {
      absl::StatusOr<Shape> shape = ParseShape(value);
      if (!shape.ok() || !shape->IsArray()) {
        return absl::InvalidArgumentError("bad --arg-shape '" + std::string(value) +
                                          "' (an array shape such as f32[4,8] or s32[])");
      }
      options.arg_shapes.push_back(*std::move(shape));
    } else if (name == "custom-call-identity" && has_value) {
      if (absl::Status s = AppendCustomCallIdentities(value, options.custom_call_identity); !s.ok()) return s;
    } else if (name == "custom-call-lib" && has_value && !value.empty()) {
      options.custom_call_libs.emplace_back(value);
    } else if (name == "custom-call-src" && has_value && !value.empty()) {
      options.custom_call_sources.emplace_back(value);
    } else if (name == "target-cpu" && has_value && !value.empty()) {
      options.target_cpu = std::string(value);
    } else if (name == "spmd-windowed-einsum-threshold-mib" && has_value) {
      absl::StatusOr<int64_t> bytes = ParseWindowedEinsumThresholdMib(value);
      if (!bytes.ok()) return bytes.status();
      options.spmd_windowed_einsum_threshold_bytes = *bytes;
    } else if (name == "num-partitions" && has_value) {
      int64_t n = 0;
      for (char c : value) {
        if (c < '0' || c > '9' || n > (int64_t{1} << 40)) return absl::InvalidArgumentError("bad --num-partitions");
        n = n * 10 + (c - '0');
      }
      if (value.empty() || n < 1) return absl::InvalidArgumentError("--num-partitions needs a positive integer");
      options.num_partitions = n;
    } else {
      return absl::InvalidArgumentError("unknown option '" + std::string(arg) + "' (see --help)");
    }
  }
  if (!options.topology.empty() && options.tpu.empty()) {
    return absl::InvalidArgumentError("--topology needs --tpu (v4, v5e, v5p, v6e)");
  }
  if (options.emit == XlacEmit::kTpuReport && options.tpu.empty()) {
    return absl::InvalidArgumentError("--emit=tpu-report needs --tpu (v4, v5e, v5p, v6e)");
  }
  if (!options.tpu.empty()) {
    XLAC_ASSIGN_OR_RETURN(const TpuChipSpec* chip, FindTpuChipSpec(options.tpu));
    options.tpu_numerics = true;
    if (!options.topology.empty()) {
      XLAC_ASSIGN_OR_RETURN(TpuTopology topology, ParseTpuTopology(*chip, options.topology));
      if (options.num_partitions == 0) options.num_partitions = topology.num_devices();
      if (options.num_partitions != topology.num_devices()) {
        return absl::InvalidArgumentError(absl::StrCat("--topology=", options.topology, " has ",
                                                       topology.num_devices(), " devices, not --num-partitions=",
                                                       options.num_partitions));
      }
    }
  }
  return options;
}

namespace {

int64_t CountCollectives(const Module& module) {
  int64_t n = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      n += inst->FindAttr("replica_groups") != nullptr || inst->FindAttr("source_target_pairs") != nullptr ? 1 : 0;
    }
  }
  return n;
}

}  // namespace

int RunXlac(const XlacOptions& options, std::string_view input_name, std::string_view input, std::string& output,
            std::ostream& err) {
  // C++ kernels first: a Clang error stops before the module is read.
  CustomCallKernelOptions kernel_options{options.custom_call_sources, options.target_cpu};
  kernel_options.cache = {options.cache_dir, options.cache_readonly, options.cache_max_bytes};
  std::unique_ptr<CustomCallKernels> kernels = CompileCustomCallKernels(kernel_options, err);
  if (kernels == nullptr) return 1;
  SourceFile file(std::string(input_name), input);
  CompilerOptions compiler;
  compiler.num_partitions = options.num_partitions;
  compiler.custom_call_identity = options.custom_call_identity;
  compiler.strict = options.strict;
  compiler.entry_argument_shapes = options.arg_shapes;
  compiler.spmd.windowed_einsum_threshold_bytes = options.spmd_windowed_einsum_threshold_bytes;
  compiler.optimization.opt_level = options.opt_level;
  compiler.optimization.exact = options.exact;
  compiler.optimization.tpu_numerics = options.tpu_numerics;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = LoadModule(file, compiler, diags);
  if (module == nullptr) {
    err << diags.Render(file);
    return 1;
  }
  if (!diags.diagnostics().empty()) err << diags.Render(file);  // warnings and notes
  std::unique_ptr<CompileObserver> observer;  // --dump-to
  if (!options.dump_to.empty()) {
    absl::StatusOr<std::unique_ptr<CompileObserver>> created =
        CompileObserver::Create(DumpOptions{options.dump_to, options.dump_pass_regex, 1}, module->name(),
                                [](const Module& m) { return PrintModule(m); });
    if (!created.ok()) {
      err << input_name << ": error: " << created.status().message() << "\n";
      return 1;
    }
    observer = *std::move(created);
    compiler.optimization.observer = observer.get();
  }
  // --custom-call-lib: the compiled code calls whatever handler its host installs, so xlac only checks that the
  // libraries have a handler for every typed-FFI custom call.
  if (!options.custom_call_libs.empty()) {
    std::shared_ptr<const ffi::HandlerLibraries> libs;
    if (!LoadCustomCallLibs("xlac", options.custom_call_libs, libs, err)) return 1;
    if (!CheckCustomCallLibs(*module, libs.get(), file, err)) return 1;
  }
  if (!options.custom_call_sources.empty() && !BindCustomCallKernels(*kernels, *module, file, err)) return 1;
  std::unique_ptr<Module> global = module->Clone();
  SpmdReport spmd_report;
  DiagnosticEngine spmd_diags;
  absl::StatusOr<bool> partitioned = PartitionModule(*module, compiler, spmd_report, spmd_diags);
  if (!spmd_diags.diagnostics().empty()) err << spmd_diags.Render(file);
  if (!partitioned.ok()) return 1;
  if (options.emit == XlacEmit::kSpmdReport) {
    const ModuleConfig& config = module->config();
    if (!*partitioned) {
      const int64_t collectives = CountCollectives(*module);
      const int64_t p = config.num_partitions, r = config.replica_count;
      std::string devices = r > 1 ? fmt::format("{} partition{} x {} replicas ({} devices)", p, p == 1 ? "" : "s", r,
                                                p * r)
                                  : fmt::format("{} partition{}", p, p == 1 ? "" : "s");
      if (p * r > 1 && (collectives > 0 || IsAlreadyPartitioned(*module))) {
        // An XLA dump after spmd-partitioning: per-device shapes and explicit collectives, run as it is.
        output = fmt::format("spmd: {}, already partitioned ({} collective{} in the program); nothing to partition\n",
                             devices, collectives, collectives == 1 ? "" : "s");
      } else if (p * r > 1) {
        output = fmt::format("spmd: {}, no shardings; every device runs the whole program\n", devices);
      } else {
        output = "spmd: 1 partition; nothing to partition\n";
      }
    } else {
      output = FormatSpmdReport(spmd_report);
    }
    if (!config.device_count_source.empty()) output += "  device count: " + config.device_count_source + "\n";
    // Memory: the buffer assignment's peak of live bytes on one core against the unpartitioned program's.
    codegen::CompileOptions plan;
    plan.partitioned = *partitioned;
    absl::StatusOr<codegen::PreparedModule> per_core = codegen::PrepareModule(*module, plan);
    plan.partitioned = false;
    absl::StatusOr<codegen::PreparedModule> whole = codegen::PrepareModule(*global, plan);
    if (per_core.ok() && whole.ok()) {
      int64_t core = per_core->assignment.peak_live_bytes(), all = whole->assignment.peak_live_bytes();
      output += fmt::format("  peak live bytes per core: {} (unpartitioned program: {}, {:.2f}x)\n", core, all,
                            all > 0 ? static_cast<double>(core) / static_cast<double>(all) : 0.0);
    }
    return 0;
  }
  codegen::CompileOptions compile;
  compile.opt_level = options.opt_level;
  compile.target_cpu = options.target_cpu;
  compile.exact = options.exact;
  compile.tpu_numerics = options.tpu_numerics;
  compile.partitioned = *partitioned;
  compile.kernel_bitcode = kernels->bitcode;
  compile.kernel_fingerprint = kernels->library.fingerprint;
  auto fail = [&](const absl::Status& s) {
    err << input_name << ": error: " << s.message() << "\n";
    return 1;
  };
  if (!options.tpu.empty()) {
    // One core's program on the chosen TPU: its HBM peak, padded to TPU tiles, before anything is emitted.
    const TpuChipSpec* chip = *FindTpuChipSpec(options.tpu);  // validated by ParseXlacArgs
    const int64_t partitions = std::max<int64_t>(1, module->config().num_partitions);
    absl::StatusOr<TpuTopology> topology =
        options.topology.empty() ? DefaultTpuTopology(*chip, partitions) : ParseTpuTopology(*chip, options.topology);
    if (!topology.ok()) return fail(topology.status());
    absl::StatusOr<codegen::PreparedModule> prepared = codegen::PrepareModule(*module, compile);
    if (!prepared.ok()) return fail(prepared.status());
    absl::StatusOr<TpuMemoryReport> report = AnalyzeTpuMemory(*prepared->module, prepared->assignment, *chip);
    if (!report.ok()) return fail(report.status());
    if (options.emit == XlacEmit::kTpuReport) {
      absl::StatusOr<TpuStepReport> step =
          ModelOptimizedTpuStep(*module, *topology, /*num_replicas=*/1, partitions, compile.tpu_numerics,
                                *partitioned);
      if (!step.ok()) return fail(step.status());
      output = fmt::format("TPU {} slice {} ({} devices): one core's program\n", chip->name, topology->ToString(),
                           topology->num_devices()) +
               report->Summary() + step->ToString();
      return 0;
    }
    if (absl::Status fits = CheckTpuMemory(*report); !fits.ok()) return fail(fits);
  }
  switch (options.emit) {
    case XlacEmit::kHlo: {
      absl::StatusOr<codegen::PreparedModule> prepared = codegen::PrepareModule(*module, compile);
      if (!prepared.ok()) return fail(prepared.status());
      output = PrintModule(*prepared->module);
      return 0;
    }
    case XlacEmit::kBufferAssignment: {
      absl::StatusOr<codegen::PreparedModule> prepared = codegen::PrepareModule(*module, compile);
      if (!prepared.ok()) return fail(prepared.status());
      output = prepared->assignment.ToString();
      return 0;
    }
    case XlacEmit::kHeader: {
      absl::StatusOr<std::string> header =
          EmitHeader(*module, compile, input_name, *partitioned ? &spmd_report : nullptr, global.get());
      if (!header.ok()) return fail(header.status());
      output = *std::move(header);
      return 0;
    }
    default:
      break;
  }
  // Only the partition step and the final compilation dump (the reports above prepare the module too).
  compile.observer = observer.get();
  auto dump_output = [&](codegen::AotOutput kind) {
    if (observer == nullptr) return 0;
    if (kind == codegen::AotOutput::kObject) observer->DumpText("o", output);
    return observer->status().ok() ? 0 : fail(observer->status());
  };
  codegen::AotOutput kind = options.emit == XlacEmit::kLlvmIr     ? codegen::AotOutput::kLlvmIr
                            : options.emit == XlacEmit::kAssembly ? codegen::AotOutput::kAssembly
                                                                  : codegen::AotOutput::kObject;
  std::optional<ProgressLine> progress(std::in_place, "compiling");
  if (options.cache_dir.empty()) {
    absl::StatusOr<codegen::AotResult> result = codegen::CompileAot(*module, kind, compile);
    progress.reset();
    if (!result.ok()) return fail(result.status());
    output = std::move(result->contents);
    return dump_output(kind);
  }
  codegen::TargetOptions target_options;
  target_options.cpu = compile.target_cpu;
  target_options.opt_level = compile.opt_level;
  absl::StatusOr<codegen::TargetInfo> target = codegen::ResolveTarget(target_options);
  if (!target.ok()) return fail(target.status());
  codegen::CompilationCache cache({options.cache_dir, options.cache_readonly, options.cache_max_bytes});
  codegen::CacheKeyComponents key = codegen::CompileCacheKey(*module, compile, *target);
  key.emplace_back("output", kind == codegen::AotOutput::kObject     ? "object"
                             : kind == codegen::AotOutput::kAssembly ? "assembly"
                                                                     : "llvm-ir");
  std::string log;
  if (std::optional<codegen::CacheEntry> entry = cache.Lookup(key, log)) {
    output = std::move(entry->object);
    if (options.explain_cache) err << log << "cache: hit " << cache.EntryPath(key) << "\n";
    return 0;
  }
  log += "cache: miss " + cache.EntryPath(key) + "\n" + cache.ExplainMiss(key);
  absl::StatusOr<codegen::AotResult> result = codegen::CompileAot(*module, kind, compile);
  progress.reset();
  if (!result.ok()) return fail(result.status());
  // The entry's check field keeps the buffer table the object expects (informational: nothing is rebuilt).
  cache.Store(key, codegen::CacheEntry{result->buffer_table, result->contents}, log);
  if (options.explain_cache) err << log;
  output = std::move(result->contents);
  return dump_output(kind);
}

namespace {

// --auto-shard, --mesh, --explain-sharding: taken out of the arguments by XlacMain, which annotates the input with
// the chosen shardings before RunXlac compiles it.
struct AutoShardFlags {
  bool enabled = false;
  bool explain = false;
  std::vector<int64_t> mesh;
};

absl::StatusOr<std::vector<int64_t>> ParseMesh(std::string_view text) {
  std::vector<int64_t> mesh;
  int64_t n = -1;
  for (char c : std::string(text) + "x") {
    if (c >= '0' && c <= '9' && n < (int64_t{1} << 20)) {
      n = (n < 0 ? 0 : n * 10) + (c - '0');
    } else if (c == 'x' && n > 0) {
      mesh.push_back(n);
      n = -1;
    } else {
      return absl::InvalidArgumentError("bad --mesh='" + std::string(text) + "' (AxB or AxBxC, e.g. --mesh=2x4)");
    }
  }
  return mesh;
}

// Annotates `text` with AutoShardModule's plan (the explanation on `err` with --explain-sharding); 1 on errors.
int AutoShardInput(const XlacOptions& options, const AutoShardFlags& flags, const std::string& name, std::string& text,
                   std::ostream& err) {
  SourceFile file(name, text);
  CompilerOptions compiler;
  int64_t devices = 1;
  for (int64_t s : flags.mesh) devices *= s;
  compiler.num_partitions = devices;
  compiler.custom_call_identity = options.custom_call_identity;
  compiler.strict = options.strict;
  compiler.entry_argument_shapes = options.arg_shapes;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = LoadModule(file, compiler, diags);
  if (module == nullptr) {
    err << diags.Render(file);
    return 1;
  }
  const TpuChipSpec* chip = *FindTpuChipSpec(options.tpu);  // validated by ParseXlacArgs
  AutoShardConfig config;
  config.mesh_shape = flags.mesh;
  config.chip = chip;
  config.per_core_bytes = [chip](const Module& partitioned) -> absl::StatusOr<int64_t> {
    codegen::CompileOptions compile;
    compile.tpu_numerics = true;
    XLAC_ASSIGN_OR_RETURN(codegen::PreparedModule prepared, codegen::PrepareModule(partitioned, compile));
    XLAC_ASSIGN_OR_RETURN(TpuMemoryReport report, AnalyzeTpuMemory(*prepared.module, prepared.assignment, *chip));
    return report.peak_padded_bytes;
  };
  absl::StatusOr<AutoShardResult> result = AutoShardModule(*module, config);
  if (!result.ok()) {
    err << name << ": error: " << result.status().message() << "\n";
    return 1;
  }
  if (flags.explain) {
    for (const std::string& line : result->explanation) err << line << "\n";
  }
  Computation* entry = module->entry_computation();
  for (size_t i = 0; i < result->parameters.size(); ++i) entry->parameters()[i]->set_sharding(result->parameters[i]);
  module->mutable_config().num_partitions = devices;
  text = PrintModule(*module);
  return 0;
}

}  // namespace

int XlacMain(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err) {
  AutoShardFlags auto_shard;
  std::vector<std::string_view> rest;
  for (std::string_view arg : args) {
    std::string_view body = arg.starts_with("--") ? arg.substr(2) : arg.starts_with("-") ? arg.substr(1) : "";
    if (body == "auto-shard") {
      auto_shard.enabled = true;
    } else if (body == "explain-sharding") {
      auto_shard.explain = true;
    } else if (body.starts_with("mesh=")) {
      absl::StatusOr<std::vector<int64_t>> mesh = ParseMesh(body.substr(5));
      if (!mesh.ok()) {
        err << "xlac: error: " << mesh.status().message() << "\n";
        return 1;
      }
      auto_shard.mesh = *std::move(mesh);
    } else {
      rest.push_back(arg);
    }
  }
  absl::StatusOr<XlacOptions> options = ParseXlacArgs(rest);
  if (!options.ok()) {
    err << "xlac: error: " << options.status().message() << "\n";
    return 1;
  }
  if (!options->help && !auto_shard.enabled && (auto_shard.explain || !auto_shard.mesh.empty())) {
    err << "xlac: error: " << (auto_shard.explain ? "--explain-sharding" : "--mesh") << " needs --auto-shard\n";
    return 1;
  }
  if (!options->help && auto_shard.enabled) {
    int64_t devices = 1;
    for (int64_t s : auto_shard.mesh) devices *= s;
    if (auto_shard.mesh.empty() || options->tpu.empty()) {
      err << "xlac: error: --auto-shard needs --mesh=AxB[xC] and --tpu (v4, v5e, v5p, v6e)\n";
      return 1;
    }
    if (options->num_partitions != 0 && options->num_partitions != devices) {
      err << "xlac: error: --mesh has " << devices << " devices but the program is compiled for "
          << options->num_partitions << " partitions (--num-partitions or --topology)\n";
      return 1;
    }
    options->num_partitions = devices;
  }
  if (options->help) {
    out << kHelp;
    return 0;
  }
  if (const char* dir = std::getenv("XLAC_CACHE_DIR"); options->cache_dir.empty() && dir != nullptr) {
    options->cache_dir = dir;
  }
  std::ostringstream buffer;
  std::string name = options->input_filename;
  if (name == "-") {
    buffer << in.rdbuf();
    name = "<stdin>";
  } else {
    std::ifstream file(name, std::ios::binary);
    if (!file) {
      err << "xlac: error: cannot open input file '" << name << "': " << std::strerror(errno) << "\n";
      return 1;
    }
    buffer << file.rdbuf();
  }
  std::string text = std::move(buffer).str();
  std::string output;
  if (auto_shard.enabled && AutoShardInput(*options, auto_shard, name, text, err) != 0) return 1;
  if (auto_shard.enabled && options->emit == XlacEmit::kHlo) {
    output = text;  // the annotated module, to save or to compile
  } else if (int rc = RunXlac(*options, name, text, output, err); rc != 0) {
    return rc;
  }
  std::string out_name = options->output_filename;
  if (out_name.empty()) {
    if (options->emit != XlacEmit::kObject || options->input_filename == "-") {
      out_name = "-";
    } else {
      std::string stem = options->input_filename;
      if (size_t slash = stem.rfind('/'); slash != std::string::npos) stem = stem.substr(slash + 1);
      if (size_t dot = stem.rfind('.'); dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
      out_name = stem + ".o";
    }
  }
  if (out_name == "-") {
    out << output;
    out.flush();
    return out ? 0 : 1;
  }
  return WriteOutputFile(out_name, output, err) ? 0 : 1;
}

int XlacMain(int argc, char** argv) {
  std::vector<std::string_view> argv_args(argv + 1, argv + argc);
  std::vector<std::string> with_env = WithXlacFlags(argv_args, std::getenv("XLAC_FLAGS"));
  std::vector<std::string_view> args(with_env.begin(), with_env.end());
  return XlacMain(args, std::cin, std::cout, std::cerr);
}

}  // namespace xlac
