//! RMSNorm + linear from Rust: the user's graph and the fused µGraph, checked equivalent by
//! fingerprint and run on the reference executor; then the graph superoptimized on the CPU
//! backend and run there.
//! Run (inside `meson devenv -C build -w .`, README.md):
//!      cd bindings/rust && cargo run --offline --example rmsnorm_linear
use yirage::{Accumulator, DType, HostData, KernelGraph, ThreadblockGraph};

fn main() -> yirage::Result<()> {
    let (rows, hidden, cols) = (8i64, 512i64, 256i64);
    let mut plain = KernelGraph::new()?;
    let x = plain.new_input(&[rows, hidden], DType::Float32)?;
    let w = plain.new_input(&[hidden, cols], DType::Float32)?;
    let n = plain.rms_norm(x, &[hidden], 0.0, None)?;
    let o = plain.matmul(n, w)?;
    plain.mark_output(o)?;

    let mut fused = KernelGraph::new()?;
    let fx = fused.new_input(&[rows, hidden], DType::Float32)?;
    let fw = fused.new_input(&[hidden, cols], DType::Float32)?;
    let mut tb = ThreadblockGraph::new([cols / 64, 1, 1], 128, hidden / 64)?;
    let tx = tb.new_input(fx, [-1, -1, -1], 1)?;
    let tw = tb.new_input(fw, [1, -1, -1], 0)?;
    let xw = tb.matmul(tx, tw)?;
    let acc = tb.accumulate(xw, Accumulator::Sum)?;
    let rms = tb.accumulate(tx, Accumulator::Rms)?;
    let out = tb.div(acc, rms)?;
    tb.new_output(out, [1, -1, -1], -1)?;
    let outputs = fused.customized(&tb)?;
    fused.mark_output(outputs[0])?;

    let check = fused.equivalent(&plain, 3)?;
    println!("equivalent: {} ({} trials, {:.3} s)", check.equivalent, check.trials, check.seconds);
    let inputs = [
        HostData::Float32((0..rows * hidden).map(|i| ((i % 7) as f32 - 3.0) / 3.0).collect()),
        HostData::Float32((0..hidden * cols).map(|i| ((i % 5) as f32 - 2.0) / 2.0).collect()),
    ];
    let (HostData::Float32(a), HostData::Float32(b)) =
        (&plain.run_reference(&inputs)?[0], &fused.run_reference(&inputs)?[0])
    else {
        unreachable!("float32 graphs give float32 outputs")
    };
    let worst = a.iter().zip(b).map(|(p, q)| (p - q).abs()).fold(0f32, f32::max);
    println!("largest difference between the two reference outputs: {worst:e}");

    // The CPU backend's plugin is found as every program finds plugins ($YIRAGE_BACKEND_PATH,
    // then the install's folder); the search profiles its best candidates there.
    let context = yirage::Context::new()?;
    let cpu = context.device("cpu", 0)?;
    let found = plain.superoptimize(&cpu, &yirage::SearchOptions::default())?;
    let outputs = found.kernel.run(&inputs)?;
    let HostData::Float32(c) = &outputs[0] else {
        unreachable!("float32 graphs give float32 outputs")
    };
    let largest = a.iter().fold(0f32, |m, v| m.max(v.abs()));
    let error = a.iter().zip(c).map(|(p, q)| (p - q).abs()).fold(0f32, f32::max) / largest;
    println!("superoptimized: {} ({} candidates); largest difference from the reference: {error:.1e} \
              of its largest value", found.candidates[0].description, found.candidates.len());
    assert!(error < 1e-3, "the kernel's output is off");
    Ok(())
}
