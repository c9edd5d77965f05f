/*
 * sievekv's native addon (binding.gyp: build/Release/sievekv_native.node), loaded by
 * src/native.ts in every thread that reads or writes tables. Each file registers its functions:
 *
 *   mmap.c     map(fd, length), unmap(buffer)   table files mapped for reads (mmapReads)
 *   pread.c    pread(fd, bytes, at, length, position)   NodeFileSystem's readAt
 *   crc32c.c   crc32c(bytes, start, end, init)          CRC-32C with the CPU's instruction
 *   lz4.c      lz4Compress(src, start, end, dst, at)    LZ4 blocks for the table builder
 *
 * Errors throw: a TypeError (code ERR_INVALID_ARG_TYPE) or RangeError (ERR_OUT_OF_RANGE) for a
 * bad argument, a caller's bug; an Error whose `code` is the errno's name ("EIO", libuv's
 * uv_err_name, as node:fs's errors carry) for a failed system call.
 */
#ifndef SIEVEKV_ADDON_H
#define SIEVEKV_ADDON_H

#define NAPI_VERSION 7
#include <node_api.h>
#include <stdbool.h>

#define CHECK(call)                                                     \
  do {                                                                  \
    if ((call) != napi_ok) {                                            \
      napi_throw_error(env, NULL, "sievekv addon: " #call " failed");   \
      return NULL;                                                      \
    }                                                                   \
  } while (0)

/** Throws an Error "what: <strerror>" with `code` the errno's name; returns NULL. */
napi_value throw_errno(napi_env env, const char *what, int err);

/**
 * The call's first `count` arguments into `argv`; false if it has fewer (a TypeError saying
 * `usage` thrown) or they cannot be read (an Error thrown).
 */
bool call_arguments(napi_env env, napi_callback_info info, size_t count, napi_value *argv, const char *usage);

/** The bytes of the Uint8Array (or Buffer) `value`, or NULL after throwing a TypeError. */
unsigned char *uint8_array_bytes(napi_env env, napi_value value, size_t *length, const char *usage);

/** `value` if it is an integer in [0, max], else -1 (no exception pending). */
double whole_number(napi_env env, napi_value value, double max);

/** Throws a TypeError (ERR_INVALID_ARG_TYPE) or a RangeError (ERR_OUT_OF_RANGE) saying `usage`; returns NULL. */
napi_value throw_type_error(napi_env env, const char *usage);
napi_value throw_range_error(napi_env env, const char *usage);

#define MAX_SAFE_INTEGER 9007199254740991.0

/** Registers `fn` on `exports` as `name`; false (with a pending error) if it could not. */
int export_function(napi_env env, napi_value exports, const char *name, napi_callback fn);

int register_mmap(napi_env env, napi_value exports);
int register_pread(napi_env env, napi_value exports);
int register_crc32c(napi_env env, napi_value exports);
int register_lz4(napi_env env, napi_value exports);

#endif
