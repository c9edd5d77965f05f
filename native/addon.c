/* The addon's module: the helpers every file shares, and the registration (addon.h). */
#include "addon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The errno names node:fs reports for the failures a read or a map can meet; others "E<n>". */
static const char *errno_name(int err, char *scratch, size_t size) {
  switch (err) {
    case EIO: return "EIO";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EFAULT: return "EFAULT";
    case EISDIR: return "EISDIR";
    case ENXIO: return "ENXIO";
    case EOVERFLOW: return "EOVERFLOW";
    case ENOMEM: return "ENOMEM";
    case EAGAIN: return "EAGAIN";
    case EACCES: return "EACCES";
    case ENODEV: return "ENODEV";
    case EPERM: return "EPERM";
    case ENFILE: return "ENFILE";
    case EMFILE: return "EMFILE";
    default: snprintf(scratch, size, "E%d", err); return scratch;
  }
}

napi_value throw_errno(napi_env env, const char *what, int err) {
  char message[160];
  char scratch[16];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_throw_error(env, errno_name(err, scratch, sizeof scratch), message);
  return NULL;
}

unsigned char *uint8_array_bytes(napi_env env, napi_value value, size_t *length, const char *usage) {
  bool is_typed_array = false;
  napi_typedarray_type type;
  void *data = NULL;
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array ||
      napi_get_typedarray_info(env, value, &type, length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  /* An empty or detached array has no bytes; a non-NULL pointer tells it from a failure. */
  return data != NULL ? (unsigned char *)data : (unsigned char *)"";
}

int export_function(napi_env env, napi_value exports, const char *name, napi_callback fn) {
  napi_value value;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &value) == napi_ok &&
         napi_set_named_property(env, exports, name, value) == napi_ok;
}

NAPI_MODULE_INIT() {
  if (!register_mmap(env, exports) || !register_pread(env, exports) || !register_crc32c(env, exports)) return NULL;
  return exports;
}
