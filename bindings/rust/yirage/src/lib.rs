//! Safe Rust bindings to yirage (`include/yirage.h`): kernel graphs, thread-block graphs
//! (µGraphs), the float64 reference executor, fingerprint equivalence, graph files, and (in
//! [`runtime`]) backends, devices, the superoptimizer and compiled kernels.
//!
//! Every fallible call returns [`Result`]; an [`Error`] carries the C status and message.
//! [`Tensor`]s are copyable handles owned by their graph: the C library checks every handle, so
//! using a tensor of a released or another graph is an `Err`, never undefined behaviour.

use std::ffi::{CStr, CString};
use std::fmt;
use std::path::Path;

use yirage_sys as sys;

pub mod runtime;
pub use runtime::{BackendInfo, Context, Device, DeviceInfo, Kernel, SearchOptions, Superoptimized};

/// Element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    Float16,
    BFloat16,
    Float32,
}

impl DType {
    fn raw(self) -> sys::yirage_dtype {
        match self {
            DType::Float16 => sys::yirage_dtype_YIRAGE_FLOAT16,
            DType::BFloat16 => sys::yirage_dtype_YIRAGE_BFLOAT16,
            DType::Float32 => sys::yirage_dtype_YIRAGE_FLOAT32,
        }
    }

    fn from_raw(raw: sys::yirage_dtype) -> DType {
        match raw {
            sys::yirage_dtype_YIRAGE_FLOAT16 => DType::Float16,
            sys::yirage_dtype_YIRAGE_BFLOAT16 => DType::BFloat16,
            _ => DType::Float32,
        }
    }
}

/// A failed yirage call: the C status name (e.g. `"INVALID_ARGUMENT"`) and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: &'static str,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

fn check(status: sys::yirage_status) -> Result<()> {
    if status == sys::yirage_status_YIRAGE_OK {
        return Ok(());
    }
    // Both strings are owned by the library: the name is static, the message lives until the
    // next failing call on this thread, so it is copied at once.
    unsafe {
        let name = CStr::from_ptr(sys::yirage_status_name(status)).to_str().unwrap_or("UNKNOWN");
        let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let message = CStr::from_ptr(sys::yirage_last_error_message()).to_string_lossy().into_owned();
        Err(Error { status: name, message })
    }
}

fn c_string(text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error {
        status: "INVALID_ARGUMENT",
        message: "string contains a NUL byte".into(),
    })
}

/// A tensor of a kernel graph or a thread-block graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor {
    raw: *mut sys::yirage_tensor,
}

impl Tensor {
    pub fn dims(&self) -> Result<Vec<i64>> {
        let mut ndim = 0usize;
        check(unsafe { sys::yirage_tensor_get_ndim(self.raw, &mut ndim) })?;
        let mut dims = vec![0i64; ndim];
        check(unsafe { sys::yirage_tensor_get_dims(self.raw, ndim, dims.as_mut_ptr()) })?;
        Ok(dims)
    }

    pub fn dtype(&self) -> Result<DType> {
        let mut raw = 0;
        check(unsafe { sys::yirage_tensor_get_dtype(self.raw, &mut raw) })?;
        Ok(DType::from_raw(raw))
    }
}

/// Host data for the reference executor, compact row-major. 16-bit types are raw bit patterns.
#[derive(Clone, Debug, PartialEq)]
pub enum HostData {
    Float32(Vec<f32>),
    Float16Bits(Vec<u16>),
    BFloat16Bits(Vec<u16>),
}

impl HostData {
    fn dtype(&self) -> DType {
        match self {
            HostData::Float32(_) => DType::Float32,
            HostData::Float16Bits(_) => DType::Float16,
            HostData::BFloat16Bits(_) => DType::BFloat16,
        }
    }

    fn zeros(dtype: DType, count: usize) -> HostData {
        match dtype {
            DType::Float32 => HostData::Float32(vec![f32::NAN; count]),
            DType::Float16 => HostData::Float16Bits(vec![0x7e00; count]),
            DType::BFloat16 => HostData::BFloat16Bits(vec![0x7fc0; count]),
        }
    }

