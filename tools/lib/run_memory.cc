#include "tools/lib/run_memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "ir/computation.h"
#include "ir/sharding.h"
#include "passes/buffer_assignment.h"
#include "passes/f64_reference.h"
#include "passes/tpu_memory.h"
#include "runtime/interpreter/fast_kernels.h"
#include "runtime/interpreter/interpreter.h"
#include "tools/lib/run_compare.h"

namespace xlac {
namespace {

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

// Sizes saturate: a shape whose bytes overflow int64 needs more than any machine has, which is all the check asks.
int64_t Add(int64_t a, int64_t b) { return a > kMaxBytes - b ? kMaxBytes : a + b; }
int64_t Mul(int64_t count, int64_t bytes) { return count > 0 && bytes > kMaxBytes / count ? kMaxBytes : count * bytes; }

int64_t ShapeBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes) total = Add(total, ShapeBytes(element));
    return total;
  }
  if (shape.IsBuffer()) return ShapeBytes(shape.BufferElementShape());
  if (!shape.IsArray()) return 0;
  return shape.ByteSizeOf().value_or(kMaxBytes);
}

int64_t ParameterBytes(const Module& module) {
  int64_t total = 0;
  for (const Instruction* p : module.entry_computation()->parameters()) total = Add(total, ShapeBytes(p->shape()));
  return total;
}

// The bytes of the partitioned program's parameters that are copies: a shard of a whole array (replicated, manual,
// or a tiling that keeps every element on every device) shares the global argument's bytes (ShardLiteral).
int64_t ShardCopyBytes(const Module& module, const Module& run) {
  const std::vector<Instruction*>& global = module.entry_computation()->parameters();
  const std::vector<Instruction*>& local = run.entry_computation()->parameters();
  int64_t total = 0;
  for (size_t i = 0; i < local.size(); ++i) {
    const Shape& shape = local[i]->shape();
    if (i < global.size() && shape.IsArray() && global[i]->shape().IsArray() &&
        shape.dimensions == global[i]->shape().dimensions) {
      continue;
    }
    total = Add(total, ShapeBytes(shape));
  }
  return total;
}

// Whether a buffer of `shape` is laid out as a row-major literal is (JitExecutable reads such parameters in place).
bool RowMajor(const Shape& shape) {
  if (!shape.IsArray()) return false;
  if (!shape.layout.has_value() || shape.layout->minor_to_major.empty()) return true;
  const std::vector<int64_t>& order = shape.layout->minor_to_major;
  if (!shape.layout->HasOnlyMinorToMajor() || order.size() != shape.dimensions.size()) return false;
  // Dimensions of size 1 may sit anywhere: only the others' order decides.
  int64_t last = std::numeric_limits<int64_t>::max();
  for (int64_t d : order) {
    if (shape.dimensions[static_cast<size_t>(d)] <= 1) continue;
    if (d > last) return false;
    last = d;
  }
  return true;
}

// By shape, so elided `{...}` constants count at the size xla-run gives them.
int64_t ConstantBytes(const Module& module) {
  int64_t total = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kConstant) total = Add(total, ShapeBytes(inst->shape()));
    }
  }
  return total;
}

bool HasElidedConstants(const Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kConstant && inst->has_literal() && inst->literal().is_unknown()) return true;
    }
  }
  return false;
}

// An upper bound of one device's non-constant buffers without running the compile pipeline: every value of every
// computation gets bytes of its own, twice (for the copies copy insertion and layout assignment may add), plus the
// arena's alignment.
int64_t BufferBound(const Module& module) {
  int64_t total = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kConstant) total = Add(total, Add(Mul(2, ShapeBytes(inst->shape())), 64));
    }
  }
  return total;
}

// The element width the interpreter's dot and convolution kernels compute in (runtime/interpreter/dot_conv.cc).
int64_t ComputeWidth(PrimitiveType type) {
  if (type == PrimitiveType::kC128) return 16;
  if (type == PrimitiveType::kF64 || type == PrimitiveType::kC64 || !IsFloatingPointType(type)) return 8;
  return 4;
}

