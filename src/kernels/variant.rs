//! Kernel variants: the implementations an op can run with, their stable ids, and the
//! shape-based heuristic that picks one without measuring.
//!
//! Every op has the `direct` kernels (one invocation per output: the correctness baseline).
//! Convolutions and fully connected layers also have tiled GEMM kernels (`shaders/gemm.wgsl`),
//! one variant per [`GemmTile`] of [`GEMM_TILES`]; each tile is a specialisation of the shader
//! (its sizes replace the shader's constants), validated by naga and verified against the
//! reference in tests like every kernel. 3x3 stride-1 convolutions (forward and backward
//! data) also have a fused Winograd F(2x2, 3x3) kernel (`shaders/winograd.wgsl`).

use super::KernelError;
use super::op::Op;
use super::user::{ID_PREFIX, KernelSet, UserKernel, UserRef};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

pub use super::gemm::{
    BLOCK_TILES, GemmTile, MAX_WORKGROUP_BYTES, MAX_WORKGROUP_INVOCATIONS, block_tile_cost,
};

/// Every GEMM tile offered, each a registry variant of `gemm.wgsl`:
/// - `64x64x8_8x8` and `128x128x8_8x8`: 8x8 register blocks, the heuristic's tiles for
///   convolutions (see [`Variant::heuristic`]): each staged value feeds 8 FMAs, against 4 with
///   4x4 blocks. The 8-deep slices also suit short reductions. With Mesa's shader cache
///   disabled, lavapipe (LLVM 15) took about 7 s to compile an entry point of an 8x8-block
///   tile, ten times a 4x4 one's (the cache keeps it for later runs), which is why only two
///   are offered: `64x128` and `128x64` tiles, and 16-deep slices, were within 10% of one of
///   them on AlexNet's layers;
/// - `64x64x8_16x16` and `128x128x8_16x16`: their 16x16-block twins, the heuristic's tiles on
///   CPU adapters ([`CPU_BLOCK_TILES`]): each staged value feeds 16 FMAs.
///   Only CPU drivers want them; a GPU would spill their 256 accumulators per invocation;
/// - `64x64x16_4x4` and `64x64x32_4x4`: 256 invocations of 4x4 blocks, the classic GPU tile;
/// - `32x64x16_8x8`: a small tile of 8x8 blocks;
/// - `32x32x16_4x4` and `32x64x32_4x4`: smaller tiles, more workgroups for small layers;
/// - `64x8x16_4x4`: narrow C (fully connected layers at small batches);
/// - `8x64x32_4x4`: short C (input gradients of layers with few input channels).
///
/// The first nine keep their place: tests and tune caches name tiles by id, never by index,
/// but the order is also the order `tune` lists them in.
pub const GEMM_TILES: [GemmTile; 11] = [
    GemmTile::new(64, 64, 16, 4, 4),
    GemmTile::new(64, 64, 32, 4, 4),
    GemmTile::new(128, 128, 8, 8, 8),
    GemmTile::new(32, 32, 16, 4, 4),
    GemmTile::new(32, 64, 32, 4, 4),
    GemmTile::new(64, 8, 16, 4, 4),
    GemmTile::new(8, 64, 32, 4, 4),
    GemmTile::new(32, 64, 16, 8, 8),
    GemmTile::new(64, 64, 8, 8, 8),
    GemmTile::new(64, 64, 8, 16, 16),
    GemmTile::new(128, 128, 8, 16, 16),
];

/// The implementation an op runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Variant {
    /// One invocation per output element (every op has it; the correctness baseline).
    #[default]
    Direct,
    /// Tiled GEMM (implicit GEMM for convolutions) with this tile.
    Gemm(GemmTile),
    /// Winograd F(2x2, 3x3), one fused dispatch: 3x3 stride-1 undilated convolutions forward
    /// and backward-data only (any padding, any groups). It performs 2.25x fewer
    /// multiplications than the direct convolution, but its FLOP/s are reported as
    /// *effective*: the harness counts an op's FLOPs from the direct convolution whatever the
    /// variant, so its rates compare with the other variants' on the same work.
    Winograd,
    /// A kernel of the user's workspace (see [`super::user`]), id `user:NAME`.
    User(UserRef),
}

impl Variant {
    /// Stable id, e.g. `direct` or `gemm_64x64x16_4x4`.
    pub fn id(&self) -> String {
        match self {
            Variant::Direct => "direct".into(),
            Variant::Gemm(t) => format!("gemm_{}x{}x{}_{}x{}", t.bm, t.bn, t.bk, t.tm, t.tn),
            Variant::Winograd => "winograd_2x2_3x3".into(),
            Variant::User(k) => k.0.id(),
        }
    }

