//! Every kernel variant (the direct kernels, each tiled GEMM tile, Winograd) of every op that
//! has variants, on random shapes (odd sizes, stride above one, padding, dilation, groups, batch 1,
//! column slices of fully connected layers), in f32 and f16, against the f64 reference with the
//! library's error bounds (`convbench::harness::verify`). Every specialised shader
//! source also validates with naga, without a GPU.

use super::support::{assert_within_bound, gpu, rng, seed, uniform};
use convbench::backend::{Backend, Program};
use convbench::harness::verify;
use convbench::kernels::max_split_k;
use convbench::kernels::registry::GEMM;
use convbench::kernels::shader_set::ShaderSet;
use convbench::kernels::user::KernelSet;
use convbench::kernels::variant::GEMM_TILES;
use convbench::kernels::{Access, ConvGeom, DType, LinearGeom, Op, Variant};
use convbench::model::{Conv2d, Precision};
use rand::Rng;
use rand::rngs::StdRng;
use std::collections::BTreeSet;

#[test]
fn every_gemm_tile_validates_with_naga() {
    let set = ShaderSet::embedded().expect("the embedded includes resolve");
    for tile in GEMM_TILES {
        for precision in [Precision::F32, Precision::F16] {
            let source = set
                .final_source(&GEMM, precision, false, &tile.constants())
                .unwrap_or_else(|| panic!("{tile:?}: a constant is missing from gemm.wgsl"));
            let context = format!("{} {precision}", Variant::Gemm(tile));
            let module = naga::front::wgsl::parse_str(&source)
                .unwrap_or_else(|e| panic!("{context}: {}", e.emit_to_string(&source)));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::SHADER_FLOAT16,
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{context}: {}", e.emit_to_string(&source)));
            let entries: BTreeSet<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
            assert_eq!(entries, GEMM.entries.iter().copied().collect(), "{context}");
            for entry in &module.entry_points {
                // The sum of split-K's partials runs one invocation per element.
                let expected = match entry.name.as_str() {
                    "conv2d_backward_filter_sum_splits" => [256, 1, 1],
                    _ => [tile.invocations(), 1, 1],
                };
                assert_eq!(entry.workgroup_size, expected, "{context}: {}", entry.name);
            }
        }
    }
}

/// Runs every variant of `op` on the same random inputs and checks each against one reference.
fn check_variants(op: &Op, precision: Precision, rng: &mut StdRng) {
    let Some(backend) = gpu() else { return };
    let variants = Variant::candidates_in(op, &KernelSet::default());
    assert!(variants.len() > 1, "{} should have GEMM variants", op.name());
    let mut program = Program::new(precision);
    let ids: Vec<usize> = op
        .binding_lens()
        .iter()
        .zip(op.dtypes())
        .enumerate()
        .map(|(i, (&len, dtype))| program.tensor(format!("binding{i}"), len, dtype))
        .collect();
    for &variant in &variants {
        program.push(op.clone(), ids.clone()).expect("op contract");
        program.ops.last_mut().expect("pushed").variant = variant;
    }
    let context = |variant: Variant| {
        format!(
            "{} {variant} {precision} (seed {}, replay with CONVBENCH_SEED={}); op: {op:?}",
            op.name(),
            seed(),
            seed()
        )
    };
    let mut loaded = backend
        .load(&program)
        .unwrap_or_else(|e| panic!("{}: {e}", context(Variant::Direct)));
    for ((&id, access), &len) in ids.iter().zip(op.bindings()).zip(&op.binding_lens()) {
        if access != Access::Write {
            loaded.write(id, &uniform(rng, len)).expect("write");
        }
    }
    assert!(op.dtypes().iter().all(|&d| d == DType::Float));
    let expected = verify::reference_outputs(loaded.as_mut(), &program, 0).expect("reference");
    for (index, &variant) in variants.iter().enumerate() {
        let check = verify::check_against(loaded.as_mut(), &program, index, &expected)
            .unwrap_or_else(|e| panic!("{}: {e}", context(variant)));
        eprintln!(
            "{} {variant} {precision}: error/bound {:.3}",
            op.name(),
            check.ratio
        );
        assert_within_bound(&check, context(variant));
    }
}

