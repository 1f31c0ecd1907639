#include "codegen/split_compile.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include "codegen/ir_emitter_gemm.h"
#include "fmt/format.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "runtime/cpu/xlac_runtime.h"

namespace xlac::codegen {
namespace {

// A part smaller than this is not worth its fixed costs (a context, a pass pipeline, an object file).
constexpr int64_t kMinPartInstructions = 500;
constexpr int kMaxParts = 8;
// Constants up to this size are copied into every part that reads them, so LLVM still folds their loads.
constexpr uint64_t kCopiedConstantBytes = 256;

int64_t InstructionCount(const llvm::Function& fn) { return static_cast<int64_t>(fn.getInstructionCount()); }

// The global values `value` refers to, looking through constant expressions and aggregates.
void CollectReferences(const llvm::Value* value, std::set<const llvm::Constant*>& seen,
                       std::vector<const llvm::GlobalValue*>& out) {
  if (const auto* gv = llvm::dyn_cast<llvm::GlobalValue>(value)) {
    out.push_back(gv);
    return;
  }
  const auto* c = llvm::dyn_cast<llvm::Constant>(value);
  if (c == nullptr || llvm::isa<llvm::ConstantData>(c) || !seen.insert(c).second) return;
  for (const llvm::Value* operand : c->operands()) CollectReferences(operand, seen, out);
}

std::vector<const llvm::GlobalValue*> ReferencesOf(const llvm::Function& fn) {
  std::vector<const llvm::GlobalValue*> out;
  std::set<const llvm::Constant*> seen;
  for (const llvm::Instruction& inst : llvm::instructions(fn)) {
    for (const llvm::Value* operand : inst.operands()) CollectReferences(operand, seen, out);
  }
  // Only ever looked up, never iterated in this order: pointer order is fine.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Internal functions the inliner will fold into their callers: copied into every part that calls them.
bool IsCopiedFunction(const llvm::Function& fn) {
  if (fn.isDeclaration() || !fn.hasLocalLinkage() || fn.hasFnAttribute(llvm::Attribute::NoInline)) return false;
  for (const llvm::Use& use : fn.uses()) {
    const auto* call = llvm::dyn_cast<llvm::CallBase>(use.getUser());
    if (call == nullptr || !call->isCallee(&use)) return false;
  }
  return true;
}

bool IsCopiedVariable(const llvm::GlobalVariable& var) {
  if (!var.hasLocalLinkage() || !var.isConstant() || !var.hasInitializer()) return false;
  return var.getParent()->getDataLayout().getTypeAllocSize(var.getValueType()) <= kCopiedConstantBytes;
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(static_cast<size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the earliest function names the cluster
  }
};

std::string WriteBitcode(const llvm::Module& module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(module, os);
  os.flush();
  return bytes;
}

}  // namespace

ModulePart::ModulePart() = default;
ModulePart::ModulePart(ModulePart&&) noexcept = default;
ModulePart& ModulePart::operator=(ModulePart&&) noexcept = default;
ModulePart::~ModulePart() {
  module.reset();  // before its context
  context.reset();
}

int ChoosePartCount(const llvm::Module& module) {
  int64_t instructions = 0;
  for (const llvm::Function& fn : module) instructions += InstructionCount(fn);
  return static_cast<int>(std::clamp<int64_t>(instructions / kMinPartInstructions, 1, kMaxParts));
}

std::vector<ModulePart> SplitModule(llvm::Module& module, int parts, std::vector<PromotedSymbol>& promoted) {
  // Functions with bodies that have a home part, in module order.
  std::vector<llvm::Function*> functions;
  std::map<const llvm::GlobalValue*, int> index_of;
  for (llvm::Function& fn : module) {
    if (fn.isDeclaration() || IsCopiedFunction(fn)) continue;
    index_of[&fn] = static_cast<int>(functions.size());
    functions.push_back(&fn);
  }
  std::map<const llvm::Function*, std::vector<const llvm::GlobalValue*>> references;
  for (llvm::Function& fn : module) {
    if (!fn.isDeclaration()) references[&fn] = ReferencesOf(fn);
  }
  // Clusters: functions that reference each other, except what external functions (the entry) reference.
  UnionFind clusters(static_cast<int>(functions.size()));
  for (size_t i = 0; i < functions.size(); ++i) {
    if (!functions[i]->hasLocalLinkage()) continue;
    for (const llvm::GlobalValue* gv : references[functions[i]]) {
      auto found = index_of.find(gv);
      // A shared function (a shape-generic GEMM) called from many kernels would tie them all into one part.
      if (found != index_of.end() && functions[found->second]->hasLocalLinkage() &&
          !functions[found->second]->hasFnAttribute(internal::kSharedFunctionAttribute)) {
        clusters.Union(static_cast<int>(i), found->second);
      }
    }
  }
  // Largest cluster first onto the lightest part (ties: the earlier cluster, the lower part).
  std::map<int, int64_t> weight;
  for (size_t i = 0; i < functions.size(); ++i) {
    weight[clusters.Find(static_cast<int>(i))] += std::max<int64_t>(1, InstructionCount(*functions[i]));
  }
  std::vector<std::pair<int64_t, int>> order;
  for (const auto& [root, w] : weight) order.push_back({-w, root});
  std::sort(order.begin(), order.end());
  parts = std::max(1, std::min(parts, static_cast<int>(order.size())));
  std::vector<int64_t> load(static_cast<size_t>(parts), 0);
  std::map<int, int> part_of_cluster;
  for (const auto& [negative_weight, root] : order) {
    int lightest = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    part_of_cluster[root] = lightest;
    load[static_cast<size_t>(lightest)] -= negative_weight;
  }
  std::map<const llvm::GlobalValue*, int> home;
  for (size_t i = 0; i < functions.size(); ++i) {
    home[functions[i]] = part_of_cluster[clusters.Find(static_cast<int>(i))];
  }

  // What each part needs: its functions, the copied functions they call (transitively), and what all of those
  // reference.
  std::vector<std::set<const llvm::GlobalValue*>> needs(static_cast<size_t>(parts));
  for (int p = 0; p < parts; ++p) {
    std::vector<const llvm::Function*> work;
    for (const llvm::Function* fn : functions) {
      if (home[fn] == p) work.push_back(fn);
    }
    std::set<const llvm::Function*> visited(work.begin(), work.end());
    while (!work.empty()) {
      const llvm::Function* fn = work.back();
      work.pop_back();
      for (const llvm::GlobalValue* gv : references[fn]) {
        needs[static_cast<size_t>(p)].insert(gv);
        const auto* callee = llvm::dyn_cast<llvm::Function>(gv);
        if (callee != nullptr && IsCopiedFunction(*callee) && visited.insert(callee).second) work.push_back(callee);
      }
    }
  }
  // Variables live in the lowest part that needs them; small constants in every such part.
  for (llvm::GlobalVariable& var : module.globals()) {
    for (int p = 0; p < parts; ++p) {
      if (needs[static_cast<size_t>(p)].contains(&var)) {
        home[&var] = p;
        break;
      }
    }
  }
  // Symbols one part defines and another uses become external (hidden) for the time being.
  int unnamed = 0;
  auto promote = [&](llvm::GlobalValue& gv) {
    if (!gv.hasLocalLinkage()) return;
    if (!gv.hasName()) gv.setName(fmt::format("xlac.split.{}", unnamed++));
    promoted.push_back({gv.getName().str(), gv.getLinkage()});
    gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
    gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
  };
  for (llvm::Function* fn : functions) {
    for (int p = 0; p < parts; ++p) {
      if (p != home[fn] && needs[static_cast<size_t>(p)].contains(fn)) {
        promote(*fn);
        break;
      }
    }
  }
  for (llvm::GlobalVariable& var : module.globals()) {
    auto found = home.find(&var);
    if (found == home.end() || IsCopiedVariable(var)) continue;
    for (int p = 0; p < parts; ++p) {
      if (p != found->second && needs[static_cast<size_t>(p)].contains(&var)) {
        promote(var);
        break;
      }
    }
  }

  std::vector<ModulePart> result;
  for (int p = 0; p < parts; ++p) {
    const std::set<const llvm::GlobalValue*>& need = needs[static_cast<size_t>(p)];
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(module, map, [&](const llvm::GlobalValue* gv) {
      if (const auto* fn = llvm::dyn_cast<llvm::Function>(gv)) {
        if (IsCopiedFunction(*fn)) return need.contains(fn);
      }
      if (const auto* var = llvm::dyn_cast<llvm::GlobalVariable>(gv); var != nullptr && IsCopiedVariable(*var)) {
        return need.contains(var);
      }
      auto found = home.find(gv);
      return found != home.end() && found->second == p;
    });
    // Declarations nothing in this part uses.
    std::vector<llvm::GlobalValue*> unused;
    for (llvm::GlobalValue& gv : clone->global_values()) {
      if (gv.isDeclaration() && gv.use_empty()) unused.push_back(&gv);
    }
    for (llvm::GlobalValue* gv : unused) gv->eraseFromParent();
    std::string bitcode = WriteBitcode(*clone);
    clone.reset();
    ModulePart part;
    part.context = std::make_unique<llvm::LLVMContext>();
    llvm::Expected<std::unique_ptr<llvm::Module>> parsed =
        llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, module.getName()), *part.context);
    if (!parsed) {
      // Bitcode we just wrote always reads back; keep the error visible if it ever does not.
      llvm::report_fatal_error(parsed.takeError());
    }
    part.module = std::move(*parsed);
    result.push_back(std::move(part));
  }
  return result;
}

