/*
 * sievekv's memory map of table files: a read-only MAP_SHARED mapping of a whole file, handed to
 * JavaScript as an external ArrayBuffer (no copy), and its explicit release.
 *
 *   map(fd, length) -> ArrayBuffer   the file's first `length` bytes (at most its size), mapped
 *                                    read-only; the kernel is told reads are random (no
 *                                    readahead: a scan reads its windows with pread instead)
 *   unmap(buffer)                    detaches `buffer` (every view of it reads as empty) and
 *                                    unmaps it; again on the same buffer: nothing
 *
 * No GC finalizer: like a file descriptor, a mapping lives until its owner releases it
 * (Table.close), so a table file deleted after a merge gives its blocks back when its table
 * closes, not at some later collection. Errors throw as addon.h says. `unmap` is for buffers
 * `map` made (src/fs/node-fs.ts, its one caller).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "addon.h"

#define MAP_USAGE "map(fd, length): a file descriptor and a length >= 1"
#define UNMAP_USAGE "unmap(buffer): an ArrayBuffer from map()"

static napi_value map_file(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!call_arguments(env, info, 2, argv, MAP_USAGE)) return NULL;
  double fd_number = whole_number(env, argv[0], 2147483647.0);
  double length = whole_number(env, argv[1], MAX_SAFE_INTEGER);
  if (fd_number < 0 || length < 1) return throw_type_error(env, MAP_USAGE);
  int fd = (int)fd_number;
  size_t len = (size_t)length;
  /* Past the file's end a mapping faults (SIGBUS): refuse a length the file does not have. */
  struct stat st;
  if (fstat(fd, &st) != 0) return throw_errno(env, "fstat", errno);
  if ((off_t)len > st.st_size) {
    return throw_range_error(env, "map(fd, length): length is past the file's end");
  }
  void *addr = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) return throw_errno(env, "mmap", errno);
  (void)madvise(addr, len, MADV_RANDOM);
  napi_value buffer;
  if (napi_create_external_arraybuffer(env, addr, len, NULL, NULL, &buffer) != napi_ok) {
    munmap(addr, len);
    napi_throw_error(env, NULL, "sievekv addon: napi_create_external_arraybuffer failed");
    return NULL;
  }
  return buffer;
}

static napi_value unmap_file(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!call_arguments(env, info, 1, argv, UNMAP_USAGE)) return NULL;
  bool is_buffer = false;
  if (napi_is_arraybuffer(env, argv[0], &is_buffer) != napi_ok || !is_buffer) {
    return throw_type_error(env, UNMAP_USAGE);
  }
  void *addr = NULL;
  size_t len = 0;
  CHECK(napi_get_arraybuffer_info(env, argv[0], &addr, &len));
  if (addr == NULL || len == 0) return NULL; /* already released */
  CHECK(napi_detach_arraybuffer(env, argv[0]));
  if (munmap(addr, len) != 0) return throw_errno(env, "munmap", errno);
  return NULL;
}

int register_mmap(napi_env env, napi_value exports) {
  return export_function(env, exports, "map", map_file) && export_function(env, exports, "unmap", unmap_file);
}