    fn len(&self) -> usize {
        match self {
            HostData::Float32(v) => v.len(),
            HostData::Float16Bits(v) | HostData::BFloat16Bits(v) => v.len(),
        }
    }

    fn data_ptr(&self) -> *mut core::ffi::c_void {
        match self {
            HostData::Float32(v) => v.as_ptr() as *mut _,
            HostData::Float16Bits(v) | HostData::BFloat16Bits(v) => v.as_ptr() as *mut _,
        }
    }
}

fn dl_dtype(dtype: DType) -> sys::DLDataType {
    match dtype {
        DType::Float32 => sys::DLDataType { code: 2, bits: 32, lanes: 1 },
        DType::Float16 => sys::DLDataType { code: 2, bits: 16, lanes: 1 },
        DType::BFloat16 => sys::DLDataType { code: 4, bits: 16, lanes: 1 },
    }
}

fn dl_tensor(data: &HostData, shape: &mut [i64]) -> sys::DLTensor {
    sys::DLTensor {
        data: data.data_ptr(),
        device: sys::DLDevice { device_type: 1, device_id: 0 },
        ndim: shape.len() as i32,
        dtype: dl_dtype(data.dtype()),
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    }
}

/// The shapes and dtypes of a graph's inputs and outputs, for running it on host data.
#[derive(Clone, Debug)]
struct HostShapes {
    inputs: Vec<Vec<i64>>,
    outputs: Vec<(Vec<i64>, DType)>,
}

