//! Backends, devices, the superoptimizer and compiled kernels (`yirage_context_*`,
//! `yirage_superoptimize`, `yirage_compile`, `yirage_kernel_run`).

use std::ffi::CStr;
use std::marker::PhantomData;
use std::path::Path;

use super::{c_string, check, run_host, Error, HostData, HostShapes, KernelGraph, Result};
use yirage_sys as sys;

fn text(chars: &[core::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A loaded backend plugin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendInfo {
    pub name: String,
    pub version: String,
    pub path: String,
    pub num_devices: i32,
    /// Why there are no devices ("" when there are).
    pub unavailable_reason: String,
}

/// The loaded backend plugins. Released on drop; kernels compiled from it stay usable.
pub struct Context {
    raw: *mut sys::yirage_context,
}

// The header: creation and release are [any thread]/[modifies context]; every query [reads
// context], so shared references may be used from several threads.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Drop for Context {
    fn drop(&mut self) {
        unsafe { sys::yirage_context_release(self.raw) };
    }
}

impl Context {
    /// The plugins of `$YIRAGE_BACKEND_PATH` and the install's plugin folder.
    pub fn new() -> Result<Context> {
        Context::with_plugins(&[], true)
    }

    /// `plugins` first (any failure is an error), then, with `search_default_paths`, the
    /// default folders.
    pub fn with_plugins(plugins: &[&Path], search_default_paths: bool) -> Result<Context> {
        let paths = plugins.iter()
            .map(|p| c_string(&p.to_string_lossy()))
            .collect::<Result<Vec<_>>>()?;
        let pointers: Vec<*const core::ffi::c_char> = paths.iter().map(|p| p.as_ptr()).collect();
        let mut options: sys::yirage_context_options = unsafe { std::mem::zeroed() };
        unsafe { sys::yirage_context_options_init(&mut options) };
        options.plugin_paths = pointers.as_ptr();
        options.num_plugin_paths = pointers.len();
        options.search_default_paths = i32::from(search_default_paths);
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::yirage_context_create(&options, &mut raw) })?;
        Ok(Context { raw })
    }

    pub fn backends(&self) -> Result<Vec<BackendInfo>> {
        let mut n = 0usize;
        check(unsafe { sys::yirage_context_num_backends(self.raw, &mut n) })?;
        (0..n).map(|i| {
            let mut info: sys::yirage_backend_info = unsafe { std::mem::zeroed() };
            info.struct_size = std::mem::size_of::<sys::yirage_backend_info>();
            check(unsafe { sys::yirage_context_backend_info(self.raw, i, &mut info) })?;
            Ok(BackendInfo {
                name: text(&info.name),
                version: text(&info.version),
                path: text(&info.path),
                num_devices: info.num_devices,
                unavailable_reason: text(&info.unavailable_reason),
            })
        }).collect()
    }

    /// Plugins that were found but skipped, one line each.
    pub fn load_errors(&self) -> Result<String> {
        let mut raw = std::ptr::null();
        check(unsafe { sys::yirage_context_load_errors(self.raw, &mut raw) })?;
        Ok(unsafe { CStr::from_ptr(raw) }.to_string_lossy().into_owned())
    }

    /// Device `index` of `backend`: `NOT_FOUND` lists what exists, or why there is none.
    pub fn device(&self, backend: &str, index: i32) -> Result<Device<'_>> {
        let name = c_string(backend)?;
        let mut raw = std::ptr::null();
        check(unsafe { sys::yirage_context_get_device(self.raw, name.as_ptr(), index, &mut raw) })?;
        Ok(Device { raw, _context: PhantomData })
    }
}

/// A device; it lives as long as its context.
#[derive(Clone, Copy)]
pub struct Device<'a> {
    raw: *const sys::yirage_device,
    _context: PhantomData<&'a Context>,
}

/// What a device is (`yirage_device_info`, with the target properties left out).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    pub backend: String,
    pub index: i32,
    pub name: String,
    /// Bit `1 << dtype` per supported dtype (yirage_dtype values).
    pub dtypes: u32,
    /// Where its tensors live (DLPack device type: 1 is the host).
    pub dlpack_device_type: i32,
    pub compute_units: i64,
    pub memory_bandwidth: f64,
}

