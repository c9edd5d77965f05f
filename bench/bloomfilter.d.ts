/**
 * Types for the `bloomfilter` npm package (Jason Davies, v1.x, plain ESM JavaScript without
 * declarations), limited to what bench/filters.ts calls. Keys are strings (the package hashes
 * `v + ""` with FNV-1a over UTF-16 code units).
 */
declare module 'bloomfilter' {
  export class BloomFilter {
    /** m bits (rounded up to a multiple of 32), k hash functions. */
    constructor(m: number, k: number);
    readonly m: number;
    readonly k: number;
    add(v: string): void;
    test(v: string): boolean;
    /** m = ⌈−n·log2(error) / ln 2⌉, k = ⌈ln 2 · m / n⌉. */
    static withTargetError(n: number, error: number): BloomFilter;
  }
}