    /// Every variant there is in a workspace with `kernels`: `direct`, then one per GEMM tile,
    /// then Winograd, then the user's kernels by name.
    pub fn all_in(kernels: &KernelSet) -> Vec<Variant> {
        Self::builtin()
            .into_iter()
            .chain(kernels.iter().map(|k| Variant::User(UserRef(k))))
            .collect()
    }

    /// convbench's own variants: `direct`, one per GEMM tile, Winograd.
    pub fn builtin() -> Vec<Variant> {
        std::iter::once(Variant::Direct)
            .chain(GEMM_TILES.iter().map(|&t| Variant::Gemm(t)))
            .chain(std::iter::once(Variant::Winograd))
            .collect()
    }

    /// Whether this is one of the user's kernels.
    pub fn is_user(&self) -> bool {
        matches!(self, Variant::User(_))
    }

    /// Whether `op` has a GEMM form (convolutions and fully connected layers).
    pub fn has_gemm(op: &Op) -> bool {
        matches!(
            op,
            Op::Conv2dForward(_)
                | Op::Conv2dBackwardData(_)
                | Op::Conv2dBackwardFilter(_)
                | Op::LinearForward(_)
                | Op::LinearBackwardData(_)
                | Op::LinearBackwardParams(_)
        )
    }

    /// Whether this variant implements `op`.
    pub fn implements(&self, op: &Op) -> bool {
        match self {
            Variant::Direct => true,
            Variant::Gemm(_) => Self::has_gemm(op),
            Variant::Winograd => match op {
                Op::Conv2dForward(g) | Op::Conv2dBackwardData(g) => super::winograd::applies(g),
                _ => false,
            },
            Variant::User(k) => k.0.implements(op),
        }
    }

    /// Whether this variant implements `op` at `precision`: [`Self::implements`], and for a
    /// user kernel at f16, that it declares `f16 = true`.
    pub fn implements_at(&self, op: &Op, precision: crate::model::Precision) -> bool {
        self.implements(op)
            && match self {
                Variant::User(k) => precision == crate::model::Precision::F32 || k.0.f16,
                _ => true,
            }
    }

    /// The variants that implement `op` in a workspace with `kernels`, `direct` first.
    pub fn candidates_in(op: &Op, kernels: &KernelSet) -> Vec<Variant> {
        Self::all_in(kernels)
            .into_iter()
            .filter(|v| v.implements(op))
            .collect()
    }

    /// The variant with id `id` in a workspace with `kernels`: a built-in one, or `user:NAME`
    /// for the kernel `NAME` of `kernels`. An unknown id is an error listing the known ones.
    pub fn parse_in(id: &str, kernels: &KernelSet) -> Result<Variant> {
        if let Some(name) = id.strip_prefix(ID_PREFIX) {
            return kernels
                .get(name)
                .map(|k| Variant::User(UserRef(k)))
                .ok_or_else(|| {
                    KernelError::UndeclaredUserKernel {
                        name: name.to_string(),
                        declared: kernels.iter().map(UserKernel::id).collect(),
                    }
                    .into()
                });
        }
        let all = Self::all_in(kernels);
        all.iter().find(|v| v.id() == id).copied().ok_or_else(|| {
            KernelError::UnknownVariant {
                id: id.to_string(),
                known: all.iter().map(Variant::id).collect(),
            }
            .into()
        })
    }

