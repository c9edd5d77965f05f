/**
 * What the hand-assembled WebAssembly modules (lz4-wasm.ts, lz4-wasm-encoder.ts) are written
 * with: the opcodes their listings use, LEB128 numbers, and a module of one memory and one
 * function. No binary is shipped and no toolchain is needed.
 *
 * Opcodes and encodings: WebAssembly core specification, sections 5.2 (values) and 5.4
 * (instructions); the module layout, section 5.5.
 */

// Types.
export const I32 = 0x7f;
export const VOID = 0x40;

// Control.
export const BLOCK = 0x02;
export const LOOP = 0x03;
export const IF = 0x04;
export const ELSE = 0x05;
export const END = 0x0b;
export const BR = 0x0c;
export const BR_IF = 0x0d;
export const RETURN = 0x0f;

// Locals.
export const LOCAL_GET = 0x20;
export const LOCAL_SET = 0x21;
export const LOCAL_TEE = 0x22;

// Memory: alignment hint 2^0 and offset 0 (unaligned accesses are legal, only slower in theory).
export const I32_LOAD = [0x28, 0, 0];
export const I64_LOAD = [0x29, 0, 0];
export const I32_LOAD8_U = [0x2d, 0, 0];
export const I32_LOAD16_U = [0x2f, 0, 0];
export const I32_STORE = [0x36, 0, 0];
export const I64_STORE = [0x37, 0, 0];
export const I32_STORE8 = [0x3a, 0, 0];
export const I32_STORE16 = [0x3b, 0, 0];

// Numbers.
export const I32_CONST = 0x41;
export const I64_CONST = 0x42;
export const I32_EQZ = 0x45;
export const I32_EQ = 0x46;
export const I32_NE = 0x47;
export const I32_LT_S = 0x48;
export const I32_LT_U = 0x49;
export const I32_GT_U = 0x4b;
export const I32_LE_U = 0x4d;
export const I32_GE_S = 0x4e;
export const I32_GE_U = 0x4f;
export const I32_ADD = 0x6a;
export const I32_SUB = 0x6b;
export const I32_MUL = 0x6c;
export const I32_CTZ = 0x68;
export const I32_AND = 0x71;
export const I32_OR = 0x72;
export const I32_XOR = 0x73;
export const I32_SHL = 0x74;
export const I32_SHR_U = 0x76;
export const I64_LT_U = 0x54;
export const I64_GT_U = 0x56;
/** `select`: of two values and a condition, the first if the condition is not 0. */
export const SELECT = 0x1b;

/** The size of a WebAssembly memory page. */
export const PAGE = 64 * 1024;

/**
 * Bytes a region leaves after itself for `copyWords`, which reads and writes 8 bytes at a time:
 * up to 8 past the source's and the destination's ends (8 for an empty range, else up to 7).
 */
export const COPY_SLACK = 16;

export const get = (local: number): number[] => [LOCAL_GET, local];
export const set = (local: number): number[] => [LOCAL_SET, local];
export const constant = (n: number): number[] => [I32_CONST, ...sleb128(n)];
export const addTo = (local: number, n: number): number[] => [...get(local), ...constant(n), I32_ADD, ...set(local)];
/** Pushes `a - b` of two locals. */
export const difference = (a: number, b: number): number[] => [...get(a), ...get(b), I32_SUB];

/**
 * Copies [from, from + (end - to)) to [to, end), 8 bytes at a time (`to`, `from` and `end` are
 * locals; `to` and `from` advance, `to` ends up to 8 past `end`: see COPY_SLACK). At least one
 * word is copied, even for an empty range. The source must not overlap the destination less than
 * 8 bytes behind it.
 */
export function copyWords(to: number, from: number, end: number): number[] {
  return [
    LOOP, VOID,
    ...get(to), ...get(from), ...I64_LOAD, ...I64_STORE,
    ...addTo(from, 8),
    ...get(to), ...constant(8), I32_ADD, LOCAL_TEE, to, ...get(end), I32_LT_U, BR_IF, 0,
    END,
  ];
}

export function uleb128(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

export function sleb128(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

function vector(items: number[][]): number[] {
  return [...uleb128(items.length), ...items.flat()];
}

function section(id: number, contents: number[]): number[] {
  return [id, ...uleb128(contents.length), ...contents];
}

function name(s: string): number[] {
  return [...uleb128(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
}

/**
 * A function of a module: exported as `name`, `params` i32 parameters returning an i32, with
 * `locals` more i32 locals and the instructions `body` (which ends with END).
 */
export interface WasmFunction {
  readonly name: string;
  readonly params: number;
  readonly locals: number;
  readonly body: number[];
}

/**
 * A module of one memory of `pages` pages (exported as "memory", no maximum) and one function
 * (exported as `exportName`) of `params` i32 parameters returning an i32, with `locals` more i32
 * locals and the instructions `body` (which ends with END).
 */
export function moduleBytes(pages: number, exportName: string, params: number, locals: number, body: number[]): Uint8Array {
  return moduleOfFunctions(pages, [{ name: exportName, params, locals, body }]);
}

/** A module of one memory of `pages` pages (exported as "memory", no maximum) and `functions`, each exported, all over that memory. */
export function moduleOfFunctions(pages: number, functions: readonly WasmFunction[]): Uint8Array {
  const types = functions.map((f) => [0x60, ...vector(Array.from({ length: f.params }, () => [I32])), ...vector([[I32]])]);
  const codes = functions.map((f) => {
    const code = [...vector([[...uleb128(f.locals), I32]]), ...f.body];
    return [...uleb128(code.length), ...code];
  });
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
    ...section(1, vector(types)), // type i: (i32 × params of function i) -> i32
    ...section(3, vector(functions.map((_, i) => uleb128(i)))), // function i has type i
    ...section(5, vector([[0x00, ...uleb128(pages)]])), // memory: `pages` pages, no maximum
    ...section(7, vector([[...name('memory'), 0x02, 0], ...functions.map((f, i) => [...name(f.name), 0x00, ...uleb128(i)])])),
    ...section(10, vector(codes)),
  ]);
}

/** The part of the WebAssembly JS API used here (TypeScript's ES2022 lib does not declare it). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

/**
 * An instance of `bytes`: its memory (as bytes) and its one function, or null where WebAssembly
 * is missing (as under `node --jitless`) or refuses the module.
 */
export function instantiate<F>(bytes: Uint8Array, exportName: string): { memory: Uint8Array; fn: F } | null {
  const instance = instantiateModule(bytes);
  return instance === null ? null : { memory: instance.memory, fn: instance.exports[exportName] as F };
}

/**
 * An instance of `bytes`: its memory (as bytes) and its exports, or null where WebAssembly is
 * missing (as under `node --jitless`) or refuses the module.
 */
export function instantiateModule(bytes: Uint8Array): { memory: Uint8Array; exports: Record<string, unknown> } | null {
  const api = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;
  if (api === undefined) return null;
  try {
    const instance = new api.Instance(new api.Module(bytes));
    const memory = instance.exports.memory as { buffer: ArrayBuffer };
    return { memory: new Uint8Array(memory.buffer), exports: instance.exports };
  } catch {
    return null;
  }
}
