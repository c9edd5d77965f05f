{
  "targets": [
    {
      "target_name": "sievekv_mmap",
      "sources": ["native/mmap.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