impl HostShapes {
    fn of(graph: &KernelGraph) -> Result<HostShapes> {
        let inputs = graph.inputs()?.iter().map(|t| t.dims()).collect::<Result<Vec<_>>>()?;
        let outputs = graph.outputs()?.iter().map(|t| Ok((t.dims()?, t.dtype()?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(HostShapes { inputs, outputs })
    }
}

/// Runs `call` on DLTensors over `inputs` and new (NaN-poisoned) outputs. Lengths are checked
/// here because C sees only pointers; shapes and dtypes are checked by the library.
fn run_host(
    what: &str,
    shapes: &HostShapes,
    inputs: &[HostData],
    call: impl FnOnce(&[*const sys::DLTensor], &[*mut sys::DLTensor]) -> sys::yirage_status,
) -> Result<Vec<HostData>> {
    let mut in_shapes = shapes.inputs.clone();
    for (i, (data, shape)) in inputs.iter().zip(&in_shapes).enumerate() {
        if data.len() != shape.iter().product::<i64>() as usize {
            return Err(Error { status: "INVALID_ARGUMENT", message: format!(
                "{what}: input {i} has {} elements, the graph expects {shape:?}", data.len()) });
        }
    }
    let outputs: Vec<HostData> = shapes.outputs.iter()
        .map(|(dims, dtype)| HostData::zeros(*dtype, dims.iter().product::<i64>() as usize))
        .collect();
    let mut out_shapes: Vec<Vec<i64>> = shapes.outputs.iter().map(|(d, _)| d.clone()).collect();
    let ins: Vec<sys::DLTensor> = inputs.iter().zip(in_shapes.iter_mut())
        .map(|(d, s)| dl_tensor(d, s)).collect();
    let mut outs: Vec<sys::DLTensor> = outputs.iter().zip(out_shapes.iter_mut())
        .map(|(d, s)| dl_tensor(d, s)).collect();
    let in_ptrs: Vec<*const sys::DLTensor> = ins.iter().map(|t| t as *const _).collect();
    let out_ptrs: Vec<*mut sys::DLTensor> = outs.iter_mut().map(|t| t as *mut _).collect();
    check(call(&in_ptrs, &out_ptrs))?;
    Ok(outputs)
}

/// The result of [`KernelGraph::equivalent`].
#[derive(Clone, Debug, PartialEq)]
pub struct Equivalence {
    pub equivalent: bool,
    pub trials: u32,
    pub seconds: f64,
    pub reason: String,
}

macro_rules! unary_ops {
    ($prefix:ident; $($name:ident),*) => {
        $(
            #[doc = concat!("Elementwise ", stringify!($name), ".")]
            pub fn $name(&mut self, x: Tensor) -> Result<Tensor> {
                self.build(|g, out| unsafe { paste_fn!($prefix, $name)(g, x.raw, out) })
            }
        )*
    };
}

macro_rules! binary_ops {
    ($prefix:ident; $($name:ident),*) => {
        $(
            #[doc = concat!("Elementwise ", stringify!($name), " with size-1 broadcasting.")]
            pub fn $name(&mut self, a: Tensor, b: Tensor) -> Result<Tensor> {
                self.build(|g, out| unsafe { paste_fn!($prefix, $name)(g, a.raw, b.raw, out) })
            }
        )*
    };
}

// Maps (graph | block, op) to the C function.
macro_rules! paste_fn {
    (graph, exp) => { sys::yirage_graph_exp }; (graph, silu) => { sys::yirage_graph_silu };
    (graph, gelu) => { sys::yirage_graph_gelu }; (graph, relu) => { sys::yirage_graph_relu };
    (graph, sqrt) => { sys::yirage_graph_sqrt }; (graph, square) => { sys::yirage_graph_square };
    (graph, sigmoid) => { sys::yirage_graph_sigmoid }; (graph, log) => { sys::yirage_graph_log };
    (graph, neg) => { sys::yirage_graph_neg }; (graph, add) => { sys::yirage_graph_add };
    (graph, sub) => { sys::yirage_graph_sub }; (graph, mul) => { sys::yirage_graph_mul };
    (graph, div) => { sys::yirage_graph_div }; (graph, pow) => { sys::yirage_graph_pow };
    (graph, max) => { sys::yirage_graph_max }; (graph, matmul) => { sys::yirage_graph_matmul };
    (block, exp) => { sys::yirage_block_graph_exp }; (block, silu) => { sys::yirage_block_graph_silu };
    (block, gelu) => { sys::yirage_block_graph_gelu }; (block, relu) => { sys::yirage_block_graph_relu };
    (block, sqrt) => { sys::yirage_block_graph_sqrt }; (block, square) => { sys::yirage_block_graph_square };
    (block, sigmoid) => { sys::yirage_block_graph_sigmoid }; (block, log) => { sys::yirage_block_graph_log };
    (block, neg) => { sys::yirage_block_graph_neg }; (block, add) => { sys::yirage_block_graph_add };
    (block, sub) => { sys::yirage_block_graph_sub }; (block, mul) => { sys::yirage_block_graph_mul };
    (block, div) => { sys::yirage_block_graph_div }; (block, pow) => { sys::yirage_block_graph_pow };
    (block, max) => { sys::yirage_block_graph_max }; (block, matmul) => { sys::yirage_block_graph_matmul };
}

/// A kernel graph (the user's program). Released on drop.
pub struct KernelGraph {
    raw: *mut sys::yirage_graph,
}

// yirage.h: distinct graphs are independent and a graph has no thread affinity (Send); it may
// be read from many threads at once while nobody modifies it, and every modifying method here
// takes &mut self (Sync).
unsafe impl Send for KernelGraph {}
unsafe impl Sync for KernelGraph {}

impl Drop for KernelGraph {
    fn drop(&mut self) {
        unsafe { sys::yirage_graph_release(self.raw) };
    }
}

impl KernelGraph {
    pub fn new() -> Result<KernelGraph> {
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::yirage_graph_create(&mut raw) })?;
        Ok(KernelGraph { raw })
    }

    fn build(
        &mut self,
        f: impl FnOnce(*mut sys::yirage_graph, *mut *mut sys::yirage_tensor) -> sys::yirage_status,
    ) -> Result<Tensor> {
        let mut out = std::ptr::null_mut();
        check(f(self.raw, &mut out))?;
        Ok(Tensor { raw: out })
    }

    pub fn new_input(&mut self, dims: &[i64], dtype: DType) -> Result<Tensor> {
        self.build(|g, out| unsafe {
            sys::yirage_graph_new_input(g, dims.len(), dims.as_ptr(), dtype.raw(), out)
        })
    }

    unary_ops!(graph; exp, silu, gelu, relu, sqrt, square, sigmoid, log, neg);
    binary_ops!(graph; add, sub, mul, div, pow, max, matmul);

    pub fn clamp(&mut self, x: Tensor, lo: f64, hi: f64) -> Result<Tensor> {
        self.build(|g, out| unsafe { sys::yirage_graph_clamp(g, x.raw, lo, hi, out) })
    }

    pub fn mul_scalar(&mut self, x: Tensor, scalar: f64) -> Result<Tensor> {
        self.build(|g, out| unsafe { sys::yirage_graph_mul_scalar(g, x.raw, scalar, out) })
    }

    pub fn reduction(&mut self, x: Tensor, dim: i32) -> Result<Tensor> {
        self.build(|g, out| unsafe { sys::yirage_graph_reduction(g, x.raw, dim, out) })
    }

    pub fn reduction_max(&mut self, x: Tensor, dim: i32) -> Result<Tensor> {
        self.build(|g, out| unsafe { sys::yirage_graph_reduction_max(g, x.raw, dim, out) })
    }

    pub fn rms_norm(&mut self, x: Tensor, shape: &[i64], eps: f64, weight: Option<Tensor>)
        -> Result<Tensor> {
        let w = weight.map_or(std::ptr::null_mut(), |t| t.raw);
        self.build(|g, out| unsafe {
            sys::yirage_graph_rms_norm(g, x.raw, shape.len(), shape.as_ptr(), eps, w, out)
        })
    }

    pub fn softmax(&mut self, x: Tensor, dim: i32) -> Result<Tensor> {
        self.build(|g, out| unsafe { sys::yirage_graph_softmax(g, x.raw, dim, out) })
    }

    pub fn concat(&mut self, a: Tensor, b: Tensor, dim: i32) -> Result<Tensor> {
        self.build(|g, out| unsafe { sys::yirage_graph_concat(g, a.raw, b.raw, dim, out) })
    }

    pub fn split(&mut self, x: Tensor, dim: i32, sizes: &[i64]) -> Result<Vec<Tensor>> {
        let mut parts = vec![std::ptr::null_mut(); sizes.len()];
        check(unsafe {
            sys::yirage_graph_split(self.raw, x.raw, dim, sizes.len(), sizes.as_ptr(),
                                    parts.as_mut_ptr())
        })?;
        Ok(parts.into_iter().map(|raw| Tensor { raw }).collect())
    }

    /// x's elements in row-major order under `shape` (one entry may be -1, inferred).
    pub fn reshape(&mut self, x: Tensor, shape: &[i64]) -> Result<Tensor> {
        self.build(|g, out| unsafe {
            sys::yirage_graph_reshape(g, x.raw, shape.len(), shape.as_ptr(), out)
        })
    }

    /// Output dim i is x's dim `dims[i]`.
    pub fn permute(&mut self, x: Tensor, dims: &[i64]) -> Result<Tensor> {
        self.build(|g, out| unsafe {
            sys::yirage_graph_permute(g, x.raw, dims.len(), dims.as_ptr(), out)
        })
    }

    pub fn transpose(&mut self, x: Tensor, dim0: i32, dim1: i32) -> Result<Tensor> {
        self.build(|g, out| unsafe { sys::yirage_graph_transpose(g, x.raw, dim0, dim1, out) })
    }

    pub fn mark_output(&mut self, x: Tensor) -> Result<()> {
        check(unsafe { sys::yirage_graph_mark_output(self.raw, x.raw) })
    }

    /// Adds the fused kernel `block` (reading the tensors its inputs were made from).
    pub fn customized(&mut self, block: &ThreadblockGraph) -> Result<Vec<Tensor>> {
        let mut n = 0usize;
        check(unsafe { sys::yirage_block_graph_num_outputs(block.raw, &mut n) })?;
        let mut outs = vec![std::ptr::null_mut(); n];
        check(unsafe { sys::yirage_graph_customized(self.raw, block.raw, outs.as_mut_ptr()) })?;
        Ok(outs.into_iter().map(|raw| Tensor { raw }).collect())
    }

    fn tensors(&self, count: unsafe extern "C" fn(*const sys::yirage_graph, *mut usize) -> sys::yirage_status,
               get: unsafe extern "C" fn(*const sys::yirage_graph, usize, *mut *mut sys::yirage_tensor) -> sys::yirage_status)
        -> Result<Vec<Tensor>> {
        let mut n = 0usize;
        check(unsafe { count(self.raw, &mut n) })?;
        (0..n).map(|i| {
            let mut raw = std::ptr::null_mut();
            check(unsafe { get(self.raw, i, &mut raw) })?;
            Ok(Tensor { raw })
        }).collect()
    }

    pub fn inputs(&self) -> Result<Vec<Tensor>> {
        self.tensors(sys::yirage_graph_num_inputs, sys::yirage_graph_get_input)
    }

    pub fn outputs(&self) -> Result<Vec<Tensor>> {
        self.tensors(sys::yirage_graph_num_outputs, sys::yirage_graph_get_output)
    }

    /// Runs the float64 reference executor: one `HostData` per graph input (shaped like it), and
    /// one new `HostData` per output.
    pub fn run_reference(&self, inputs: &[HostData]) -> Result<Vec<HostData>> {
        let shapes = HostShapes::of(self)?;
        run_host("run_reference", &shapes, inputs, |ins, outs| unsafe {
            sys::yirage_graph_run_reference(self.raw, ins.as_ptr(), ins.len(), outs.as_ptr(), outs.len())
        })
    }

    /// Fingerprint equivalence with another graph over the same inputs.
    pub fn equivalent(&self, other: &KernelGraph, trials: u32) -> Result<Equivalence> {
        let mut options: sys::yirage_equivalence_options = unsafe { std::mem::zeroed() };
        unsafe { sys::yirage_equivalence_options_init(&mut options) };
        options.trials = trials;
        let mut result: sys::yirage_equivalence_result = unsafe { std::mem::zeroed() };
        result.struct_size = std::mem::size_of::<sys::yirage_equivalence_result>();
        check(unsafe { sys::yirage_graph_equivalent(self.raw, other.raw, &options, &mut result) })?;
        Ok(Equivalence {
            equivalent: result.equivalent != 0,
            trials: result.trials,
            seconds: result.seconds,
            reason: unsafe { CStr::from_ptr(result.reason.as_ptr()) }.to_string_lossy().into_owned(),
        })
    }

    /// Writes the graph: JSON when the path ends in ".json", binary otherwise.
    pub fn save(&self, path: &Path) -> Result<()> {
        let path = c_string(&path.to_string_lossy())?;
        check(unsafe { sys::yirage_graph_save(self.raw, path.as_ptr()) })
    }

    pub fn load(path: &Path) -> Result<KernelGraph> {
        let path = c_string(&path.to_string_lossy())?;
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::yirage_graph_load(path.as_ptr(), &mut raw) })?;
        Ok(KernelGraph { raw })
    }

    /// The binary graph file bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut blob = std::ptr::null_mut();
        check(unsafe {
            sys::yirage_graph_serialize(self.raw, sys::yirage_graph_format_YIRAGE_GRAPH_FORMAT_BINARY,
                                        &mut blob)
        })?;
        Ok(take_blob(blob))
    }

    /// The graph as Graphviz's DOT text: its tensors and operators, and each customized
    /// operator's µGraph (grid, imap/fmap/omap, for-loop, accumulators) as a cluster.
    pub fn to_dot(&self) -> Result<String> {
        let mut blob = std::ptr::null_mut();
        check(unsafe { sys::yirage_graph_to_dot(self.raw, &mut blob) })?;
        let mut text = take_blob(blob);
        if text.last() == Some(&0) {
            text.pop();
        }
        Ok(String::from_utf8_lossy(&text).into_owned())
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<KernelGraph> {
        let mut raw = std::ptr::null_mut();
        check(unsafe {
            sys::yirage_graph_deserialize(bytes.as_ptr() as *const _, bytes.len(), &mut raw)
        })?;
        Ok(KernelGraph { raw })
    }
}

