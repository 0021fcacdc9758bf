// Kernels for the shared-memory checks of linattn-gpu-embed-kernel-ir.

// 120000 bytes: above sm_86's 99 KiB, within sm_90's 227 KiB.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @huge()
        workgroup(%a: memref<60000xf16, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// 101376 bytes of elements, sm_86's limit exactly, but the second buffer's
// alignment puts it at 101376: the kernel needs 101392.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @huge2()
        workgroup(%a: memref<101360xi8, #gpu.address_space<workgroup>>,
                  %b: memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}) kernel {
      gpu.return
    }
  }
}

// -----

// A buffer whose size is not known.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @dynamic()
        workgroup(%a: memref<?xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
