// The one source of xlac_unit_test_pch (test/CMakeLists.txt), the target that owns the unit tests' shared
// precompiled header: CMake builds a target's precompiled header only for a target with sources.