fn check_all(ops: &[Op], rng: &mut StdRng) {
    let Some(backend) = gpu() else { return };
    for op in ops {
        check_variants(op, Precision::F32, rng);
        if backend.supports(Precision::F16) {
            check_variants(op, Precision::F16, rng);
        }
    }
}

fn conv(conv: Conv2d, n: usize, h: usize, w: usize) -> ConvGeom {
    ConvGeom::new(conv, n, h, w).expect("kernel fits")
}

fn random_conv(rng: &mut StdRng) -> ConvGeom {
    loop {
        let groups = rng.random_range(1..=3);
        let c = Conv2d {
            in_channels: groups * rng.random_range(1..=5),
            out_channels: groups * rng.random_range(1..=9),
            kernel: (rng.random_range(1..=5), rng.random_range(1..=5)),
            stride: (rng.random_range(1..=3), rng.random_range(1..=3)),
            padding: (rng.random_range(0..=2), rng.random_range(0..=2)),
            dilation: (rng.random_range(1..=2), rng.random_range(1..=2)),
            groups,
            bias: rng.random_bool(0.7),
        };
        let (h, w) = (rng.random_range(3..=15), rng.random_range(3..=15));
        if c.output_hw(h, w).is_some() {
            return conv(c, rng.random_range(1..=3), h, w);
        }
    }
}

/// Random shapes plus the cases tiles get wrong: several tiles in every direction with
/// partial edges, a reduction longer than many slices, 1x1 stride 1, AlexNet's stride-4 first
/// layer at batch 1, a 3x3 pad-1 layer with odd sizes, and layers wide enough for backward
/// data's implicit GEMM.
fn conv_cases(rng: &mut StdRng) -> Vec<ConvGeom> {
    let mut cases: Vec<ConvGeom> = (0..6).map(|_| random_conv(rng)).collect();
    cases.push(conv(Conv2d::square(19, 70, 3, 1, 1), 2, 13, 11));
    cases.push(conv(Conv2d::square(40, 33, 1, 1, 0), 1, 9, 17));
    cases.push(conv(Conv2d::square(3, 8, 11, 4, 2), 1, 35, 35));
    let mut grouped = Conv2d::square(12, 18, 3, 2, 1);
    grouped.groups = 3;
    grouped.bias = false;
    cases.push(conv(grouped, 3, 10, 9));
    // Wide enough per group for backward data's implicit GEMM at stride 1
    // (IMPLICIT_MIN_CHANNELS): padded 3x3, and a dilated 3x2 in two groups.
    cases.push(conv(Conv2d::square(64, 10, 3, 1, 1), 2, 7, 9));
    let mut dilated = Conv2d::square(128, 6, 3, 1, 2);
    dilated.kernel = (3, 2);
    dilated.dilation = (2, 1);
    dilated.groups = 2;
    cases.push(conv(dilated, 1, 6, 5));
    cases
}

#[test]
fn conv2d_forward_variants() {
    let mut rng = rng(101);
    let ops: Vec<Op> = conv_cases(&mut rng).into_iter().map(Op::Conv2dForward).collect();
    check_all(&ops, &mut rng);
}

#[test]
fn conv2d_backward_data_variants() {
    let mut rng = rng(102);
    let ops: Vec<Op> = conv_cases(&mut rng)
        .into_iter()
        .map(Op::Conv2dBackwardData)
        .collect();
    check_all(&ops, &mut rng);
}

/// Backward data through the column matrix in several chunks of images: each image's column
/// matrix is larger than one chunk's target, so every image is its own GEMM and col2im.
#[test]
fn conv2d_backward_data_in_chunks_of_images() {
    let mut rng = rng(104);
    let mut strided = Conv2d::square(16, 3, 5, 2, 2);
    strided.groups = 1;
    let geometries = [
        conv(Conv2d::square(16, 2, 5, 1, 2), 3, 105, 103),
        conv(strided, 2, 209, 207),
    ];
    for g in &geometries {
        let per_image = 4 * g.conv.in_channels * 25 * g.output.h * g.output.w;
        assert!(
            per_image as u64 > convbench::kernels::COLS_CHUNK_BYTES,
            "{g:?}: {per_image} bytes fit one chunk"
        );
    }
    let ops: Vec<Op> = geometries.into_iter().map(Op::Conv2dBackwardData).collect();
    check_all(&ops, &mut rng);
}