    /// The variant to run `op` with on a GPU when nothing was measured, from the shape
    /// `(m, n, k)` of its GEMM (see [`gemm_shape`]); `direct` for ops without a GEMM form.
    /// [`Variant::heuristic_on`] chooses for a CPU adapter too.
    ///
    /// The rules come from `cargo convbench tune` and interleaved runs; the measurements behind
    /// each, and what they were measured on, are in `docs/kernel-variants.md` ("The measurements
    /// behind the heuristic"), and the untuned choice must never be far behind `direct`
    /// (`scripts/heuristic-vs-direct.sh` checks every op of a network against it):
    /// - fewer than [`SMALL_GEMM_MACS`] multiply-adds: `direct`; a tile's fixed cost is not
    ///   repaid.
    /// - `n <= 2` (fully connected layers at batch 1 or 2): `direct`. Every tile computes at
    ///   least four columns, so most of its work would be padding.
    /// - `k <= 8` (weight gradients of fully connected layers up to batch 8, whose reduction
    ///   runs over the batch): `direct`. Such a GEMM is bound by writing its `m x n` outputs,
    ///   which `direct` does as fast as a tile, and a tile's slice is at least 8 deep, so at
    ///   smaller batches most of its work would be padding.
    /// - `n <= 16`: the narrow `64x8` tile (fully connected layers at small batches).
    /// - `m <= 8` (input gradients of layers with few input channels): the `8x64` tile.
    /// - otherwise the 8x8-block tile of [`BLOCK_TILES`] that [`block_tile_cost`] rates
    ///   cheapest: larger tiles stage fewer values per FMA, smaller ones waste less on partial
    ///   edges and give more workgroups to share. Short reductions too: since the tiles'
    ///   accumulators are indexed by constants only, an 8x8 block costs little per tile
    ///   (measured in docs/kernel-variants.md).
    /// - whatever the tile, `direct` when the GEMM fits in one tile and fills less than a
    ///   quarter of it (LeNet's first weight gradient, 20 x 25): one workgroup would do all
    ///   the work, mostly on padding, while `direct` spreads it over every core.
    ///
    /// Winograd is never picked (`tune` still tries it where it applies): it was slower than or
    /// level with the GEMM tiles on every 3x3 stride-1 layer measured.
    pub fn heuristic(op: &Op) -> Variant {
        Self::heuristic_on(op, DeviceClass::Gpu)
    }

    /// [`Variant::heuristic`] for a `device`: on a CPU adapter (lavapipe, SwiftShader, WARP)
    /// each 8x8-block tile becomes its 16x16-block twin of [`CPU_BLOCK_TILES`], the same
    /// `bm x bn` tile with four times the FMAs per value read from workgroup memory. A CPU
    /// driver loads workgroup memory one SIMD lane at a time, so those loads, not the FMAs,
    /// set a block's time; a GPU would spill 256 accumulators per invocation out of its
    /// registers (measured in docs/kernel-variants.md, "16x16 blocks on CPU adapters").
    ///
    /// Only reductions of at most [`CPU_TWIN_MAX_K`] get the twins, and convolution weight
    /// gradients (split-K): llvmpipe ends every loop of an invocation once all of them together
    /// have iterated [`CPU_LOOP_LIMIT`] times, silently, and a 16x16-block invocation loops
    /// more per slice of the reduction than an 8x8 one.
    ///
    /// Where the GPU rules say `direct` for an op whose direct kernel would loop past that
    /// limit ([`Variant::fits`]: a weight gradient reducing over more positions than that in
    /// one invocation), the cheapest 8x8-block tile runs it instead, split-K.
    pub fn heuristic_on(op: &Op, device: DeviceClass) -> Variant {
        let gpu = match Self::heuristic_gpu(op) {
            Variant::Direct if !Variant::Direct.fits(op, device) => match gemm_shape(op) {
                Some((m, n, _)) => Variant::Gemm(super::gemm::cheapest_block_tile(m, n)),
                None => Variant::Direct,
            },
            other => other,
        };
        // A weight gradient's reduction is split-K past `gemm::max_split_k`, at any length.
        let short = matches!(op, Op::Conv2dBackwardFilter(_))
            || gemm_shape(op).is_some_and(|(_, _, k)| k <= CPU_TWIN_MAX_K);
        match (gpu, device) {
            (Variant::Gemm(tile), DeviceClass::Cpu) if short && BLOCK_TILES.contains(&tile) => {
                Variant::Gemm(GemmTile {
                    tm: 16,
                    tn: 16,
                    ..tile
                })
            }
            (variant, _) => variant,
        }
    }

    fn heuristic_gpu(op: &Op) -> Variant {
        let Some((m, n, k)) = gemm_shape(op) else {
            return Variant::Direct;
        };
        if m.saturating_mul(n).saturating_mul(k) < SMALL_GEMM_MACS {
            return Variant::Direct;
        }
        let tile = match (m, n, k) {
            (_, 0..=2, _) | (_, _, 0..=8) => return Variant::Direct,
            (_, 3..=16, _) => GemmTile::new(64, 8, 16, 4, 4),
            (0..=8, _, _) => GemmTile::new(8, 64, 32, 4, 4),
            _ => super::gemm::cheapest_block_tile(m, n),
        };
        if m.div_ceil(tile.bm as usize) * n.div_ceil(tile.bn as usize) == 1
            && 4 * m * n < (tile.bm * tile.bn) as usize
        {
            return Variant::Direct;
        }
        Variant::Gemm(tile)
    }
}