int64_t Elements(const Shape& shape) { return shape.IsArray() ? shape.ElementCount().value_or(kMaxBytes) : 0; }

int64_t DimsProduct(const Shape& shape, const std::vector<int64_t>& which) {
  int64_t product = 1;
  for (int64_t d : which) {
    if (d >= 0 && d < shape.rank()) product = Mul(product, shape.dimensions[static_cast<size_t>(d)]);
  }
  return product;
}

// What a dot holds besides its operands and result (runtime/interpreter/dot_conv.cc, EvalDot): operands of another
// element type converted to the result's (except a narrower float rhs of an f32 or f64 dot, which the GEMM reads in
// place), and then
//  - f32 and f64: the lhs gathered into the GEMM's order, and the GEMM's packing buffer (interp::GemmPackBytes);
//  - narrower floats: the lhs widened to f32 (an lhs out of order permuted in its own type first, freed before the
//    result's f32 vector and the packing buffer are made);
//  - integers, pred and complex: both operands in the compute type and then the result's vector, an operand out of
//    order permuted in its storage type first.
int64_t DotScratch(const Instruction& inst) {
  if (inst.operand_count() != 2 || !inst.operand(0)->shape().IsArray() || !inst.operand(1)->shape().IsArray() ||
      !inst.shape().IsArray()) {
    return 0;
  }
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const PrimitiveType type = inst.shape().element_type;
  const int64_t lhs_elements = Elements(lhs), rhs_elements = Elements(rhs), out_elements = Elements(inst.shape());
  const bool wide = type == PrimitiveType::kF32 || type == PrimitiveType::kF64;
  const bool narrow = !wide && IsFloatingPointType(type);
  auto converted = [&](const Shape& op, int64_t elements) {
    return op.element_type == type ? 0 : Mul(elements, ByteWidth(type));
  };
  const bool rhs_in_place = wide && IsFloatingPointType(rhs.element_type) && rhs.element_type != PrimitiveType::kF64;
  const int64_t conversions = Add(converted(lhs, lhs_elements), rhs_in_place ? 0 : converted(rhs, rhs_elements));
  if (!wide && !narrow) {
    int64_t transient = Mul(out_elements, ComputeWidth(type));
    for (const Shape* op : {&lhs, &rhs}) transient = std::max(transient, ShapeBytes(*op));
    return Add(Add(conversions, transient), Mul(Add(lhs_elements, rhs_elements), ComputeWidth(type)));
  }
  const int64_t batch = DimsProduct(rhs, inst.IntListAttr("rhs_batch_dims"));
  const int64_t k = DimsProduct(rhs, inst.IntListAttr("rhs_contracting_dims"));
  const int64_t n = batch > 0 && k > 0 ? rhs_elements / batch / k : 0;
  const int64_t width = type == PrimitiveType::kF64 ? 8 : 4;
  const int64_t packing = interp::GemmPackBytes(batch, n, k, width);
  const int64_t a = Mul(lhs_elements, width);
  if (wide) return Add(conversions, Add(a, packing));
  // LoadCanonical's order: batch, free, contracting dims; the lhs in that order already is widened as it is.
  std::vector<int64_t> order = inst.IntListAttr("lhs_batch_dims");
  const std::vector<int64_t>& contracting = inst.IntListAttr("lhs_contracting_dims");
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (std::find(order.begin(), order.end(), d) == order.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      order.push_back(d);
    }
  }
  order.insert(order.end(), contracting.begin(), contracting.end());
  bool in_order = true;
  for (size_t i = 0; i < order.size(); ++i) in_order &= order[i] == static_cast<int64_t>(i);
  const int64_t permuted = in_order ? 0 : Mul(lhs_elements, ByteWidth(type));
  return Add(conversions, Add(a, std::max(permuted, Add(Mul(out_elements, 4), packing))));
}

