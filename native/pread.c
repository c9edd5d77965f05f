/*
 * NodeFileSystem's readAt (src/fs/node-fs.ts): pread(2) into a Uint8Array, for a table's block
 * reads, where node:fs's readSync spent ~0.2 µs a call of its own on argument checks around the
 * same system call (BENCHMARKS.md, session 33).
 *
 *   pread(fd, bytes, at, length, position) -> number
 *
 * Reads `length` bytes of the file at `position` into `bytes[at, at + length)`, again after a
 * short read or EINTR, until all are in or the file ends: returns how many it read (fewer than
 * `length` only at the end of the file). A failed read throws (addon.h). The numbers must be
 * whole (else a TypeError), the range must lie inside `bytes` and `position + length` below 2^53
 * (else a RangeError): checked before any read.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include "addon.h"

#define USAGE "pread(fd, bytes, at, length, position): a file descriptor, a Uint8Array and a range inside it, a file position"

static napi_value pread_into(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!call_arguments(env, info, 5, argv, USAGE)) return NULL;
  size_t size = 0;
  unsigned char *bytes = uint8_array_bytes(env, argv[1], &size, USAGE);
  if (bytes == NULL) return NULL;
  double fd = whole_number(env, argv[0], 2147483647.0);
  double at = whole_number(env, argv[2], MAX_SAFE_INTEGER);
  double length = whole_number(env, argv[3], MAX_SAFE_INTEGER);
  double position = whole_number(env, argv[4], MAX_SAFE_INTEGER);
  if (fd < 0 || at < 0 || length < 0 || position < 0) return throw_type_error(env, USAGE);
  if (at + length > (double)size || position + length > MAX_SAFE_INTEGER) return throw_range_error(env, USAGE);
  unsigned char *into = bytes + (size_t)at;
  size_t wanted = (size_t)length;
  off_t from = (off_t)position;
  size_t done = 0;
  while (done < wanted) {
    ssize_t n = pread((int)fd, into + done, wanted - done, from + (off_t)done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return throw_errno(env, "pread", errno);
    }
    if (n == 0) break;
    done += (size_t)n;
  }
  napi_value result;
  CHECK(napi_create_double(env, (double)done, &result));
  return result;
}

int register_pread(napi_env env, napi_value exports) {
  return export_function(env, exports, "pread", pread_into);
}
