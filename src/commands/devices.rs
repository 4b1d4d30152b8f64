//! `seisimage devices`: the CUDA devices we can use, or why none.

use crate::cli::DevicesArgs;

pub fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let probe = seisimage::gpu::probe();
    if args.json {
        let value = match &probe {
            Ok(rt) => serde_json::json!({ "usable": true, "runtime": rt }),
            Err(why) => serde_json::json!({ "usable": false, "reason": why.0 }),
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    match probe {
        Ok(rt) => {
            println!(
                "CUDA driver supports CUDA {}.{}; NVRTC {}.{}; cuFFT {}",
                rt.driver_cuda_version.0,
                rt.driver_cuda_version.1,
                rt.nvrtc_version.0,
                rt.nvrtc_version.1,
                rt.cufft_version
            );
            for d in &rt.devices {
                println!(
                    "  device {}: {} — compute capability {}.{}, {} SMs, {:.1} GiB ({:.1} GiB free), PCI bus {}",
                    d.ordinal,
                    d.name,
                    d.compute_capability.0,
                    d.compute_capability.1,
                    d.multiprocessors,
                    d.total_memory_bytes as f64 / (1u64 << 30) as f64,
                    d.free_memory_bytes as f64 / (1u64 << 30) as f64,
                    d.pci_bus_id
                );
            }
            let cache = seisimage::gpu::kernel_cache::KernelCache::from_env();
            match cache.dir() {
                Some(dir) => println!("compiled kernels are kept in {}", dir.display()),
                None => println!("compiled kernels are not kept (SEISIMAGE_KERNEL_CACHE=off)"),
            }
        }
        Err(why) => {
            println!("no usable GPU: {why}");
            println!("jobs with compute.backend = \"auto\" run on the CPU.");
        }
    }
    Ok(())
}
