//! The safe crate against the library: the six benchmark graphs, reference runs checked against
//! naive Rust code, a µGraph and equivalence, threads, files and errors.

use std::path::PathBuf;

use yirage::{Accumulator, DType, HostData, KernelGraph, Tensor, ThreadblockGraph};

fn input(g: &mut KernelGraph, dims: &[i64]) -> Tensor {
    g.new_input(dims, DType::Float32).unwrap()
}

/// The six benchmark graphs (benchmarks/README.md), at b = 1.
fn benchmark(name: &str) -> KernelGraph {
    let mut g = KernelGraph::new().unwrap();
    let out = match name {
        "gqa" | "qknorm" => {
            let mut q = input(&mut g, &[2, 256, 64]);
            let k = input(&mut g, &[2, 64, 4096]);
            let v = input(&mut g, &[2, 4096, 64]);
            if name == "qknorm" {
                q = g.rms_norm(q, &[64], 0.0, None).unwrap();
            }
            let a = g.matmul(q, k).unwrap();
            let e = g.exp(a).unwrap();
            let s = g.reduction(e, 2).unwrap();
            let p = g.div(e, s).unwrap();
            g.matmul(p, v).unwrap()
        }
        "rmsnorm_linear" => {
            let x = input(&mut g, &[2, 4096]);
            let w = input(&mut g, &[4096, 6144]);
            let n = g.rms_norm(x, &[4096], 0.0, None).unwrap();
            g.matmul(n, w).unwrap()
        }
        "lora" => {
            let x = input(&mut g, &[16, 256]);
            let w = input(&mut g, &[256, 4096]);
            let a = input(&mut g, &[256, 16]);
            let b = input(&mut g, &[16, 4096]);
            let xw = g.matmul(x, w).unwrap();
            let xa = g.matmul(x, a).unwrap();
            let xab = g.matmul(xa, b).unwrap();
            g.add(xw, xab).unwrap()
        }
        "gated_mlp" => {
            let x = input(&mut g, &[8, 4096]);
            let w1 = input(&mut g, &[4096, 4096]);
            let w2 = input(&mut g, &[4096, 4096]);
            let h1 = g.matmul(x, w1).unwrap();
            let h2 = g.matmul(x, w2).unwrap();
            let act = g.silu(h1).unwrap();
            g.mul(act, h2).unwrap()
        }
        "ntrans" => {
            let h = input(&mut g, &[8, 4096]);
            let x = input(&mut g, &[8, 4096]);
            let alpha = input(&mut g, &[8, 4096]);
            let hn = g.rms_norm(h, &[4096], 0.0, None).unwrap();
            let d = g.sub(hn, x).unwrap();
            let s = g.mul(alpha, d).unwrap();
            let z = g.add(x, s).unwrap();
            g.rms_norm(z, &[4096], 0.0, None).unwrap()
        }
        _ => panic!("unknown benchmark {name}"),
    };
    g.mark_output(out).unwrap();
    g
}

#[test]
fn builds_the_six_benchmark_graphs() {
    let expected: [(&str, Vec<i64>); 6] = [
        ("gqa", vec![2, 256, 64]), ("qknorm", vec![2, 256, 64]), ("rmsnorm_linear", vec![2, 6144]),
        ("lora", vec![16, 4096]), ("gated_mlp", vec![8, 4096]), ("ntrans", vec![8, 4096]),
    ];
    for (name, dims) in expected {
        let g = benchmark(name);
        assert_eq!(g.outputs().unwrap()[0].dims().unwrap(), dims, "{name}");
        assert_eq!(g.outputs().unwrap()[0].dtype().unwrap(), DType::Float32);
    }
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) % 2001) as f32
        / 1000.0 - 1.0).collect()
}