absl::Status JoinParts(std::vector<ModulePart> parts, llvm::Module& into, const std::vector<PromotedSymbol>& promoted) {
  llvm::Linker linker(into);
  for (ModulePart& part : parts) {
    std::string bitcode = WriteBitcode(*part.module);
    part.module.reset();
    llvm::Expected<std::unique_ptr<llvm::Module>> parsed =
        llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, into.getName()), into.getContext());
    if (!parsed) return absl::InternalError("cannot read a compiled part: " + llvm::toString(parsed.takeError()));
    if (linker.linkInModule(std::move(*parsed))) return absl::InternalError("cannot join the compiled parts");
  }
  for (const PromotedSymbol& symbol : promoted) {
    llvm::GlobalValue* gv = into.getNamedValue(symbol.name);
    if (gv == nullptr) continue;  // optimized away
    gv->setVisibility(llvm::GlobalValue::DefaultVisibility);
    gv->setLinkage(symbol.linkage);
  }
  return absl::OkStatus();
}

void ParallelForEach(int n, int threads, const std::function<void(int)>& work) {
  if (threads <= 0) threads = xlac_rt_available_cpus();
  threads = std::max(1, std::min(threads, n));
  std::atomic<int> next{0};
  auto run = [&] {
    for (int i = next++; i < n; i = next++) work(i);
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(run);
  run();
  for (std::thread& t : helpers) t.join();
}

}  // namespace xlac::codegen
