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

static napi_value map_file(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  double fd_number;
  double length;
  if (argc < 2 || napi_get_value_double(env, argv[0], &fd_number) != napi_ok || napi_get_value_double(env, argv[1], &length) != napi_ok ||
      !(fd_number >= 0) || fd_number > 2147483647.0 || (double)(int)fd_number != fd_number ||
      !(length >= 1) || length > 9007199254740991.0 || (double)(size_t)length != length) {
    return throw_type_error(env, "map(fd, length): a file descriptor and a length >= 1");
  }
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
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool is_buffer = false;
  if (argc < 1 || napi_is_arraybuffer(env, argv[0], &is_buffer) != napi_ok || !is_buffer) {
    return throw_type_error(env, "unmap(buffer): an ArrayBuffer from map()");
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
