/*
 * LZ4 block compression for the table builder (src/sstable/compression.ts), in place of the
 * WebAssembly compressor (src/sstable/lz4-wasm-encoder.ts) where the addon is built: the same
 * algorithm, so the same bytes, without copying each block into the module's memory and out.
 *
 *   lz4Compress(src, start, end, dst, at) -> number
 *
 * Compresses `src[start, end)` (at most 65,536 bytes) as a raw LZ4 block into `dst` from `at`
 * and returns the block's length. `dst[at, dst.length)` must hold LZ4's bound for the input,
 * n + n / 255 + 16 bytes, and not overlap the input (else a RangeError, before anything is
 * written).
 *
 * The algorithm is LZ4's fast one (lz4.c's LZ4_compress_generic for inputs under 64 KiB,
 * acceleration 1), as lz4-wasm-encoder.ts lays it out: hash the 4 bytes at each position
 * (multiplicative, 12 bits) into a table of 16-bit positions, take the position found there as
 * a candidate, and on a 4-byte match extend it backwards over pending literals and forwards;
 * emit the literals and the match as one sequence and enter the position two bytes before the
 * match's end. After 64 misses in a row the search steps 2 bytes, then 3... The format's end
 * rules hold: no match starts in the last 12 bytes or reaches into the last 5.
 */
#include <stdint.h>
#include <string.h>

#include "addon.h"

#define USAGE "lz4Compress(src, start, end, dst, at): a Uint8Array and a range of at most 65536 bytes inside it, a Uint8Array with room for the block from `at`, apart from the range"

#define MAX_INPUT 65536
#define HASH_PRIME 2654435761u
#define MF_LIMIT 12
#define LAST_LITERALS 5

/* The 4 bytes at `p` as a little-endian number, whatever the host's order (the forward loop counts
 * matching bytes from the low end); compilers make it one load on little-endian hosts. */
static inline uint32_t load32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t slot_of(uint32_t four) {
  return (four * HASH_PRIME) >> 20;
}

/* A length's extra bytes (after the token's 15): 255 while at least 255 is left, then the rest. */
static inline unsigned char *put_length(unsigned char *op, uint32_t rest) {
  while (rest >= 255) {
    *op++ = 255;
    rest -= 255;
  }
  *op++ = (unsigned char)rest;
  return op;
}

/* The literals src[anchor, anchor + lit) behind their token at *token_at; returns the end. */
static inline unsigned char *put_literals(unsigned char *op, unsigned char **token_at, uint32_t *token,
                                          const unsigned char *from, uint32_t lit) {
  *token_at = op++;
  if (lit >= 15) {
    *token = 0xf0;
    op = put_length(op, lit - 15);
  } else {
    *token = lit << 4;
  }
  memcpy(op, from, lit);
  return op + lit;
}

static size_t compress_block(const unsigned char *src, uint32_t n, unsigned char *dst) {
  uint16_t table[4096];
  unsigned char *op = dst;
  unsigned char *token_at;
  uint32_t token;
  uint32_t anchor = 0;
  if (n >= MF_LIMIT + 1) {
    /* Every slot at position 0: a slot is only ever a candidate, checked before use. */
    memset(table, 0, sizeof table);
    const uint32_t last_match_start = n - MF_LIMIT;
    const uint32_t match_end_limit = n - LAST_LITERALS;
    uint32_t ip = 1;
    for (;;) {
      uint32_t step = 64;
      uint32_t ref;
      for (;;) {
        if (ip > last_match_start) goto last;
        uint32_t four = load32(src + ip);
        uint32_t slot = slot_of(four);
        ref = table[slot];
        table[slot] = (uint16_t)ip;
        if (load32(src + ref) == four) break;
        ip += step >> 6;
        step++;
      }
      /* Backwards over pending literals that match too. */
      while (ip > anchor && ref > 0 && src[ip - 1] == src[ref - 1]) {
        ip--;
        ref--;
      }
      /* Forwards, 4 bytes at a time while 4 more fit before match_end_limit, then byte by byte. */
      uint32_t len = 4;
      for (;;) {
        if (ip + len + 4 > match_end_limit) {
          while (ip + len < match_end_limit && src[ip + len] == src[ref + len]) len++;
          break;
        }
        uint32_t diff = load32(src + ip + len) ^ load32(src + ref + len);
        if (diff != 0) {
          len += (uint32_t)__builtin_ctz(diff) >> 3;
          break;
        }
        len += 4;
      }
      op = put_literals(op, &token_at, &token, src + anchor, ip - anchor);
      uint32_t offset = ip - ref;
      op[0] = (unsigned char)offset;
      op[1] = (unsigned char)(offset >> 8);
      op += 2;
      uint32_t rest = len - 4;
      if (rest >= 15) {
        token |= 15;
        op = put_length(op, rest - 15);
      } else {
        token |= rest;
      }
      *token_at = (unsigned char)token;
      ip += len;
      anchor = ip;
      /* The position two back from the match's end goes in the table too (as lz4.c does). */
      table[slot_of(load32(src + ip - 2))] = (uint16_t)(ip - 2);
    }
  }
last:
  op = put_literals(op, &token_at, &token, src + anchor, n - anchor);
  *token_at = (unsigned char)token;
  return (size_t)(op - dst);
}

static napi_value lz4_compress(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!call_arguments(env, info, 5, argv, USAGE)) return NULL;
  size_t src_size = 0;
  size_t dst_size = 0;
  unsigned char *src = uint8_array_bytes(env, argv[0], &src_size, USAGE);
  if (src == NULL) return NULL;
  unsigned char *dst = uint8_array_bytes(env, argv[3], &dst_size, USAGE);
  if (dst == NULL) return NULL;
  double start = whole_number(env, argv[1], MAX_SAFE_INTEGER);
  double end = whole_number(env, argv[2], MAX_SAFE_INTEGER);
  double at = whole_number(env, argv[4], MAX_SAFE_INTEGER);
  if (start < 0 || end < 0 || at < 0) return throw_type_error(env, USAGE);
  if (end < start || end > (double)src_size || end - start > MAX_INPUT) return throw_range_error(env, USAGE);
  uint32_t n = (uint32_t)(end - start);
  size_t bound = (size_t)n + n / 255 + 16;
  if (at > (double)dst_size || (double)dst_size - at < (double)bound) return throw_range_error(env, USAGE);
  const unsigned char *from = src + (size_t)start;
  unsigned char *into = dst + (size_t)at;
  /* Views of one ArrayBuffer may overlap: the block would overwrite input it has yet to read. */
  if (n > 0 && from < into + bound && into < from + n) return throw_range_error(env, USAGE);
  size_t written = compress_block(from, n, into);
  napi_value result;
  CHECK(napi_create_uint32(env, (uint32_t)written, &result));
  return result;
}

int register_lz4(napi_env env, napi_value exports) {
  return export_function(env, exports, "lz4Compress", lz4_compress);
}
