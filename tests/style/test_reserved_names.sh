#!/bin/sh
# C11 7.1.3 reserves identifiers that begin with "__" (or "_" and a capital)
# for the compiler and libc. The project's internal names use the libuv form
# component__name instead. Checks:
#   1. no symbol defined in the built libraries begins with "__" except the
#      toolchain's own (crt, C++ runtime, libc);
#   2. no identifier in src/ or include/ begins with "__" and a lower-case
#      letter except compiler builtins, attributes and keywords.
# Usage: test_reserved_names.sh SOURCE_DIR BUILD_DIR
set -eu
SRC=$1 BUILD=$2
fail=0

# Names the toolchain defines in every shared object or static archive
# (__pthread_atfork comes from libc_nonshared.a; in a clang Debug build with
# UBSan, as .ci/run's ASan pass makes: __unnamed_N type descriptors,
# __const.FUNCTION.VAR initializers and cpuid.h's __get_cpuid out of line).
toolchain='^__(FRAME_END__|pthread_atfork|cxa_|do_global_|dso_handle|frame_dummy|gmon_start|TMC_END|bss_start|data_start|end__|GNU_EH|JCR_|libc_csu|x86\.get_pc_thunk|asan|ubsan|tsan|lsan|sanitizer|interceptor|odr_asan|start_|stop_|init_array|fini_array|unnamed_[0-9]|const\.|get_cpuid)'
for lib in "$BUILD"/libfxtrace.a "$BUILD"/libfxtrace.so "$BUILD"/libtrace-reader.a "$BUILD"/libtrace-reader.so; do
  [ -e "$lib" ] || { echo "FAIL: $lib was not built"; exit 1; }
  # Defined symbols only (undefined ones belong to other libraries).
  bad=$(nm --defined-only "$lib" 2>/dev/null | awk 'NF >= 3 {print $3}' | grep -E '^__' | grep -vE "$toolchain" | sort -u) \
    || [ $? -eq 1 ]
  if [ -n "$bad" ]; then
    echo "FAIL: $lib defines reserved names:"; echo "$bad"; fail=1
  fi
done

# Compiler builtins, attributes and keywords; libc's __libc_* (the
# allocator interposition test); the kernel's TRACE_EVENT element macros,
# which <trace/tracepoint.h> must spell as the kernel does, and tracefs's
# __data_loc (format text); Chrome JSON's "__metadata" category (a string
# `trace convert` writes, docs/convert-json.md).
allowed='__(attribute__|metadata|atomic_[a-z_]+|builtin_[a-z0-9_]+|cplusplus|typeof__|asm__|has_include|has_feature|has_attribute|thread|int128|extension__|x86_64__|aarch64__|rdtsc|get_cpuid|restrict|inline__|volatile__|sync_[a-z_]+|clang__)$'
tp_api='__(data_loc|field|field_struct|array|dynamic_array|string|assign_str|get_str|get_dynamic_array|get_dynamic_array_len|entry|print_flags|print_symbolic|print_hex|print_array|get_bitmask|bitmask|assign_bitmask|field_ext|string_len|assign_str_len|print_hex_str|perf_count|perf_addr|perf_task)$'
found=$(grep -rhoE '\b__[a-z][A-Za-z0-9_]*' "$SRC/src" "$SRC/include" | sort -u | grep -vE "$allowed" | grep -vE "$tp_api") \
  || [ $? -eq 1 ]
if [ -n "$found" ]; then
  echo "FAIL: identifiers beginning with __ in src/ or include/:"; echo "$found"; fail=1
fi
[ $fail -eq 0 ] && echo "ok: no project identifier begins with __"
exit $fail
