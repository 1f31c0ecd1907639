// Precompiled once for all unit tests (they reuse one precompiled header; see test/CMakeLists.txt): common.h plus
// GoogleTest and the parser, verifier and interpreter headers most tests include.
#pragma once

#include "cmake/pch/common.h"
#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"
