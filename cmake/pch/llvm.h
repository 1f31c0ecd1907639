// Precompiled for the libraries that emit or compile LLVM IR (codegen/, api/, compiler/): common.h plus the LLVM
// headers most of their sources include, which are the heaviest to parse.
#pragma once

#include "cmake/pch/common.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
