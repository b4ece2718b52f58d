//! Backends, devices, compile, run and superoptimize on the CPU plugin (found through
//! YIRAGE_BACKEND_PATH, which meson test sets).
use yirage::{Context, DType, HostData, KernelGraph, SearchOptions};
use yirage_sys as sys;

fn small_graph() -> KernelGraph {
    let mut g = KernelGraph::new().unwrap();
    let x = g.new_input(&[8, 64], DType::Float32).unwrap();
    let w = g.new_input(&[64, 48], DType::Float32).unwrap();
    let n = g.rms_norm(x, &[64], 0.0, None).unwrap();
    let o = g.matmul(n, w).unwrap();
    g.mark_output(o).unwrap();
    g
}

fn inputs() -> Vec<HostData> {
    let x = (0..8 * 64).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
    let w = (0..64 * 48).map(|i| ((i * 53 % 97) as f32 / 48.0) - 1.0).collect();
    vec![HostData::Float32(x), HostData::Float32(w)]
}

fn relative_error(got: &HostData, want: &HostData) -> f64 {
    let (HostData::Float32(a), HostData::Float32(b)) = (got, want) else { panic!("float32") };
    let diff: f64 = a.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum();
    let norm: f64 = b.iter().map(|y| (*y as f64).powi(2)).sum();
    (diff / norm).sqrt()
}

#[test]
fn backends_and_devices() {
    let context = Context::new().unwrap();
    let backends = context.backends().unwrap();
    let cpu = backends.iter().find(|b| b.name == "cpu").expect("the CPU plugin is loaded");
    assert_eq!(cpu.num_devices, 1);
    let info = context.device("cpu", 0).unwrap().info().unwrap();
    assert_eq!(info.backend, "cpu");
    assert_eq!(info.dlpack_device_type, 1);
    assert!(info.compute_units >= 1 && info.memory_bandwidth > 0.0);
    let missing = context.device("nope", 0).err().unwrap();
    assert_eq!(missing.status, "NOT_FOUND");
    assert!(missing.message.contains("nope"), "{}", missing.message);
    assert_eq!(context.device("cpu", 3).err().unwrap().status, "NOT_FOUND");
}

#[test]
fn compile_and_run_match_the_reference() {
    let context = Context::new().unwrap();
    let device = context.device("cpu", 0).unwrap();
    let g = small_graph();
    let kernel = g.compile(&device).unwrap();
    let want = g.run_reference(&inputs()).unwrap();
    let got = kernel.run(&inputs()).unwrap();
    assert!(relative_error(&got[0], &want[0]) < 1e-4);
    drop(g); // the kernel holds its own copy of the graph
    assert!(relative_error(&kernel.run(&inputs()).unwrap()[0], &want[0]) < 1e-4);
    let short = kernel.run(&inputs()[..1]).err().unwrap();
    assert_eq!(short.status, "INVALID_ARGUMENT");
    let wrong = kernel.run(&[HostData::Float32(vec![0.0; 3]), inputs()[1].clone()]).err().unwrap();
    assert_eq!(wrong.status, "INVALID_ARGUMENT");
    assert!(wrong.message.contains("input 0 has 3 elements"), "{}", wrong.message);
}

#[test]
fn superoptimize_and_run() {
    let context = Context::new().unwrap();
    let device = context.device("cpu", 0).unwrap();
    let g = small_graph();
    let options = SearchOptions { time_budget_seconds: 20.0, profile_top_k: 2, threads: 0 };
    let found = g.superoptimize(&device, &options).unwrap();
    assert!(found.states > 0 && found.seconds > 0.0);
    assert_eq!(found.unbuildable, 0, "the CPU backend builds every candidate");
    assert!(!found.candidates.is_empty());
    assert!(found.candidates[0].measured_seconds > 0.0);
    assert!(found.best.equivalent(&g, 2).unwrap().equivalent);
    let want = g.run_reference(&inputs()).unwrap();
    let got = found.kernel.run(&inputs()).unwrap();
    assert!(relative_error(&got[0], &want[0]) < 1e-4);
}

fn host_tensor(data: &mut [f32], shape: &mut [i64]) -> sys::DLTensor {
    sys::DLTensor {
        data: data.as_mut_ptr() as *mut _,
        device: sys::DLDevice { device_type: 1, device_id: 0 },
        ndim: shape.len() as i32,
        dtype: sys::DLDataType { code: 2, bits: 32, lanes: 1 },
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    }
}

#[test]
fn run_on_the_callers_own_tensors() {
    let context = Context::new().unwrap();
    let kernel = small_graph().compile(&context.device("cpu", 0).unwrap()).unwrap();
    let want = kernel.run(&inputs()).unwrap();
    let (HostData::Float32(mut x), HostData::Float32(mut w)) = (inputs()[0].clone(), inputs()[1].clone())
        else { panic!("float32") };
    let mut out = vec![f32::NAN; 8 * 48];
    let (mut xs, mut ws, mut os) = ([8i64, 64], [64i64, 48], [8i64, 48]);
    let ins = [host_tensor(&mut x, &mut xs), host_tensor(&mut w, &mut ws)];
    let mut outs = [host_tensor(&mut out, &mut os)];
    unsafe {
        kernel.run_dlpack(&ins, &mut outs, std::ptr::null_mut()).unwrap();
        kernel.synchronize(std::ptr::null_mut()).unwrap();
    }
    assert!(relative_error(&HostData::Float32(out.clone()), &want[0]) < 1e-6);

    // Refused before anything runs, the output left as it was: a missing input, a wrong shape,
    // an output that is an input.
    out.fill(-7.0);
    let mut outs = [host_tensor(&mut out, &mut os)];
    let short = unsafe { kernel.run_dlpack(&ins[..1], &mut outs, std::ptr::null_mut()) }.err().unwrap();
    assert_eq!(short.status, "INVALID_ARGUMENT");
    let mut bad_shape = [8i64, 63];
    let bad = [host_tensor(&mut x, &mut bad_shape), ins[1]];
    let wrong = unsafe { kernel.run_dlpack(&bad, &mut outs, std::ptr::null_mut()) }.err().unwrap();
    assert_eq!(wrong.status, "INVALID_ARGUMENT");
    let mut aliased = [host_tensor(&mut x, &mut os)];
    let overlap = unsafe { kernel.run_dlpack(&ins, &mut aliased, std::ptr::null_mut()) }.err().unwrap();
    assert_eq!(overlap.status, "INVALID_ARGUMENT");
    assert!(out.iter().all(|&v| v == -7.0));
}

#[test]
fn superoptimize_says_why_nothing_was_correct() {
    // exp(4096·x) overflows float16 even for x near 1/64, the narrowest inputs the check tries:
    // the graph cannot match the float64 reference on any backend, and a search too short to
    // verify a candidate has nothing else to offer.
    let context = Context::new().unwrap();
    let mut g = KernelGraph::new().unwrap();
    let x = g.new_input(&[4, 64], DType::Float16).unwrap();
    let scaled = g.mul_scalar(x, 4096.0).unwrap();
    let e = g.exp(scaled).unwrap();
    g.mark_output(e).unwrap();
    let options = SearchOptions { time_budget_seconds: 0.001, profile_top_k: 1, threads: 0 };
    let err = g.superoptimize(&context.device("cpu", 0).unwrap(), &options).err().unwrap();
    assert_eq!(err.status, "NOT_FOUND");
    assert!(err.message.contains("the input graph, unchanged: ") && err.message.contains("overflows float16"),
            "{}", err.message);
}