impl Variant {
    /// Whether this variant computes `op` correctly on a `device` as far as convbench knows
    /// its limits: on a CPU adapter, not when one invocation of it would loop more than
    /// [`CPU_LOOP_LIMIT`] times. Only `direct`'s convolution weight gradient can (one
    /// invocation per weight, looping over every output position of every image); the GEMM
    /// tiles split such reductions ([`super::max_split_k`]). `direct`'s fully connected
    /// weight gradient loops over the batch, which can exceed the limit too; every other direct
    /// kernel loops over a layer's window or channels.
    pub fn fits(&self, op: &Op, device: DeviceClass) -> bool {
        match (self, op, device) {
            (Variant::Direct, Op::Conv2dBackwardFilter(g), DeviceClass::Cpu) => {
                direct_filter_loop_steps(g) <= CPU_LOOP_LIMIT
            }
            (Variant::Direct, Op::LinearBackwardParams(g), DeviceClass::Cpu) => {
                g.batch as u64 <= CPU_LOOP_LIMIT
            }
            _ => true,
        }
    }
}

/// Loop iterations llvmpipe (lavapipe) lets one invocation take, all of its loops together:
/// past them every loop ends, silently, and the kernel computes a partial result
/// (`LP_MAX_TGSI_LOOP_ITERATIONS` in Mesa's gallivm; measured in docs/kernel-variants.md,
/// "llvmpipe's loop limit").
pub const CPU_LOOP_LIMIT: u64 = 65_535;

/// Iterations of `conv2d_backward_filter`'s loops (`conv2d.wgsl`) in one invocation: one per
/// image, per output row of each image and per output position.
fn direct_filter_loop_steps(g: &super::op::ConvGeom) -> u64 {
    let (n, oh, ow) = (g.output.n as u64, g.output.h as u64, g.output.w as u64);
    n * (1 + oh * (1 + ow))
}

/// What kind of device [`Variant::heuristic_on`] chooses for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceClass {
    /// A GPU (or a device of unknown kind): the rules of [`Variant::heuristic`].
    #[default]
    Gpu,
    /// A CPU adapter (`device_type` `cpu`: lavapipe, SwiftShader, WARP).
    Cpu,
}

impl DeviceClass {
    /// The class of the adapter `fingerprint` names.
    pub fn of(fingerprint: &crate::adapter::AdapterFingerprint) -> Self {
        if fingerprint.device_type == "cpu" {
            DeviceClass::Cpu
        } else {
            DeviceClass::Gpu
        }
    }
}

/// The 16x16-block twins of [`BLOCK_TILES`], in the same order: what
/// [`Variant::heuristic_on`] runs on CPU adapters.
pub const CPU_BLOCK_TILES: [GemmTile; 2] = [
    GemmTile::new(64, 64, 8, 16, 16),
    GemmTile::new(128, 128, 8, 16, 16),
];

/// The longest reduction [`Variant::heuristic_on`] runs in a 16x16-block tile on a CPU adapter:
/// 3,200 slices of 8. On lavapipe, `64x64x8_16x16` computed a weight gradient reducing over
/// 160x160 positions correctly and one over 180x180 wrongly (its loops cut short by llvmpipe's
/// limit of 65,535 iterations per invocation, all loops together); `128x128x8_16x16` was right
/// at 224x224 (docs/kernel-variants.md, "llvmpipe's loop limit").
pub const CPU_TWIN_MAX_K: usize = 25_600;

/// GEMMs of fewer multiply-adds than this run `direct` (see [`Variant::heuristic`]): a tile's
/// fixed cost (staging through workgroup memory, barriers, 16-64 accumulators per invocation)
/// is not repaid on so little work, and a small GEMM rarely fills its tiles.
pub const SMALL_GEMM_MACS: usize = 1 << 20;

/// `(m, n, k)` of the GEMM that implements `op` (per convolution group): C is `m x n`, the
/// reduction `k` long; for backward data through the column matrix, the GEMM of one chunk of
/// images (see `gemm::cols_chunk`). `None` for ops without a GEMM form.
pub fn gemm_shape(op: &Op) -> Option<(usize, usize, usize)> {
    match op {
        Op::Conv2dForward(g) => {
            let c = &g.conv;
            let k = c.in_channels / c.groups * c.kernel.0 * c.kernel.1;
            Some((c.out_channels / c.groups, g.output.len() / c.out_channels, k))
        }
        Op::Conv2dBackwardData(g) => {
            let c = &g.conv;
            let taps = c.kernel.0 * c.kernel.1;
            Some(match super::gemm::cols_chunk(g) {
                // The column matrix's GEMM, per chunk of images.
                Some(images) => (
                    c.in_channels / c.groups * taps,
                    images * g.output.h * g.output.w,
                    c.out_channels / c.groups,
                ),
                None => (
                    c.in_channels / c.groups,
                    g.input.len() / c.in_channels,
                    c.out_channels / c.groups * taps,
                ),
            })
        }
        Op::Conv2dBackwardFilter(g) => {
            let c = &g.conv;
            let n = c.in_channels / c.groups * c.kernel.0 * c.kernel.1;
            Some((c.out_channels / c.groups, n, g.output.len() / c.out_channels))
        }
        Op::LinearForward(g) => Some((g.out_features, g.batch, g.in_features)),
        Op::LinearBackwardData(g) => Some((g.in_features, g.batch, g.out_features)),
        Op::LinearBackwardParams(g) => Some((g.out_features, g.in_features, g.batch)),
        _ => None,
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id())
    }
}