#[test]
fn conv2d_backward_filter_variants() {
    let mut rng = rng(103);
    let mut cases = conv_cases(&mut rng);
    // Reductions over 43,264 positions, longer than `max_split_k` of every tile: split-K, in
    // uneven runs, grouped too.
    let mut grouped = Conv2d::square(4, 6, 3, 1, 1);
    grouped.groups = 2;
    cases.push(conv(grouped, 4, 104, 104));
    cases.push(conv(Conv2d::square(3, 5, 3, 1, 0), 4, 106, 106));
    for g in &cases[cases.len() - 2..] {
        let k = (g.output.n * g.output.h * g.output.w) as u32;
        for tile in GEMM_TILES {
            assert!(k > max_split_k(&tile), "{tile:?} would not split {g:?}");
        }
    }
    let ops: Vec<Op> = cases.into_iter().map(Op::Conv2dBackwardFilter).collect();
    check_all(&ops, &mut rng);
}

/// 3x3 stride-1 convolutions, which Winograd F(2x2, 3x3) implements: padding 0 to 3 (at 3,
/// backward data crops its source), odd sizes (partial 2x2 tiles), batches 1 and 3, groups,
/// reductions of several channel slices, more channels and tiles than one workgroup holds.
fn winograd_cases() -> Vec<ConvGeom> {
    let square = |cin, cout, pad| Conv2d::square(cin, cout, 3, 1, pad);
    let mut cases = vec![
        conv(square(3, 5, 0), 1, 7, 9),
        conv(square(19, 20, 1), 3, 9, 7),
        conv(square(20, 37, 2), 1, 5, 6),
        conv(square(9, 17, 1), 2, 16, 15),
        conv(square(4, 6, 3), 1, 3, 4),
    ];
    let mut no_bias = square(24, 8, 0);
    no_bias.bias = false;
    cases.push(conv(no_bias, 3, 8, 8));
    let mut grouped = square(18, 12, 1);
    grouped.groups = 3;
    cases.push(conv(grouped, 3, 11, 10));
    let mut grouped_uneven_padding = square(10, 34, 0);
    grouped_uneven_padding.groups = 2;
    grouped_uneven_padding.padding = (2, 1);
    cases.push(conv(grouped_uneven_padding, 1, 6, 9));
    cases
}

#[test]
fn winograd_forward_and_backward_data() {
    let mut rng = rng(105);
    let ops: Vec<Op> = winograd_cases()
        .into_iter()
        .flat_map(|g| [Op::Conv2dForward(g), Op::Conv2dBackwardData(g)])
        .collect();
    for op in &ops {
        assert!(
            Variant::candidates_in(op, &KernelSet::default()).contains(&Variant::Winograd),
            "{op:?}"
        );
    }
    check_all(&ops, &mut rng);
}

#[test]
fn linear_variants() {
    let mut rng = rng(104);
    let mut geoms = vec![
        LinearGeom::new(1, 300, 70, true),
        LinearGeom::new(9, 33, 130, false),
    ];
    for _ in 0..4 {
        let mut g = LinearGeom::new(
            rng.random_range(1..=12),
            rng.random_range(1..=300),
            rng.random_range(1..=90),
            rng.random_bool(0.7),
        );
        if rng.random_bool(0.5) {
            // A column slice of a wider layer (how layers too large for one binding run).
            g.y_stride = g.out_features + rng.random_range(1..=20);
            g.y_offset = rng.random_range(0..=g.y_stride - g.out_features);
        }
        geoms.push(g);
    }
    let ops: Vec<Op> = geoms
        .into_iter()
        .flat_map(|g| {
            [
                Op::LinearForward(g),
                Op::LinearBackwardData(g),
                Op::LinearBackwardParams(g),
            ]
        })
        .collect();
    check_all(&ops, &mut rng);
}
