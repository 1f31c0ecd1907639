# lit configuration for xlac's tool tests. Run through the generated lit.site.cfg.py of a build directory
# (`ninja check-lit` or `ctest -R lit`), which says where the built tools are.
import os

import lit.formats

config.name = "xlac"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".hlo", ".mlir"]
# Inputs/ holds files that RUN lines read; they are not tests themselves.
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))

if not hasattr(config, "xlac_tools_dir"):
    lit_config.fatal("run lit on the build directory's test/lit (it holds lit.site.cfg.py), not on the sources")
config.test_exec_root = os.path.join(config.xlac_obj_root, "test", "lit")

# Tools are found through PATH rather than text substitutions: a substitution for "xla-opt" would also rewrite
# paths such as %s when a test lives in test/lit/xla-opt/.
for tool, directory in [("xla-opt", config.xlac_tools_dir), ("xla-run", config.xlac_tools_dir), ("xlac", config.xlac_tools_dir),
                        ("FileCheck", config.llvm_tools_dir),
                        ("not", config.llvm_tools_dir)]:
    if not os.path.exists(os.path.join(directory, tool)):
        lit_config.fatal(f"{tool} not found in {directory} (build it first: ninja check-lit builds xla-opt)")
config.environment["PATH"] = os.pathsep.join(
    [config.xlac_tools_dir, config.llvm_tools_dir, os.environ.get("PATH", "")])

# XLA FFI handler libraries (test/lit/xla-run/ffi-*): the handler library the suite builds (test/ffi/).
config.substitutions.append(
    ("%ffi_test_lib", os.path.join(config.xlac_obj_root, "test", "ffi", "libxlac_ffi_test_handlers.so")))

# The Winograd transform kernels' vector code (runtime/cpu/winograd.cc) needs AVX-512; without it winograd-convolution
# keeps its HLO form (passes/winograd_convolution.h), so tests of the kernel form need the feature.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if any(line.startswith("flags") and " avx512f" in line for line in cpuinfo):
            config.available_features.add("avx512")
except OSError:
    pass

# Tests that read the shared corpus (../shared/corpus next to the repository) need it to exist.
if os.path.isdir(os.path.join(config.xlac_src_root, "..", "shared", "corpus")):
    config.available_features.add("corpus")

# Tests over several processes (test/lit/mpi/) need mpirun and an xla-run built with MPI (runtime/mpi/). %mpirun
# oversubscribes (more processes than cores: CI has 2), allows root (CI runs as root) and, when a process fails,
# ends the others at once instead of a second after asking them to (odls_base_sigkill_timeout).
import shutil

if shutil.which("mpirun") and os.path.exists(os.path.join(config.xlac_obj_root, "lib", "libxlac_runtime_mpi.a")):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "mpirun --oversubscribe --allow-run-as-root --mca odls_base_sigkill_timeout 0"))