impl Device<'_> {
    pub fn info(&self) -> Result<DeviceInfo> {
        let mut info: sys::yirage_device_info = unsafe { std::mem::zeroed() };
        info.struct_size = std::mem::size_of::<sys::yirage_device_info>();
        info.target.struct_size = std::mem::size_of::<sys::yirage_target_properties>();
        check(unsafe { sys::yirage_device_get_info(self.raw, &mut info) })?;
        Ok(DeviceInfo {
            backend: text(&info.backend),
            index: info.index,
            name: text(&info.name),
            dtypes: info.dtypes,
            dlpack_device_type: info.dlpack_device_type,
            compute_units: info.target.compute_units,
            memory_bandwidth: info.target.memory_bandwidth,
        })
    }
}

/// A graph compiled for a device. Released on drop.
pub struct Kernel {
    raw: *mut sys::yirage_kernel,
    shapes: HostShapes,
}

// yirage_kernel_run is [reads kernel] as long as concurrent runs use distinct outputs, which
// `run` always allocates afresh.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Drop for Kernel {
    fn drop(&mut self) {
        unsafe { sys::yirage_kernel_release(self.raw) };
    }
}

impl Kernel {
    /// Runs on host data (one `HostData` per graph input) and returns new outputs, whatever the
    /// kernel's device: on a GPU the library copies the data into device memory of its own,
    /// runs, waits and copies the outputs back (`yirage_kernel_run_host`), so no device runtime
    /// is needed here.
    pub fn run(&self, inputs: &[HostData]) -> Result<Vec<HostData>> {
        run_host("Kernel::run", &self.shapes, inputs, |ins, outs| unsafe {
            sys::yirage_kernel_run_host(self.raw, ins.as_ptr(), ins.len(), outs.as_ptr(), outs.len())
        })
    }

    /// Runs on the caller's own tensors, wherever they live (the kernel's device: host memory
    /// for the CPU backend, CUDA memory from any library for the CUDA backend, `device_type` 2),
    /// without copies, queued on `stream` (a `CUstream` for CUDA; null: the default stream).
    /// Returns once the work is queued: [`Kernel::synchronize`] the stream before reading the
    /// outputs. The library checks every tensor (shape, dtype, device, compact strides, non-null
    /// data, outputs that overlap nothing) and the counts before anything runs; then the outputs
    /// are untouched.
    ///
    /// # Safety
    /// Every tensor's `data` (plus `byte_offset`) must point to memory of its device that holds
    /// the elements its shape describes and stays valid until the work has finished, `shape`
    /// (and `strides`, when not null) to `ndim` values; `stream` must be null or a stream of the
    /// kernel's device. Concurrent runs must use distinct outputs.
    pub unsafe fn run_dlpack(&self, inputs: &[sys::DLTensor], outputs: &mut [sys::DLTensor],
                             stream: *mut core::ffi::c_void) -> Result<()> {
        let in_ptrs: Vec<*const sys::DLTensor> = inputs.iter().map(|t| t as *const _).collect();
        let out_ptrs: Vec<*mut sys::DLTensor> = outputs.iter_mut().map(|t| t as *mut _).collect();
        check(sys::yirage_kernel_run(self.raw, in_ptrs.as_ptr(), in_ptrs.len(), out_ptrs.as_ptr(),
                                     out_ptrs.len(), stream))
    }

    /// Waits until this kernel's work queued on `stream` (null: the default stream) has finished.
    ///
    /// # Safety
    /// `stream` must be null or a live stream of the kernel's device.
    pub unsafe fn synchronize(&self, stream: *mut core::ffi::c_void) -> Result<()> {
        check(sys::yirage_kernel_synchronize(self.raw, stream))
    }
}

/// Options of [`KernelGraph::superoptimize`].
#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub time_budget_seconds: f64,
    /// Verified candidates profiled on the device (the input graph is always measured too).
    pub profile_top_k: u32,
    /// 0: all cores.
    pub threads: u32,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { time_budget_seconds: 60.0, profile_top_k: 4, threads: 0 }
    }
}

/// One verified candidate of a search, best first.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub description: String,
    pub estimated_seconds: f64,
    /// Median on the device; -1 if not profiled.
    pub measured_seconds: f64,
}