// What a convolution's kernels hold besides its operands and result: both operands gathered in the compute type,
// and the larger of the result's vector and an operand permuted in its storage type.
int64_t ConvolutionScratch(const Instruction& inst) {
  int64_t transient = Mul(Elements(inst.shape()), ComputeWidth(inst.shape().element_type));
  int64_t scratch = 0;
  for (const Instruction* op : inst.operands()) {
    if (!op->shape().IsArray()) continue;
    scratch = Add(scratch, Mul(Elements(op->shape()), ComputeWidth(op->shape().element_type)));
    transient = std::max(transient, ShapeBytes(op->shape()));
  }
  return Add(scratch, transient);
}

int64_t KernelScratch(const Instruction& inst) {
  if (inst.opcode() == Opcode::kDot) return DotScratch(inst);
  if (inst.opcode() == Opcode::kConvolution) return ConvolutionScratch(inst);
  return 0;
}

class InterpreterMemory {
 public:
  // Values that share their operand's bytes in the evaluator (Literal::ViewAs): a get-tuple-element, and a copy,
  // reshape or row-major bitcast of an array.
  static bool Views(const Instruction& inst) {
    if (inst.opcode() == Opcode::kGetTupleElement) return true;
    if (inst.operand_count() != 1 || !inst.shape().IsArray() || !inst.operand(0)->shape().IsArray()) return false;
    switch (inst.opcode()) {
      case Opcode::kCopy:
      case Opcode::kReshape:
        return true;
      case Opcode::kBitcast:
        return RowMajor(inst.shape()) && RowMajor(inst.operand(0)->shape());
      default:
        return false;
    }
  }

  int64_t Peak(const Computation& comp) {
    if (auto it = peaks_.find(&comp); it != peaks_.end()) return it->second;
    peaks_[&comp] = 0;  // HLO has no recursion; this only keeps a malformed module from looping
    const int64_t peak = Simulate(comp);
    peaks_[&comp] = peak;
    return peak;
  }

 private:
  // The evaluator's schedule (Evaluator::GetPlan): live instructions in post order, get-tuple-elements viewing their
  // operand, each owned value freed after its last use, the root kept.
  int64_t Simulate(const Computation& comp) {
    std::vector<Instruction*> post = comp.MakePostOrder();
    const absl::flat_hash_set<const Instruction*> live = interp::LiveInstructions(comp);
    std::vector<const Instruction*> order;
    absl::flat_hash_map<const Instruction*, size_t> slot;
    for (const Instruction* inst : post) {
      if (!live.contains(inst)) continue;
      slot[inst] = order.size();
      order.push_back(inst);
    }
    const size_t n = order.size();
    std::vector<size_t> owner(n);
    std::vector<int64_t> last_use(n, -1);
    for (size_t i = 0; i < n; ++i) {
      owner[i] = Views(*order[i]) ? owner[slot.at(order[i]->operand(0))] : i;
      for (const Instruction* op : order[i]->operands()) {
        size_t o = owner[slot.at(op)];
        last_use[o] = std::max(last_use[o], static_cast<int64_t>(i));
      }
    }
    if (comp.root() != nullptr) last_use[owner[slot.at(comp.root())]] = std::numeric_limits<int64_t>::max();
    std::vector<int64_t> owned(n, 0);
    int64_t held = 0, peak = 0;
    for (size_t i = 0; i < n; ++i) {
      const Instruction& inst = *order[i];
      if (inst.opcode() == Opcode::kParameter || Views(inst)) continue;
      const int64_t result = ShapeBytes(inst.shape());
      int64_t callee = 0;
      for (const Computation* called : inst.called_computations()) callee = std::max(callee, Peak(*called));
      const int64_t scratch = KernelScratch(inst);
      peak = std::max(peak, Add(Add(held, result), Add(callee, scratch)));
      held = Add(held, result);
      owned[i] = result;
      for (const Instruction* op : inst.operands()) {
        size_t o = owner[slot.at(op)];
        if (last_use[o] == static_cast<int64_t>(i)) {
          held -= owned[o];
          owned[o] = 0;
        }
      }
    }
    return peak;
  }

