{
  "targets": [
    {
      "target_name": "sievekv_native",
      "sources": ["native/addon.c", "native/mmap.c", "native/pread.c", "native/crc32c.c", "native/lz4.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
