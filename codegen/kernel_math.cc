#include "codegen/kernel_math.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/fast_math.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"

namespace xlac::codegen {
namespace {

using Unary = llvm::Value* (*)(IrBuilder&, llvm::Value*);

// The libm names (f32 with the f suffix, f64 without) and intrinsic stems of each approximated function.
const std::map<std::string, Unary>& UnaryByName() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, Unary>();
    const std::vector<std::pair<std::string, Unary>> functions = {
        {"exp", EmitFastExp},     {"expm1", EmitFastExpm1}, {"log", EmitFastLog},
        {"log1p", EmitFastLog1p}, {"tanh", EmitFastTanh},   {"erf", EmitFastErf},
        {"sin", EmitFastSin},     {"cos", EmitFastCos},     {"cbrt", EmitFastCbrt},
    };
    for (const auto& [name, emit] : functions) {
      (*t)[name] = emit;                     // f64 libm
      (*t)[name + "f"] = emit;               // f32 libm
      (*t)["llvm." + name + ".f32"] = emit;  // intrinsics (Clang emits them without -fmath-errno)
      (*t)["llvm." + name + ".f64"] = emit;
    }
    return t;
  }();
  return *table;
}

}  // namespace

int ApproximateKernelMath(llvm::Function& fn) {
  std::vector<llvm::CallInst*> calls;
  for (llvm::BasicBlock& block : fn) {
    for (llvm::Instruction& inst : block) {
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst); call != nullptr && call->getCalledFunction()) {
        calls.push_back(call);
      }
    }
  }
  int replaced = 0;
  for (llvm::CallInst* call : calls) {
    const std::string name = call->getCalledFunction()->getName().str();
    llvm::Type* type = call->getType();
    if (!type->isFloatTy() && !type->isDoubleTy()) continue;
    IrBuilder b(call);
    llvm::Value* value = nullptr;
    if (auto it = UnaryByName().find(name);
        it != UnaryByName().end() && call->arg_size() == 1 && call->getArgOperand(0)->getType() == type) {
      value = it->second(b, call->getArgOperand(0));
    } else if ((name == "powf" || name == "llvm.pow.f32") && call->arg_size() == 2) {
      value = EmitFastPow(b, call->getArgOperand(0), call->getArgOperand(1));  // f32 only
    }
    if (value == nullptr) continue;
    call->replaceAllUsesWith(value);
    call->eraseFromParent();
    ++replaced;
  }
  return replaced;
}

}  // namespace xlac::codegen