#[test]
fn reference_run_matches_naive_code() {
    // O = silu(X·W1) ⊙ (X·W2) at a small size.
    let (m, k, n) = (4usize, 32usize, 16usize);
    let mut g = KernelGraph::new().unwrap();
    let x = input(&mut g, &[m as i64, k as i64]);
    let w1 = input(&mut g, &[k as i64, n as i64]);
    let w2 = input(&mut g, &[k as i64, n as i64]);
    let h1 = g.matmul(x, w1).unwrap();
    let h2 = g.matmul(x, w2).unwrap();
    let act = g.silu(h1).unwrap();
    let o = g.mul(act, h2).unwrap();
    g.mark_output(o).unwrap();
    let (xv, w1v, w2v) = (values(m * k, 1), values(k * n, 2), values(k * n, 3));
    let out = g.run_reference(&[HostData::Float32(xv.clone()), HostData::Float32(w1v.clone()),
                                 HostData::Float32(w2v.clone())]).unwrap();
    let HostData::Float32(got) = &out[0] else { panic!("float32 expected") };
    for i in 0..m {
        for j in 0..n {
            let (mut a, mut b) = (0f64, 0f64);
            for p in 0..k {
                a += xv[i * k + p] as f64 * w1v[p * n + j] as f64;
                b += xv[i * k + p] as f64 * w2v[p * n + j] as f64;
            }
            let want = a / (1.0 + (-a).exp()) * b;
            assert!((got[i * n + j] as f64 - want).abs() <= 1e-5 * (1.0 + want.abs()));
        }
    }
}

#[test]
fn views_reshape_permute_transpose() {
    let mut g = KernelGraph::new().unwrap();
    let x = input(&mut g, &[4, 6]);
    let r = g.reshape(x, &[4, 2, -1]).unwrap();
    let heads = g.permute(r, &[1, 0, 2]).unwrap(); // [T, H·D] as [H, T, D]
    assert_eq!(heads.dims().unwrap(), vec![2, 4, 3]);
    g.mark_output(heads).unwrap();
    let t = g.transpose(x, 0, -1).unwrap();
    g.mark_output(t).unwrap();
    let xv = values(24, 5);
    let out = g.run_reference(&[HostData::Float32(xv.clone())]).unwrap();
    let (HostData::Float32(h), HostData::Float32(tr)) = (&out[0], &out[1]) else { panic!("float32") };
    for i in 0..4 {
        for j in 0..6 {
            assert_eq!(h[(j / 3) * 12 + i * 3 + j % 3], xv[i * 6 + j]);
            assert_eq!(tr[j * 4 + i], xv[i * 6 + j]);
        }
    }
    assert!(g.permute(x, &[1, 1]).unwrap_err().message
        .contains("dim 1 appears twice: not a permutation"));
    assert!(g.reshape(x, &[5, 5]).unwrap_err().message.contains("it holds more than 24 elements"));
}

#[test]
fn output_written_as_another_dtype() {
    let mut g = KernelGraph::new().unwrap();
    let x = g.new_input(&[4, 64], DType::Float16).unwrap();
    let mut tb = ThreadblockGraph::new([1, 1, 1], 128, 4).unwrap();
    let tx = tb.new_input(x, [-1, -1, -1], 1).unwrap();
    let acc = tb.accumulate(tx, Accumulator::Sum).unwrap();
    tb.new_output_as(acc, [-1, -1, -1], -1, DType::Float32).unwrap();
    let outs = g.customized(&tb).unwrap();
    assert_eq!(outs[0].dtype().unwrap(), DType::Float32);
}

/// RMSNorm fused into the matmul as one customized operator.
fn fused_rmsnorm_linear() -> (KernelGraph, KernelGraph) {
    let mut fused = KernelGraph::new().unwrap();
    let x = input(&mut fused, &[4, 256]);
    let w = input(&mut fused, &[256, 128]);
    let mut tb = ThreadblockGraph::new([2, 1, 1], 128, 4).unwrap();
    let tx = tb.new_input(x, [-1, -1, -1], 1).unwrap();
    let tw = tb.new_input(w, [1, -1, -1], 0).unwrap();
    let xw = tb.matmul(tx, tw).unwrap();
    let acc = tb.accumulate(xw, Accumulator::Sum).unwrap();
    let rms = tb.accumulate(tx, Accumulator::Rms).unwrap();
    let o = tb.div(acc, rms).unwrap();
    tb.new_output(o, [1, -1, -1], -1).unwrap();
    let outs = fused.customized(&tb).unwrap();
    fused.mark_output(outs[0]).unwrap();
    let mut plain = KernelGraph::new().unwrap();
    let px = input(&mut plain, &[4, 256]);
    let pw = input(&mut plain, &[256, 128]);
    let n = plain.rms_norm(px, &[256], 0.0, None).unwrap();
    let po = plain.matmul(n, pw).unwrap();
    plain.mark_output(po).unwrap();
    (fused, plain)
}

