// XLA FFI handler libraries: the exact diagnostics. Inputs/ffi-*.mlir are the modules.

// A library that does not exist, or is not a shared library: the loader's reason, before the module is read.
// RUN: not xla-run %S/Inputs/ffi-fail.mlir --custom-call-lib=%t.nonexistent.so 2>&1 | FileCheck %s --check-prefix=NOFILE -DPATH=%t.nonexistent.so
// NOFILE: xla-run: error: cannot load custom-call library '[[PATH]]': [[PATH]]: cannot open shared object file: No such file or directory
// RUN: not xla-run %S/Inputs/ffi-fail.mlir --custom-call-lib=%s 2>&1 | FileCheck %s --check-prefix=NOTLIB -DPATH=%s
// NOTLIB: xla-run: error: cannot load custom-call library '[[PATH]]': [[PATH]]: {{invalid ELF header|file too short}}
// RUN: not xlac %S/Inputs/ffi-fail.mlir --custom-call-lib=%t.nonexistent.so -o %t.o 2>&1 | FileCheck %s --check-prefix=XLAC-NOFILE
// XLAC-NOFILE: xlac: error: cannot load custom-call library '{{.*}}.nonexistent.so': {{.*}}: cannot open shared object file: No such file or directory
// A mapping to a symbol the library does not export.
// RUN: not xla-run %S/Inputs/ffi-fail.mlir --custom-call-lib=%ffi_test_lib:tt.sparse_matmul=sparse_matmul 2>&1 | FileCheck %s --check-prefix=NOSYMBOL
// NOSYMBOL: xla-run: error: custom-call library '{{.*}}libxlac_ffi_test_handlers.so' has no symbol 'sparse_matmul' (mapped from target 'tt.sparse_matmul')

// A typed-FFI call whose target no library provides: an error at the call, with the symbols looked for.
// RUN: not xla-run %S/Inputs/ffi-missing.mlir --custom-call-lib=%ffi_test_lib 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not xlac %S/Inputs/ffi-missing.mlir --custom-call-lib=%ffi_test_lib -o %t.o 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: ffi-missing.mlir:4:5: error: no XLA FFI handler for custom call target 'tt.sparse_matmul' (looked for 'tt_sparse_matmul' in {{.*}}libxlac_ffi_test_handlers.so)
// MISSING-NEXT: %m = stablehlo.custom_call @tt.sparse_matmul(%s) {api_version = 4 : i32} : (tensor<4xf32>) -> tensor<4xf32>

// The handler's error: its message, the custom call and its location, from both backends.
// RUN: not xla-run %S/Inputs/ffi-fail.mlir --custom-call-lib=%ffi_test_lib 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: not xla-run %S/Inputs/ffi-fail.mlir --custom-call-lib=%ffi_test_lib --backend=interpreter 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: error: {{.*}}custom call '{{[^']+}}' (target 'xlac_test_fail') at {{.*}}ffi-fail.mlir:4:5 failed: the operand is not a permutation (operand rank 2)

// A backend_config the FFI cannot pass (f16 attributes).
// RUN: not xla-run %S/Inputs/ffi-bad-config.mlir --custom-call-lib=%ffi_test_lib 2>&1 | FileCheck %s --check-prefix=CONFIG
// CONFIG: error: {{.*}}custom call '{{[^']+}}' (target 'xlac_test_scale') at {{.*}}ffi-bad-config.mlir:3:5 has an invalid backend_config: backend_config: unsupported attribute type 'f16' (FFI attributes are i1, i8..i64, ui8..ui64, f32 or f64) at offset 13 of '{alpha = 2.0 : f16}'
