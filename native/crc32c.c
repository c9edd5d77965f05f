/*
 * CRC-32C with the CPU's crc32 instruction, for src/format/crc32c.ts: a 4 KiB block's CRC took
 * 0.22 µs here, against 0.85 through @node-rs/crc32, and a 140-byte WAL record's 85 ns against
 * 123 in JavaScript (BENCHMARKS.md, session 33). x86-64 with SSE 4.2 only, for now: an arm64
 * build has no `crc32c` (its CPUs have the instruction too; not written).
 *
 *   crc32c(bytes, start, end, init) -> number   the CRC-32C of bytes[start, end) extending `init`
 *                                               (a finished CRC, 0 for a fresh one), unsigned
 *
 * Exported only where the CPU has the instruction (checked once at load); elsewhere the module
 * lacks `crc32c` and crc32c.ts keeps its own. Gives what crc32c.ts's loop gives for every input
 * (test/native/addon.test.ts, at the lengths where the streams join). `start` and `end` are
 * integers with `start <= end <= bytes.length`, `init` an integer below 2^32: else a TypeError
 * or RangeError.
 *
 * Three streams in step: the instruction takes 3 cycles and the CPU issues one a cycle, so one
 * stream would use a third of it. A run of 3 × STRIPE bytes goes to three CRC registers (the
 * second and third from 0) and then joins them: the register after STRIPE more zero bytes,
 * which is linear in the register (the shift tables, made once), xor the next stream's. Runs of
 * LONG_STRIPE, then SHORT_STRIPE, then 8 bytes and single bytes.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "addon.h"

#define USAGE "crc32c(bytes, start, end, init): a Uint8Array, 0 <= start <= end <= its length, an unsigned 32-bit CRC"

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>

#define LONG_STRIPE 1024
#define SHORT_STRIPE 128

/* SHIFT[k][b]: the register after `stripe` zero bytes from the register b << 8k. */
static uint32_t long_shift[4][256];
static uint32_t short_shift[4][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static uint32_t after_zeros(uint32_t reg, size_t bytes) {
  uint64_t r = reg;
  for (size_t i = 0; i < bytes; i += 8) r = _mm_crc32_u64(r, 0);
  return (uint32_t)r;
}

static void make_tables(void) {
  for (int k = 0; k < 4; k++) {
    for (uint32_t b = 0; b < 256; b++) {
      long_shift[k][b] = after_zeros(b << (8 * k), LONG_STRIPE);
      short_shift[k][b] = after_zeros(b << (8 * k), SHORT_STRIPE);
    }
  }
}

static inline uint32_t shift(const uint32_t table[4][256], uint32_t reg) {
  return table[0][reg & 0xff] ^ table[1][(reg >> 8) & 0xff] ^ table[2][(reg >> 16) & 0xff] ^ table[3][reg >> 24];
}

static inline uint64_t load64(const unsigned char *p) {
  uint64_t word;
  memcpy(&word, p, 8);
  return word;
}

#define THREE_STREAMS(stripe, table)                                                     \
  while (n >= 3 * (stripe)) {                                                            \
    uint64_t r1 = 0, r2 = 0;                                                             \
    for (size_t i = 0; i < (stripe); i += 8) {                                           \
      r0 = _mm_crc32_u64(r0, load64(p + i));                                             \
      r1 = _mm_crc32_u64(r1, load64(p + (stripe) + i));                                  \
      r2 = _mm_crc32_u64(r2, load64(p + 2 * (stripe) + i));                              \
    }                                                                                    \
    r0 = shift(table, (uint32_t)r0) ^ r1;                                                \
    r0 = shift(table, (uint32_t)r0) ^ r2;                                                \
    p += 3 * (stripe);                                                                   \
    n -= 3 * (stripe);                                                                   \
  }

__attribute__((target("sse4.2"))) static uint32_t crc32c_hardware(uint32_t init, const unsigned char *p, size_t n) {
  uint64_t r0 = ~init;
  THREE_STREAMS(LONG_STRIPE, long_shift)
  THREE_STREAMS(SHORT_STRIPE, short_shift)
  for (; n >= 8; p += 8, n -= 8) r0 = _mm_crc32_u64(r0, load64(p));
  for (; n > 0; p++, n--) r0 = _mm_crc32_u8((uint32_t)r0, *p);
  return ~(uint32_t)r0;
}

static int has_instruction(void) {
  unsigned int eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_2) != 0;
}

static napi_value crc32c(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!call_arguments(env, info, 4, argv, USAGE)) return NULL;
  size_t size = 0;
  const unsigned char *bytes = uint8_array_bytes(env, argv[0], &size, USAGE);
  if (bytes == NULL) return NULL;
  double start = whole_number(env, argv[1], MAX_SAFE_INTEGER);
  double end = whole_number(env, argv[2], MAX_SAFE_INTEGER);
  double init = whole_number(env, argv[3], 4294967295.0);
  if (start < 0 || end < 0 || init < 0) return throw_type_error(env, USAGE);
  if (start > end || end > (double)size) return throw_range_error(env, USAGE);
  napi_value result;
  CHECK(napi_create_uint32(env, crc32c_hardware((uint32_t)init, bytes + (size_t)start, (size_t)(end - start)), &result));
  return result;
}

int register_crc32c(napi_env env, napi_value exports) {
  if (!has_instruction()) return 1;
  if (pthread_once(&tables_once, make_tables) != 0) return 1;
  return export_function(env, exports, "crc32c", crc32c);
}

#else

int register_crc32c(napi_env env, napi_value exports) {
  (void)env;
  (void)exports;
  return 1;
}

#endif