  absl::flat_hash_map<const Computation*, int64_t> peaks_;
};

std::optional<int64_t> ReadNumber(const std::string& path) {
  std::ifstream file(path);
  std::string word;
  if (!(file >> word)) return std::nullopt;
  char* end = nullptr;
  long long value = std::strtoll(word.c_str(), &end, 10);
  if (end == word.c_str() || *end != '\0' || value < 0) return std::nullopt;  // "max": no limit
  return static_cast<int64_t>(value);
}

// The value of `key` in a "key value" file (memory.stat), or 0.
int64_t StatValue(const std::string& path, std::string_view key) {
  std::ifstream file(path);
  std::string name;
  long long value = 0;
  while (file >> name >> value) {
    if (name == key) return static_cast<int64_t>(value);
  }
  return 0;
}

// What the cgroup whose files are in `dir` still allows: its limit less the usage that is not reclaimable page
// cache (cgroups count cached file pages, which the kernel drops before it OOM-kills). nullopt: no limit set.
std::optional<int64_t> CgroupAvailable(const std::string& dir, bool v2) {
  std::optional<int64_t> limit = ReadNumber(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
  // cgroup v1 spells "no limit" as a page-rounded INT64_MAX.
  if (!limit || *limit >= (int64_t{1} << 60)) return std::nullopt;
  std::optional<int64_t> usage = ReadNumber(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
  int64_t reclaimable = StatValue(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file");
  return std::max<int64_t>(0, *limit - usage.value_or(0) + reclaimable);
}

}  // namespace

absl::StatusOr<int64_t> ParseMemorySize(std::string_view text) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(
        fmt::format("invalid value '{}' for --memory-limit (expected bytes with an optional K, M, G or T suffix, "
                    "e.g. 512M or 20G, or 'none')",
                    text));
  };
  if (text == "none") return kNoMemoryLimit;
  std::string_view number = text;
  for (std::string_view unit : {"iB", "B", "b"}) {
    if (number.size() > unit.size() && number.ends_with(unit)) {
      number.remove_suffix(unit.size());
      break;
    }
  }
  double scale = 1;
  if (!number.empty()) {
    switch (number.back()) {
      case 'k':
      case 'K':
        scale = 1024.0;
        break;
      case 'm':
      case 'M':
        scale = 1024.0 * 1024;
        break;
      case 'g':
      case 'G':
        scale = 1024.0 * 1024 * 1024;
        break;
      case 't':
      case 'T':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        break;
    }
    if (scale != 1) number.remove_suffix(1);
  }
  if (number.empty() || number.find_first_not_of("0123456789.") != std::string_view::npos) return invalid();
  std::string digits(number);
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end) * scale;
  if (end != digits.c_str() + digits.size() || !(value >= 1) || value >= 9.2e18) return invalid();
  return static_cast<int64_t>(value);
}

int64_t HostAvailableMemory(std::string_view proc_root, std::string_view cgroup_root) {
  std::optional<int64_t> available;
  {
    std::ifstream meminfo(std::string(proc_root) + "/meminfo");
    std::string line;
    while (std::getline(meminfo, line)) {
      long long kib = 0;
      if (line.starts_with("MemAvailable:") && std::sscanf(line.c_str() + 13, "%lld", &kib) == 1) {
        available = static_cast<int64_t>(kib) * 1024;
        break;
      }
    }
  }
  // /proc/self/cgroup: "0::/path" on cgroup v2, "N:memory:/path" for v1's memory controller. A container usually
  // sees its own cgroup as the root of the mount, so the mount's top-level files are the fallback.
  std::ifstream cgroups(std::string(proc_root) + "/self/cgroup");
  std::string line;
  const std::string root(cgroup_root);
  while (std::getline(cgroups, line)) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    const bool v2 = controllers.empty();
    bool memory = v2;
    std::istringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');) memory |= c == "memory";
    if (!memory) continue;
    const std::string mount = v2 ? root : root + "/memory";
    std::optional<int64_t> cgroup = CgroupAvailable(mount + (path == "/" ? "" : path), v2);
    if (!cgroup) cgroup = CgroupAvailable(mount, v2);
    if (cgroup) available = available ? std::min(*available, *cgroup) : *cgroup;
  }
  return available.value_or(-1);
}

