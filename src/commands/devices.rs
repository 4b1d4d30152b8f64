//! `seisimage devices`: the CUDA devices we can use, or why none.

use crate::cli::DevicesArgs;

pub fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let probe = seisimage::gpu::probe();
    if args.json {
        let value = match &probe {
            Ok(rt) => serde_json::json!({ "usable": true, "runtime": rt }),
            Err(why) => serde_json::json!({ "usable": false, "reason": why.0 }),
        };
        super::println(&serde_json::to_string_pretty(&value)?)?;
        return Ok(());
    }
    match probe {
        Ok(rt) => {
            super::println(&format!(
                "CUDA driver supports CUDA {}.{}; NVRTC {}.{}; cuFFT {}",
                rt.driver_cuda_version.0,
                rt.driver_cuda_version.1,
                rt.nvrtc_version.0,
                rt.nvrtc_version.1,
                rt.cufft_version
            ))?;
            for d in &rt.devices {
                super::println(&format!(
                    "  device {}: {} — compute capability {}.{}, {} SMs, {:.1} GiB ({:.1} GiB free), PCI bus {}",
                    d.ordinal,
                    d.name,
                    d.compute_capability.0,
                    d.compute_capability.1,
                    d.multiprocessors,
                    d.total_memory_bytes as f64 / (1u64 << 30) as f64,
                    d.free_memory_bytes as f64 / (1u64 << 30) as f64,
                    d.pci_bus_id
                ))?;
            }
            let cache = seisimage::gpu::kernel_cache::KernelCache::from_env();
            match cache.dir() {
                Some(dir) => super::println(&format!("compiled kernels are kept in {}", dir.display()))?,
                None => super::println("compiled kernels are not kept (SEISIMAGE_KERNEL_CACHE=off)")?,
            }
        }
        Err(why) => {
            super::println(&format!("no usable GPU: {why}"))?;
            super::println("jobs with compute.backend = \"auto\" run on the CPU.")?;
        }
    }
    Ok(())
}