/// A blob's bytes, the blob released.
fn take_blob(blob: *mut sys::yirage_blob) -> Vec<u8> {
    let bytes = unsafe {
        std::slice::from_raw_parts(sys::yirage_blob_data(blob) as *const u8, sys::yirage_blob_size(blob)).to_vec()
    };
    unsafe { sys::yirage_blob_release(blob) };
    bytes
}

/// For-loop accumulators of a [`ThreadblockGraph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulator {
    Sum,
    ReduceSum,
    Mean,
    Rms,
    Max,
}

/// A thread-block graph (µGraph): one fused kernel for [`KernelGraph::customized`].
pub struct ThreadblockGraph {
    raw: *mut sys::yirage_block_graph,
}

unsafe impl Send for ThreadblockGraph {}
unsafe impl Sync for ThreadblockGraph {}

impl Drop for ThreadblockGraph {
    fn drop(&mut self) {
        unsafe { sys::yirage_block_graph_release(self.raw) };
    }
}

impl ThreadblockGraph {
    pub fn new(grid: [i64; 3], block_threads: i64, forloop_range: i64) -> Result<ThreadblockGraph> {
        let mut options: sys::yirage_block_graph_options = unsafe { std::mem::zeroed() };
        unsafe { sys::yirage_block_graph_options_init(&mut options) };
        options.grid = grid;
        options.block_threads = block_threads;
        options.forloop_range = forloop_range;
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::yirage_block_graph_create(&options, &mut raw) })?;
        Ok(ThreadblockGraph { raw })
    }

    fn build(
        &mut self,
        f: impl FnOnce(*mut sys::yirage_block_graph, *mut *mut sys::yirage_tensor) -> sys::yirage_status,
    ) -> Result<Tensor> {
        let mut out = std::ptr::null_mut();
        check(f(self.raw, &mut out))?;
        Ok(Tensor { raw: out })
    }

    pub fn new_input(&mut self, dtensor: Tensor, imap: [i32; 3], fmap: i32) -> Result<Tensor> {
        self.build(|g, out| unsafe {
            sys::yirage_block_graph_new_input(g, dtensor.raw, imap.as_ptr(), fmap, out)
        })
    }

    unary_ops!(block; exp, silu, gelu, relu, sqrt, square, sigmoid, log, neg);
    binary_ops!(block; add, sub, mul, div, pow, max, matmul);

    pub fn accumulate(&mut self, x: Tensor, kind: Accumulator) -> Result<Tensor> {
        let raw = match kind {
            Accumulator::Sum => sys::yirage_accumulator_YIRAGE_ACCUM_SUM,
            Accumulator::ReduceSum => sys::yirage_accumulator_YIRAGE_ACCUM_REDUCE_SUM,
            Accumulator::Mean => sys::yirage_accumulator_YIRAGE_ACCUM_REDUCE_MEAN,
            Accumulator::Rms => sys::yirage_accumulator_YIRAGE_ACCUM_REDUCE_RMS,
            Accumulator::Max => sys::yirage_accumulator_YIRAGE_ACCUM_MAX,
        };
        self.build(|g, out| unsafe { sys::yirage_block_graph_accumulate(g, x.raw, raw, out) })
    }

    pub fn new_output(&mut self, s: Tensor, omap: [i32; 3], forloop_dim: i32) -> Result<()> {
        check(unsafe { sys::yirage_block_graph_new_output(self.raw, s.raw, omap.as_ptr(), forloop_dim) })
    }

    /// As `new_output`, written as `dtype` rather than the tile's own dtype (float32 partial sums
    /// of a 16-bit graph; docs/ugraphs.md).
    pub fn new_output_as(&mut self, s: Tensor, omap: [i32; 3], forloop_dim: i32, dtype: DType) -> Result<()> {
        check(unsafe {
            sys::yirage_block_graph_new_output_as(self.raw, s.raw, omap.as_ptr(), forloop_dim, dtype.raw())
        })
    }
}

/// The library's release version.
pub fn version() -> &'static str {
    unsafe { CStr::from_ptr(sys::yirage_version()) }.to_str().unwrap_or("")
}
