{
  "targets": [
    {
      # The addon: only what JavaScript cannot do (BAR mmap, hugepage DMA memory, virt-to-phys,
      # VFIO ioctls, AF_XDP sockets and their XDP program).
      "target_name": "ixy",
      "sources": ["native/addon.cc", "native/guard.cc", "native/vfio.cc", "native/process.cc", "native/unix-fd.cc", "native/xdp.cc", "native/teardown.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
      "cflags_cc": ["-O2", "-Wall", "-Wextra"]
    },
    {
      # The register-level 82599 device model: a separate executable, see native/model/README.md.
      "target_name": "ixy-model",
      "type": "executable",
      "sources": ["<!@(ls -1 native/model/*.c)"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-std=gnu11"],
      "libraries": ["-lpthread", "-lm"]
    }
  ]
}