bool HasManualRegions(const Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kCustomCall && IsShardMapBoundaryTarget(inst->StringAttr("custom_call_target"))) {
        return true;
      }
    }
  }
  return false;
}

bool PerDeviceReference(const RunOptions& options, const Module& module, bool partitioned) {
  if (!partitioned) return false;
  if (HasManualRegions(module)) return true;
  switch (options.reference_program) {
    case ReferenceProgram::kPartitioned:
      return true;
    case ReferenceProgram::kUnpartitioned:
      return false;
    case ReferenceProgram::kAuto:
      break;
  }
  // An explicit --max-ulp or --atol allows what partitioning reassociates: against the unpartitioned module.
  return options.exact && options.max_ulp == 0 && options.atol == 0;
}

int64_t InterpreterPeakBytes(const Module& module) {
  if (module.entry_computation() == nullptr) return 0;
  return InterpreterMemory().Peak(*module.entry_computation());
}

std::string RunMemoryEstimate::ToString() const {
  std::string out;
  for (const Part& part : parts) {
    if (part.bytes == 0) continue;
    if (!out.empty()) out += ", ";
    out += part.count > 1 ? fmt::format("{} {} x {}", part.what, part.count, FormatBytes(part.bytes))
                          : fmt::format("{} {}", part.what, FormatBytes(part.bytes));
  }
  return out;
}

