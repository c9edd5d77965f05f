/* The addon's module: the helpers every file shares, and the registration (addon.h). */
#include "addon.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

napi_value throw_errno(napi_env env, const char *what, int err) {
  char message[160];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_throw_error(env, uv_err_name(-err), message);
  return NULL;
}

napi_value throw_type_error(napi_env env, const char *usage) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", usage);
  return NULL;
}

napi_value throw_range_error(napi_env env, const char *usage) {
  napi_throw_range_error(env, "ERR_OUT_OF_RANGE", usage);
  return NULL;
}

double whole_number(napi_env env, napi_value value, double max) {
  double number;
  if (napi_get_value_double(env, value, &number) != napi_ok || !(number >= 0) || number > max || number != (double)(int64_t)number) return -1;
  return number;
}

bool call_arguments(napi_env env, napi_callback_info info, size_t count, napi_value *argv, const char *usage) {
  size_t argc = count;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) {
    napi_throw_error(env, NULL, "sievekv addon: napi_get_cb_info failed");
    return false;
  }
  if (argc < count) {
    throw_type_error(env, usage);
    return false;
  }
  return true;
}

unsigned char *uint8_array_bytes(napi_env env, napi_value value, size_t *length, const char *usage) {
  bool is_typed_array = false;
  napi_typedarray_type type;
  void *data = NULL;
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array ||
      napi_get_typedarray_info(env, value, &type, length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) {
    throw_type_error(env, usage);
    return NULL;
  }
  /* An empty or detached array has no bytes; a non-NULL pointer tells it from a failure. */
  static unsigned char no_bytes[1];
  return data != NULL ? (unsigned char *)data : no_bytes;
}

int export_function(napi_env env, napi_value exports, const char *name, napi_callback fn) {
  napi_value value;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &value) == napi_ok &&
         napi_set_named_property(env, exports, name, value) == napi_ok;
}

NAPI_MODULE_INIT() {
  if (!register_mmap(env, exports) || !register_pread(env, exports) || !register_crc32c(env, exports) ||
      !register_lz4(env, exports))
    return NULL;
  return exports;
}