/// A built-in variant's id. A user kernel's id (`user:NAME`) is an error: only a workspace's
/// kernels resolve it ([`Variant::parse_in`]).
impl std::str::FromStr for Variant {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        if s.starts_with(ID_PREFIX) {
            return Err(KernelError::UserIdAlone { id: s.to_string() }.into());
        }
        Variant::parse_in(s, &KernelSet::default())
    }
}

impl From<Variant> for String {
    fn from(v: Variant) -> String {
        v.id()
    }
}

impl TryFrom<String> for Variant {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::gemm::cheapest_block_tile;

    #[test]
    fn every_tile_is_valid_and_ids_round_trip() {
        for tile in GEMM_TILES {
            assert!(tile.is_valid(), "{tile:?} breaks the shader's constraints");
        }
        for v in Variant::builtin() {
            assert_eq!(v.id().parse::<Variant>().expect("known id"), v);
        }
        assert!("gemm_1x1x1_1x1".parse::<Variant>().is_err());
    }

    #[test]
    fn a_user_id_is_looked_up_in_the_set_and_never_parsed_alone() {
        let error = Variant::parse_in("user:x", &KernelSet::default()).expect_err("no kernels");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(matches!(
            &error,
            Error::Kernel(e) if matches!(&**e, KernelError::UndeclaredUserKernel { name, declared } if name == "x" && declared.is_empty())
        ));
        let message = error.to_string();
        assert!(
            message.contains("no kernel `x`")
                && message.contains("it declares none")
                && message.contains("[package.metadata.convbench.kernels.x]"),
            "{message}"
        );
        let error = "user:x".parse::<Variant>().expect_err("a user id alone");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(matches!(
            &error,
            Error::Kernel(e) if matches!(&**e, KernelError::UserIdAlone { id } if id == "user:x")
        ));
        assert!(
            error.to_string().contains("`user:x` names a user kernel"),
            "{error}"
        );
        assert_eq!(
            Variant::parse_in("direct", &KernelSet::default()).ok(),
            Some(Variant::Direct)
        );
    }

    #[test]
    fn the_heuristic_picks_offered_tiles() {
        use crate::kernels::LinearGeom;
        let offered = Variant::builtin();
        for (batch, in_features, out_features) in
            [(1, 9216, 4096), (8, 4096, 4096), (64, 4096, 1000), (2, 5, 3)]
        {
            let g = LinearGeom::new(batch, in_features, out_features, true);
            for op in [
                Op::LinearForward(g),
                Op::LinearBackwardData(g),
                Op::LinearBackwardParams(g),
            ] {
                let v = Variant::heuristic(&op);
                assert!(offered.contains(&v) && v.implements(&op), "{v} for {op:?}");
            }
        }
        let gemv = Op::LinearForward(LinearGeom::new(1, 9216, 4096, true));
        assert_eq!(Variant::heuristic(&gemv), Variant::Direct);
    }

    /// The cost model's choices on the shapes it was checked against on lavapipe (AlexNet at
    /// batch 8, interleaved rounds): conv2's implicit input gradient (64 rows) and forward (192
    /// rows) run best in 64-row tiles, conv4's forward (256 x 1352) in `128x128`; a layer of
    /// one 128x128 tile (L4 at batch 1, 128 x 100) is split into four.
    #[test]
    fn the_block_tile_cost_ranks_tiles_as_measured() {
        let pick = |m: usize, n: usize| {
            let tile = cheapest_block_tile(m, n);
            (tile.bm, tile.bn)
        };
        assert_eq!(pick(64, 8 * 27 * 27), (64, 64));
        assert_eq!(pick(192, 8 * 27 * 27), (64, 64));
        assert_eq!(pick(256, 8 * 13 * 13), (128, 128));
        assert_eq!(pick(384, 8 * 13 * 13), (128, 128));
        assert_eq!(pick(128, 10 * 10), (64, 64));
        for tile in BLOCK_TILES {
            assert!(GEMM_TILES.contains(&tile), "{tile:?} is not offered");
        }
    }