#[test]
fn ugraph_is_equivalent_and_runs_the_same() {
    let (fused, plain) = fused_rmsnorm_linear();
    let r = fused.equivalent(&plain, 3).unwrap();
    assert!(r.equivalent, "{}", r.reason);
    assert_eq!(r.trials, 3);
    let inputs = [HostData::Float32(values(4 * 256, 4)), HostData::Float32(values(256 * 128, 5))];
    // Graphs are Sync: two threads run them at once.
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| fused.run_reference(&inputs).unwrap());
        let b = s.spawn(|| plain.run_reference(&inputs).unwrap());
        (a.join().unwrap(), b.join().unwrap())
    });
    let (HostData::Float32(a), HostData::Float32(b)) = (&a[0], &b[0]) else { panic!() };
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()));
    }
}

#[test]
fn files_and_bytes() {
    let (fused, _) = fused_rmsnorm_linear();
    let bytes = fused.to_bytes().unwrap();
    assert_eq!(KernelGraph::from_bytes(&bytes).unwrap().to_bytes().unwrap(), bytes);
    let path = std::env::temp_dir().join(format!("yirage_rust_{}.json", std::process::id()));
    fused.save(&path).unwrap();
    assert_eq!(KernelGraph::load(&path).unwrap().to_bytes().unwrap(), bytes);
    std::fs::remove_file(&path).unwrap();
    let examples = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../examples"));
    let ntrans = KernelGraph::load(&examples.join("graphs/ntrans.json")).unwrap();
    assert_eq!(ntrans.inputs().unwrap().len(), 3);
    // The picture of a fused graph draws its µGraph as a cluster with its maps.
    let dot = KernelGraph::load(&examples.join("graphs/rmsnorm_linear_fused.json")).unwrap().to_dot().unwrap();
    assert!(dot.starts_with("digraph") && dot.contains("subgraph cluster_") && dot.contains("imap"), "{dot}");
    let err = KernelGraph::from_bytes(&bytes[..bytes.len() / 2]).err().unwrap();
    assert_eq!(err.status, "CORRUPT_DATA");
    assert_eq!(KernelGraph::load(&examples.join("missing.yrg")).err().unwrap().status, "NOT_FOUND");
}

#[test]
fn errors() {
    let mut g = KernelGraph::new().unwrap();
    let a = g.new_input(&[16, 4096], DType::Float16).unwrap();
    let b = g.new_input(&[406, 4096], DType::Float16).unwrap();
    let err = g.matmul(a, b).unwrap_err();
    assert_eq!(err.status, "INVALID_ARGUMENT");
    assert_eq!(err.message,
               "matmul: A is [16,4096], B is [406,4096]: inner dimensions 4096 and 406 differ");
    assert!(g.new_input(&[1, 1, 1, 1, 1, 1, 1], DType::Float32).unwrap_err().message
        .contains("rank 7 is outside 1..6"));
    let mut other = KernelGraph::new().unwrap();
    assert!(other.exp(a).unwrap_err().message.contains("belongs to another graph"));
    let e = g.exp(a).unwrap();
    g.mark_output(e).unwrap();
    let short = g.run_reference(&[HostData::Float16Bits(vec![0; 3]), HostData::Float16Bits(vec![])]);
    assert!(short.unwrap_err().message.contains("input 0 has 3 elements"));
    drop(g);
    // A tensor of a dropped graph is refused, not dereferenced.
    assert!(other.exp(a).unwrap_err().message.contains("not a live yirage_tensor"));
    assert!(a.dims().is_err());
    assert!(!yirage::version().is_empty());
}
