#!/usr/bin/env bash
# Builds the package under a sanitizer and runs tests/stress/stress.py against it, the sanitizer's
# runtime preloaded into an uninstrumented Python (the README's "Reliability" section).
#
#   tests/stress/run_sanitized.sh asan [stress.py arguments...]   # ASan + UBSan (UB fatal)
#   tests/stress/run_sanitized.sh tsan [stress.py arguments...]   # ThreadSanitizer
#
# The sanitized package goes to build/py-<sanitizer>/site (its CMake build to .../build, so a second
# run is incremental) and shadows any installed parallel_pool through PYTHONPATH; nothing installed
# is touched. It has the engine, the binding and the classic-control and tutorial families (the
# ones the script steps), not MuJoCo or Atari, whose libraries (libmujoco, ALE) are not instrumented,
# nor xla() (whose headers come from a download; the script does not use it).
# PYTHON (default: python) must have numpy, gymnasium and dm-env, and the build requirements
# (scikit-build-core, pybind11): the build does not download them. CXX (default g++) names the
# compiler whose sanitizer runtime is preloaded; it must be the one CMake builds with.
set -euo pipefail
cd "$(dirname "$0")/../.."

sanitizer=${1:?usage: $0 asan|tsan [stress.py arguments...]}
shift
case "$sanitizer" in
  asan)
    # The asan preset's flags and optimization (CMakePresets.json).
    flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS"
    runtime=libasan.so
    # detect_leaks=0: CPython does not free everything at exit, and LeakSanitizer's suppressions
    # match any frame of a stack, so hiding the interpreter's leaks would hide ours (every call comes
    # from it). The engine's leaks are LeakSanitizer's in the C++ tests (asan preset).
    # PYTHONMALLOC=malloc: Python objects come from malloc, so ASan also sees the binding misuse one.
    export ASAN_OPTIONS="detect_leaks=0:detect_stack_use_after_return=1:check_initialization_order=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    export PYTHONMALLOC=malloc
    ;;
  tsan)
    flags="-fsanitize=thread -fno-omit-frame-pointer"
    runtime=libtsan.so
    # tsan.supp: one glibc report, each justified there.
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/stress/tsan.supp"
    ;;
  *)
    echo "usage: $0 asan|tsan [stress.py arguments...]" >&2
    exit 2
    ;;
esac

python=${PYTHON:-python}
site="build/py-$sanitizer/site"
# The preload below must not apply to pip and the compiler.
env -u LD_PRELOAD "$python" -m pip install --quiet --no-deps --no-build-isolation --upgrade --target "$site" \
  -C "build-dir=build/py-$sanitizer/build" -C cmake.build-type=RelWithDebInfo \
  -C "cmake.define.CMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -C cmake.define.PP_WITH_MUJOCO=OFF -C cmake.define.PP_WITH_ATARI=OFF -C cmake.define.PP_WITH_XLA=OFF \
  -C "cmake.define.CMAKE_CXX_FLAGS=$flags" .

# libstdc++ right after the runtime: Python does not link it, and the runtime's interceptors (of
# __cxa_throw, for one) must find it when they start, not when the first extension loads it.
preload=""
for lib in "$runtime" libstdc++.so; do
  path=$("${CXX:-g++}" -print-file-name="$lib")
  if [[ "$path" != /* ]]; then
    echo "$lib not found by ${CXX:-g++} -print-file-name" >&2
    exit 2
  fi
  preload="${preload:+$preload }$(realpath "$path")"
done
echo "stress.py under $sanitizer: PYTHONPATH=$site LD_PRELOAD=$preload"
PYTHONPATH="$site" LD_PRELOAD="$preload" "$python" tests/stress/stress.py "$@"