    /// On a CPU adapter the heuristic runs each 8x8-block tile's 16x16-block twin, and
    /// changes nothing else.
    #[test]
    fn direct_weight_gradients_past_the_loop_limit_do_not_fit_cpu_adapters() {
        use crate::kernels::{ConvGeom, LinearGeom};
        use crate::model::Conv2d;
        let filter = |n: usize, hw: usize| {
            Op::Conv2dBackwardFilter(ConvGeom::new(Conv2d::square(3, 64, 3, 1, 1), n, hw, hw).expect("fits"))
        };
        // Measured on lavapipe: right at 224x224 (50,401 iterations), wrong at 320x320 (102,721).
        assert!(Variant::Direct.fits(&filter(1, 224), DeviceClass::Cpu));
        assert!(!Variant::Direct.fits(&filter(1, 320), DeviceClass::Cpu));
        assert!(!Variant::Direct.fits(&filter(2, 224), DeviceClass::Cpu));
        assert!(Variant::Direct.fits(&filter(2, 224), DeviceClass::Gpu));
        let tile = Variant::Gemm(BLOCK_TILES[0]);
        assert!(tile.fits(&filter(64, 224), DeviceClass::Cpu), "split-K");
        let fc = |batch| Op::LinearBackwardParams(LinearGeom::new(batch, 10, 10, true));
        assert!(Variant::Direct.fits(&fc(65_535), DeviceClass::Cpu));
        assert!(!Variant::Direct.fits(&fc(65_536), DeviceClass::Cpu));
        // LeNet's first weight gradient, 20 x 25, fills a quarter of one tile: `direct` on a
        // GPU, but at batch 128 it would loop 76,928 times per invocation.
        let lenet = |n| {
            Op::Conv2dBackwardFilter(ConvGeom::new(Conv2d::square(1, 20, 5, 1, 0), n, 28, 28).expect("fits"))
        };
        assert_eq!(Variant::heuristic(&lenet(128)), Variant::Direct);
        assert_eq!(
            Variant::heuristic_on(&lenet(1), DeviceClass::Cpu),
            Variant::Direct
        );
        assert_eq!(
            Variant::heuristic_on(&lenet(128), DeviceClass::Cpu),
            Variant::Gemm(CPU_BLOCK_TILES[0])
        );
    }

    #[test]
    fn cpu_adapters_get_the_16x16_twins() {
        use crate::kernels::{ConvGeom, LinearGeom};
        use crate::model::Conv2d;
        for (gpu, cpu) in BLOCK_TILES.iter().zip(CPU_BLOCK_TILES) {
            assert_eq!(
                (gpu.bm, gpu.bn, gpu.bk, gpu.tm, gpu.tn),
                (cpu.bm, cpu.bn, cpu.bk, 8, 8)
            );
            assert_eq!((cpu.tm, cpu.tn), (16, 16));
            assert!(GEMM_TILES.contains(&cpu), "{cpu:?} is not offered");
        }
        let geom = |conv: Conv2d, n: usize, hw: usize| ConvGeom::new(conv, n, hw, hw).expect("fits");
        let conv3 = geom(Conv2d::square(192, 384, 3, 1, 1), 8, 13);
        let lenet = geom(Conv2d::square(1, 20, 5, 1, 0), 1, 28);
        let ops = [
            Op::Conv2dForward(conv3),
            Op::Conv2dBackwardData(conv3),
            Op::Conv2dBackwardFilter(conv3),
            Op::Conv2dBackwardFilter(lenet),
            Op::LinearForward(LinearGeom::new(8, 4096, 1000, true)),
            Op::LinearBackwardParams(LinearGeom::new(8, 4096, 1000, true)),
        ];
        // A fully connected layer reducing over 32,768 inputs: too long for the twins' loops on
        // lavapipe. VGG's first weight gradient at batch 1 (224x224 positions) is split-K.
        let long = Op::LinearForward(LinearGeom::new(64, 32_768, 1024, true));
        assert!(matches!(Variant::heuristic(&long), Variant::Gemm(t) if BLOCK_TILES.contains(&t)));
        assert_eq!(
            Variant::heuristic_on(&long, DeviceClass::Cpu),
            Variant::heuristic(&long)
        );
        let vgg = Op::Conv2dBackwardFilter(geom(Conv2d::square(3, 64, 3, 1, 1), 1, 224));
        assert!(matches!(
            Variant::heuristic_on(&vgg, DeviceClass::Cpu),
            Variant::Gemm(t) if CPU_BLOCK_TILES.contains(&t)
        ));
        for op in ops {
            let gpu = Variant::heuristic(&op);
            let cpu = Variant::heuristic_on(&op, DeviceClass::Cpu);
            assert_eq!(Variant::heuristic_on(&op, DeviceClass::Gpu), gpu);
            match gpu {
                Variant::Gemm(tile)
                    if BLOCK_TILES.contains(&tile)
                        && (matches!(op, Op::Conv2dBackwardFilter(_))
                            || gemm_shape(&op).is_some_and(|s| s.2 <= CPU_TWIN_MAX_K)) =>
                {
                    assert!(
                        matches!(cpu, Variant::Gemm(t) if CPU_BLOCK_TILES.contains(&t)),
                        "{op:?}"
                    );
                }
                _ => assert_eq!(cpu, gpu, "{op:?}"),
            }
        }
    }