RunMemoryEstimate EstimateRunMemory(const RunMemoryPlan& plan, int64_t fits_within) {
  const Module& module = *plan.module;
  using Part = RunMemoryEstimate::Part;
  std::vector<Part> common;
  if (plan.global_arguments) common.push_back({"parameters", 1, ParameterBytes(module)});
  const int64_t global_result = ShapeBytes(module.entry_computation()->root()->shape());
  const int64_t constants = ConstantBytes(module);
  auto sum = [](const std::vector<Part>& parts) {
    int64_t total = 0;
    for (const Part& p : parts) total = Add(total, Mul(p.count, p.bytes));
    return total;
  };
  RunMemoryEstimate estimate;
  if (plan.run_module == nullptr) {
    // Before partitioning: what any run of the module holds for certain.
    estimate.parts = common;
    estimate.parts.push_back({"constants", 1, constants});
    estimate.parts.push_back({"results", 1, global_result});
    estimate.total = sum(estimate.parts);
    return estimate;
  }
  const Module& run = *plan.run_module;
  if (plan.partitioned) common.push_back({"parameter shards", plan.devices, ShardCopyBytes(module, run)});
  // The partitioned program is a copy of the module with constants of its own.
  const int64_t module_constants = Add(constants, plan.partitioned ? ConstantBytes(run) : 0);
  // Every device's result (the JIT returns zero-filled ones for other processes' devices), then the global results
  // assembled from them, which the references run beside. Once assembled, the devices' results go unless they are
  // the outputs (--per-device); unpartitioned, they are the outputs.
  const int64_t device_results = Mul(plan.devices, ShapeBytes(run.entry_computation()->root()->shape()));
  const int64_t assembled = plan.partitioned ? Mul(plan.replicas, global_result) : 0;
  const int64_t kept_results =
      plan.partitioned && !plan.per_device_outputs ? assembled : Add(device_results, assembled);

  std::vector<Part> interpreter_phase, reference_phase;
  if (!plan.jit || plan.check_against) {
    interpreter_phase = common;  // the reference reads the global arguments the run built, without a copy
    // After a JIT run the shards are freed unless the reference runs the partitioned program device by device.
    if (plan.jit && plan.partitioned && !plan.per_device_reference)
      interpreter_phase.erase(interpreter_phase.end() - 1);
    interpreter_phase.push_back({"constants", 1, module_constants});
    if (plan.jit) interpreter_phase.push_back({"results", 1, kept_results});
    // The reference evaluates the unpartitioned module on one partition per replica, or with manual regions the
    // partitioned program on every device (all of them live at once: their collectives meet).
    const bool whole_module = plan.jit && !(plan.partitioned && plan.per_device_reference);
    const Module& evaluated = whole_module ? module : run;
    const int64_t devices = whole_module && plan.partitioned ? plan.replicas : plan.devices;
    interpreter_phase.push_back({"interpreter", devices, InterpreterPeakBytes(evaluated)});
    if (plan.reference != ReferenceChoice::kNone) {
      // The same module promoted (a copy: its constants again) runs on the same devices, beside the interpreter's
      // results. A module the promotion rejects gets no reference (xla-run says why), so no phase.
      const PrimitiveType type = plan.reference == ReferenceChoice::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
      if (absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteFloats(evaluated, type); promoted.ok()) {
        const std::string name = fmt::format("{} reference", PrimitiveTypeName(type));
        reference_phase = interpreter_phase;
        reference_phase.back() = {"interpreter results", 1,
                                  Mul(devices, ShapeBytes(evaluated.entry_computation()->root()->shape()))};
        reference_phase.push_back({name + " constants", 1, ConstantBytes(evaluated)});
        reference_phase.push_back({name, devices, InterpreterPeakBytes(**promoted)});
      }
    }
  }
  std::vector<Part> jit_phase;
  if (plan.jit) {
    jit_phase = common;
    // The JIT's prepared clone, the LLVM IR's constant data and the object code each hold the constants again.
    jit_phase.push_back({"constants", 1, Add(module_constants, Mul(3, ConstantBytes(run)))});
    jit_phase.push_back({"results", 1, device_results});
    const int64_t fixed = sum(jit_phase);
    const int64_t bound = BufferBound(run);
    int64_t per_device = bound;
    estimate.buffers_bounded = true;
    if (Add(fixed, Mul(plan.local_devices, bound)) > fits_within || sum(interpreter_phase) > fits_within ||
        sum(reference_phase) > fits_within) {
      codegen::CompileOptions compile = plan.compile;
      compile.verify_each_pass = false;  // the module verified; this only sizes its buffers
      compile.buffers.result_allocations = true;
      // A module the pipeline rejects keeps the bound: the JIT reports why when it compiles it.
      if (absl::StatusOr<codegen::PreparedModule> prepared = codegen::PrepareModule(run, compile); prepared.ok()) {
        // Every device reads its row-major array parameters in place unless they are donated (JitExecutable's
        // RunBuffers and RunPerDevice); one unpartitioned device also writes its results straight into the result
        // arrays (RunBuffers), where every other run copies them out of each device's buffers.
        const Computation* entry = prepared->module->entry_computation();
        bool results_in_place = plan.devices == 1 && !plan.partitioned;
        for (const Instruction* p : entry->parameters()) results_in_place &= p->shape().IsArray();
        per_device = 0;
        for (const Allocation& alloc : prepared->assignment.allocations()) {
          if (alloc.kind == AllocationKind::kConstant || (alloc.entry_result && results_in_place)) continue;
          if (alloc.kind == AllocationKind::kParameter && alloc.parameter_number >= 0 &&
              alloc.parameter_number < entry->parameter_count()) {
            bool donated = false;
            for (const InputOutputAlias& alias : run.config().input_output_alias) {
              donated |= alias.parameter_number == alloc.parameter_number;
            }
            const Shape* leaf = entry->parameter(alloc.parameter_number)->shape().Subshape(alloc.parameter_shape_index);
            if (!donated && leaf != nullptr && RowMajor(*leaf)) continue;
          }
          per_device = Add(per_device, alloc.size);
        }
        estimate.buffers_bounded = false;
      }
    }
    jit_phase.push_back({"per-device buffers", plan.local_devices, per_device});
  }
  for (const std::vector<Part>* phase : {&jit_phase, &interpreter_phase, &reference_phase}) {
    if (estimate.parts.empty() || sum(*phase) > estimate.total) {
      estimate.parts = *phase;
      estimate.total = sum(*phase);
    }
  }
  return estimate;
}