/// What [`KernelGraph::superoptimize`] returns: the best graph compiled, and the search's story.
pub struct Superoptimized {
    pub kernel: Kernel,
    pub best: KernelGraph,
    pub candidates: Vec<Candidate>,
    /// Partial graphs explored, and the search's wall time.
    pub states: i64,
    pub seconds: f64,
    pub from_cache: bool,
    /// Candidates that passed verification but that the device's backend cannot build.
    pub unbuildable: i64,
}

impl KernelGraph {
    /// This graph as it is, compiled for `device`.
    pub fn compile(&self, device: &Device) -> Result<Kernel> {
        let shapes = HostShapes::of(self)?;
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::yirage_compile(self.raw, device.raw, std::ptr::null(), &mut raw) })?;
        Ok(Kernel { raw, shapes })
    }

    /// Searches for a faster equivalent on `device`, profiles the cheapest verified candidates
    /// and this graph there, and returns the fastest correct one compiled. A search that runs out
    /// of budget still returns what it verified; `NOT_FOUND` when that is nothing.
    pub fn superoptimize(&self, device: &Device, options: &SearchOptions) -> Result<Superoptimized> {
        let mut o: sys::yirage_search_options = unsafe { std::mem::zeroed() };
        unsafe { sys::yirage_search_options_init(&mut o) };
        o.device = device.raw;
        o.time_budget_seconds = options.time_budget_seconds;
        o.profile_top_k = options.profile_top_k;
        o.threads = options.threads;
        let mut result = std::ptr::null_mut();
        let status = unsafe { sys::yirage_superoptimize(self.raw, &o, &mut result) };
        if status != sys::yirage_status_YIRAGE_ERROR_TIMEOUT || result.is_null() {
            check(status)?;
        }
        struct Release(*mut sys::yirage_search_result);
        impl Drop for Release {
            fn drop(&mut self) {
                unsafe { sys::yirage_search_result_release(self.0) };
            }
        }
        let result = Release(result);
        let mut stats: sys::yirage_search_stats = unsafe { std::mem::zeroed() };
        stats.struct_size = std::mem::size_of::<sys::yirage_search_stats>();
        check(unsafe { sys::yirage_search_result_stats(result.0, &mut stats) })?;
        let mut n = 0usize;
        check(unsafe { sys::yirage_search_result_num_candidates(result.0, &mut n) })?;
        if n == 0 {
            // What was measured, and why each was dropped (the input graph is always measured).
            let mut profiled = 0usize;
            check(unsafe { sys::yirage_search_result_num_profiled(result.0, &mut profiled) })?;
            let mut why = Vec::new();
            for i in 0..profiled {
                let mut r: sys::yirage_search_profile_record = unsafe { std::mem::zeroed() };
                r.struct_size = std::mem::size_of::<sys::yirage_search_profile_record>();
                check(unsafe { sys::yirage_search_result_profiled(result.0, i, &mut r) })?;
                why.push(format!("{}: {}", text(&r.description), text(&r.error)));
            }
            let budget = if status == sys::yirage_status_YIRAGE_ERROR_TIMEOUT { " within the budget" } else { "" };
            let why = if why.is_empty() { String::new() } else { format!(" ({})", why.join("; ")) };
            return Err(Error { status: "NOT_FOUND",
                               message: format!("superoptimize: no correct candidate was found{budget}{why}") });
        }
        let mut candidates = Vec::new();
        let mut best = None;
        for i in 0..n {
            let mut info: sys::yirage_search_candidate_info = unsafe { std::mem::zeroed() };
            info.struct_size = std::mem::size_of::<sys::yirage_search_candidate_info>();
            let mut graph = std::ptr::null_mut();
            let out_graph = if i == 0 { &mut graph as *mut _ } else { std::ptr::null_mut() };
            check(unsafe { sys::yirage_search_result_candidate(result.0, i, out_graph, &mut info) })?;
            if i == 0 {
                best = Some(KernelGraph { raw: graph });
            }
            candidates.push(Candidate {
                description: text(&info.description),
                estimated_seconds: info.estimated_seconds,
                measured_seconds: info.measured_seconds,
            });
        }
        let best = best.expect("candidate 0 was read");
        let kernel = best.compile(device)?;
        Ok(Superoptimized { kernel, best, candidates, states: stats.states, seconds: stats.seconds,
                            from_cache: stats.from_cache != 0, unbuildable: stats.unbuildable })
    }
}