    /// Short reductions and long ones go to an 8x8-block tile, as measured (see
    /// [`Variant::heuristic`]).
    #[test]
    fn reductions_short_and_long_run_in_8x8_blocks() {
        use crate::kernels::ConvGeom;
        use crate::model::Conv2d;
        let geom = |conv: Conv2d, n: usize, hw: usize| ConvGeom::new(conv, n, hw, hw).expect("fits");
        let is_block = |v: Variant| matches!(v, Variant::Gemm(t) if BLOCK_TILES.contains(&t));
        // L4's and L5's weight gradients at batch 1 (k = 100, 169), and at batch 4 and 2.
        let l4 = Conv2d::square(128, 128, 7, 1, 0);
        let l5 = Conv2d::square(384, 384, 3, 1, 1);
        let filter = |conv, n, hw| Variant::heuristic(&Op::Conv2dBackwardFilter(geom(conv, n, hw)));
        assert!(is_block(filter(l4, 1, 16)));
        assert!(is_block(filter(l5, 1, 13)));
        assert!(is_block(filter(l4, 4, 16)));
        assert!(is_block(filter(l5, 2, 13)));
        // A 1x1 layer of 64 input channels (k = 64); a 3x3 layer of 16 input channels, whose
        // input gradient is the column matrix's GEMM (k = 32 output channels) and whose weight
        // gradient at batch 8 reduces over 6,272 positions.
        let wide = geom(Conv2d::square(64, 256, 1, 1, 0), 1, 56);
        assert_eq!(
            Variant::heuristic(&Op::Conv2dForward(wide)),
            Variant::Gemm(GemmTile::new(128, 128, 8, 8, 8))
        );
        let narrow = geom(Conv2d::square(16, 32, 3, 1, 1), 8, 28);
        assert!(is_block(Variant::heuristic(&Op::Conv2dBackwardData(narrow))));
        assert!(is_block(Variant::heuristic(&Op::Conv2dBackwardFilter(narrow))));
        // AlexNet's conv3 at batch 8: long reductions, 8x8 blocks in every phase.
        let conv3 = geom(Conv2d::square(192, 384, 3, 1, 1), 8, 13);
        for op in [
            Op::Conv2dForward(conv3),
            Op::Conv2dBackwardData(conv3),
            Op::Conv2dBackwardFilter(conv3),
        ] {
            assert!(is_block(Variant::heuristic(&op)), "{op:?}");
        }
    }