int64_t PlannableHostMemory(int64_t available) { return available < 0 ? available : available / 10 * 9; }

std::string RunMemoryError(const RunMemoryEstimate& estimate, int64_t limit, bool from_flag) {
  return fmt::format("this run needs {} ({}); {} (--memory-limit=SIZE or --memory-limit=none overrides the check)",
                     FormatBytes(estimate.total), estimate.ToString(),
                     from_flag ? fmt::format("--memory-limit is {}", FormatBytes(limit))
                               : fmt::format("this machine has {} available, {} of it for what the estimate counts",
                                             FormatBytes(limit), FormatBytes(PlannableHostMemory(limit))));
}

absl::Status CheckRunMemory(const RunOptions& options, const Module& module, const Module* run_module, bool partitioned,
                            int64_t processes, ReferenceChoice* reference) {
  // The reference RunModule tries first: the conditions under which it computes one (the default mode's relative
  // rule), and --reference-type.
  const Shape& result_shape = module.entry_computation()->root()->shape();
  const bool f32_judges = JudgedByRelativeRule(result_shape, PrimitiveType::kF32);
  ReferenceChoice first = ReferenceChoice::kNone;
  if (!options.check_against.empty() && !options.exact && !options.tolerance_given && !options.fixed_tolerance &&
      JudgedByRelativeRule(result_shape)) {
    if (!options.reference_f32) {
      first = ReferenceChoice::kF64;
    } else if (f32_judges) {
      first = ReferenceChoice::kF32;
    }
  }
  if (reference != nullptr) *reference = first;
  const bool from_flag = options.memory_limit.has_value();
  const int64_t available = options.memory_limit.value_or(options.host_available_memory);
  if (available < 0) return absl::OkStatus();
  const int64_t limit = from_flag ? available : PlannableHostMemory(available);
  // Before partitioning only elided constants would be built (the arguments wait for the full check): without them
  // the full check alone names every part.
  if (run_module == nullptr && !HasElidedConstants(module)) return absl::OkStatus();
  RunMemoryPlan plan;
  plan.module = &module;
  plan.run_module = run_module;
  plan.partitioned = partitioned;
  plan.replicas = std::max<int64_t>(1, options.num_replicas > 0 ? options.num_replicas : module.config().replica_count);
  const int64_t partitions =
      std::max<int64_t>(1, options.num_partitions > 0 ? options.num_partitions : module.config().num_partitions);
  plan.devices = plan.replicas * partitions;
  plan.local_devices = processes > 1 && plan.devices % processes == 0 ? plan.devices / processes : plan.devices;
  plan.jit = options.backend == "jit";
  plan.check_against = !options.check_against.empty();
  plan.per_device_reference = run_module != nullptr && PerDeviceReference(options, module, partitioned);
  plan.per_device_outputs = options.per_device;
  plan.global_arguments = options.input_shards.empty() || (plan.check_against && !plan.per_device_reference);
  plan.compile.exact = options.exact;
  plan.compile.tpu_numerics = options.tpu_numerics;
  // Widest first: each candidate's reference phase is smaller than the one before, the other phases the same.
  std::vector<ReferenceChoice> candidates = {first};
  if (reference != nullptr && first == ReferenceChoice::kF64 && f32_judges) candidates.push_back(ReferenceChoice::kF32);
  if (reference != nullptr && first != ReferenceChoice::kNone) candidates.push_back(ReferenceChoice::kNone);
  RunMemoryEstimate estimate;
  for (ReferenceChoice candidate : candidates) {
    plan.reference = candidate;
    estimate = EstimateRunMemory(plan, limit);
    if (estimate.total <= limit) {
      if (reference != nullptr) *reference = candidate;
      return absl::OkStatus();
    }
  }
  // The error names the run without a reference when one could have been dropped: that is what does not fit.
  return absl::ResourceExhaustedError(RunMemoryError(estimate, available, from_flag));
}

}  // namespace xlac