    /// LeNet's fully connected weight gradient at batch 1 (an outer product, k = 1) once went to
    /// `gemm_128x128x8_8x8` and ran far behind `direct`; small GEMMs, reductions of 8 or less
    /// and GEMMs that fill a quarter of one tile now run `direct`, while AlexNet's layers keep
    /// their tiles.
    #[test]
    fn small_and_padded_gemms_run_direct() {
        use crate::kernels::{ConvGeom, LinearGeom};
        use crate::model::Conv2d;
        for batch in [1, 8] {
            let fc = LinearGeom::new(batch, 800, 10, true);
            for op in [
                Op::LinearForward(fc),
                Op::LinearBackwardData(fc),
                Op::LinearBackwardParams(fc),
            ] {
                assert_eq!(Variant::heuristic(&op), Variant::Direct, "{op:?}");
            }
            let conv1 = ConvGeom::new(Conv2d::square(1, 20, 5, 1, 0), batch, 28, 28).expect("fits");
            assert_eq!(
                Variant::heuristic(&Op::Conv2dBackwardFilter(conv1)),
                Variant::Direct
            );
        }
        let outer = Op::LinearBackwardParams(LinearGeom::new(1, 9216, 4096, true));
        assert_eq!(Variant::heuristic(&outer), Variant::Direct);
        // At batch 8 too: AlexNet's fc8 weight gradient took 1.66x `direct`'s time in
        // `gemm_128x128x8_8x8` (docs/tuned-vs-direct.md), fc6's 1.24x.
        for batch in [2, 8] {
            let fc6 = Op::LinearBackwardParams(LinearGeom::new(batch, 9216, 4096, true));
            assert_eq!(Variant::heuristic(&fc6), Variant::Direct, "batch {batch}");
        }
        let fc6 = Op::LinearBackwardParams(LinearGeom::new(16, 9216, 4096, true));
        assert!(matches!(Variant::heuristic(&fc6), Variant::Gemm(_)));
        let conv2 = ConvGeom::new(Conv2d::square(20, 50, 5, 1, 0), 1, 12, 12).expect("fits");
        for op in [
            Op::Conv2dForward(conv2),
            Op::Conv2dBackwardData(conv2),
            Op::Conv2dBackwardFilter(conv2),
        ] {
            assert!(matches!(Variant::heuristic(&op), Variant::Gemm(_)), "{op:?}");
        }
    }

    #[test]
    fn winograd_implements_only_3x3_stride_1_undilated_convolutions() {
        use crate::kernels::ConvGeom;
        use crate::model::Conv2d;
        let geom = |conv: Conv2d| ConvGeom::new(conv, 2, 12, 11).expect("kernel fits");
        let ops = |conv: Conv2d| {
            let g = geom(conv);
            [
                Op::Conv2dForward(g),
                Op::Conv2dBackwardData(g),
                Op::Conv2dBackwardFilter(g),
            ]
        };
        let mut grouped = Conv2d::square(6, 9, 3, 1, 2);
        grouped.groups = 3;
        for conv in [
            Conv2d::square(4, 8, 3, 1, 1),
            Conv2d::square(4, 8, 3, 1, 0),
            grouped,
        ] {
            let [forward, backward_data, backward_filter] = ops(conv);
            assert!(Variant::Winograd.implements(&forward), "{conv:?}");
            assert!(Variant::Winograd.implements(&backward_data), "{conv:?}");
            assert!(!Variant::Winograd.implements(&backward_filter), "{conv:?}");
            assert!(Variant::candidates_in(&forward, &KernelSet::default()).contains(&Variant::Winograd));
        }
        let mut dilated = Conv2d::square(4, 8, 3, 1, 2);
        dilated.dilation = (2, 2);
        let mut wide = Conv2d::square(4, 8, 3, 1, 1);
        wide.kernel = (3, 5);
        for conv in [
            Conv2d::square(4, 8, 5, 1, 2),
            Conv2d::square(4, 8, 3, 2, 1),
            dilated,
            wide,
        ] {
            for op in ops(conv) {
                assert!(!Variant::Winograd.implements(&op), "{conv:?}");
                assert!(!Variant::candidates_in(&op, &KernelSet::default()).contains(&Variant::Winograd));
                assert!(crate::kernels::plan(&op, Variant::Winograd).is_err());
            }
        }
        let relu = Op::ReluForward { len: 10 };
        assert!(!Variant::Winograd.implements(&relu));
        assert!(crate::kernels::plan(&relu, Variant::Winograd).is_err());
        assert_eq!(
            "winograd_2x2_3x3".parse::<Variant>().expect("known id"),
            Variant::Winograd
        );
    }

    #[test]
    fn invalid_tiles_are_rejected() {
        assert!(
            !GemmTile::new(64, 64, 16, 3, 4).is_valid(),
            "tm not a multiple of 4"
        );
        assert!(!GemmTile::new(256, 256, 16, 4, 4).is_valid(), "4096 invocations");
        assert!(
            !GemmTile::new(96, 96, 16, 12, 12).is_valid(),
            "gemm.wgsl writes out blocks of 4, 8 or 16 rows and columns"
        );
        assert!(
            !GemmTile::new(128, 128, 8, 32, 32).is_valid(),
            "blocks above 16x16 are not written out in gemm.wgsl"
        );
        assert!(GemmTile::new(128, 128, 8, 16, 16).is_valid());
        assert!(
            !GemmTile::new(64, 64, 64, 4, 4).is_valid(),
            "32 KiB of workgroup memory"
        );
    }
}
