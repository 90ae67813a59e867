//! Layer-wise suites: single convolutions timed alone, as convnet-benchmarks and DeepBench do.

use super::layer::{Conv2d, Shape};
use super::network::{LayerKind, layer_forward_flops};
use crate::Error;
use serde::{Deserialize, Serialize};

/// One convolution of a suite, timed on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteEntry {
    /// Name unique within the suite, e.g. `L1` or `vision_3x224x224_k64_7x7_s2_p3`.
    pub name: String,
    /// The convolution.
    pub conv: Conv2d,
    /// Input image `(channels, height, width)`.
    pub input: (usize, usize, usize),
    /// Batch size the suite's source benchmarks it at.
    pub default_batch: usize,
}

impl SuiteEntry {
    /// The input activation at batch `batch`.
    pub const fn input_shape(&self, batch: usize) -> Shape {
        Shape::new(batch, self.input.0, self.input.1, self.input.2)
    }

    /// The output activation at batch `batch`, or `None` when the kernel does not fit the input
    /// (never for the built-in suites).
    pub fn output_shape(&self, batch: usize) -> Option<Shape> {
        let (h, w) = self.conv.output_hw(self.input.1, self.input.2)?;
        Some(Shape::new(batch, self.conv.out_channels, h, w))
    }

    /// Forward FLOPs at batch `batch`: `2 x` multiply-adds of the direct convolution
    /// (0 when the kernel does not fit the input).
    pub fn forward_flops(&self, batch: usize) -> u64 {
        self.output_shape(batch).map_or(0, |output| {
            layer_forward_flops(&LayerKind::Conv2d(self.conv), &self.input_shape(batch), &output)
        })
    }
}

/// A named list of convolutions benchmarked one by one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suite {
    /// Name used on the command line, e.g. `layers`.
    pub name: String,
    /// One line on what it is and where its shapes come from.
    pub description: String,
    /// The convolutions, in the source's order.
    pub entries: Vec<SuiteEntry>,
}

/// Builds one suite.
type Definition = fn() -> Suite;

/// Every suite, in the order `list` prints them.
const SUITES: [(&str, Definition); 2] = [("layers", layers), ("deepbench", deepbench)];

/// Names of every suite, in the order of [`suites`].
pub fn suite_names() -> Vec<&'static str> {
    SUITES.iter().map(|(name, _)| *name).collect()
}

/// Every suite.
pub fn suites() -> Vec<Suite> {
    SUITES.iter().map(|(_, definition)| definition()).collect()
}

/// The suite called `name` (as in [`suite_names`]).
pub fn suite(name: &str) -> Result<Suite, Error> {
    SUITES
        .iter()
        .find(|(suite, _)| *suite == name)
        .map(|(_, definition)| definition())
        .ok_or_else(|| {
            super::ModelError::UnknownSuite {
                name: name.to_string(),
                known: suite_names(),
            }
            .into()
        })
}

/// convnet-benchmarks' layer-wise configurations: unpadded, stride-1 convolutions at batch 128.
fn layers() -> Suite {
    let entry = |name: &str, (c, h, w): (usize, usize, usize), out: usize, k: usize| SuiteEntry {
        name: name.into(),
        conv: Conv2d::square(c, out, k, 1, 0),
        input: (c, h, w),
        default_batch: 128,
    };
    Suite {
        name: "layers".into(),
        description: "The five layer-wise convolutions of soumith/convnet-benchmarks \
                      (torch7/layerwise_benchmarks), stride 1, no padding, batch 128"
            .into(),
        entries: vec![
            entry("L1", (3, 128, 128), 96, 11),
            entry("L2", (64, 64, 64), 128, 9),
            entry("L3", (128, 32, 32), 128, 9),
            entry("L4", (128, 16, 16), 128, 7),
            entry("L5", (384, 13, 13), 384, 3),
        ],
    }
}

/// One row of DeepBench's `training_set` (code/kernels/conv_problems.h), copied in its own
/// order: `w, h, c, n, k, filter_w, filter_h, pad_w, pad_h, stride_w, stride_h`.
type DeepBenchRow = [usize; 11];

/// A selection of Baidu DeepBench's training convolutions: each application, and the kernel
/// shapes that stress different algorithms (1x1, 3x3 padded, 5x5, strided, a 7x7/2 first layer,
/// the non-square speech filters). DeepBench lists some shapes at several batch sizes; the
/// default batch here is the one listed for most of them (16; 8 for face recognition).
fn deepbench() -> Suite {
    const ROWS: [(&str, DeepBenchRow); 12] = [
        // DeepSpeech: spectrogram (161 frequencies x 700 frames) convolutions.
        ("speech", [700, 161, 1, 16, 32, 20, 5, 0, 0, 2, 2]),
        ("speech", [341, 79, 32, 16, 32, 10, 5, 0, 0, 2, 2]),
        ("speech", [350, 80, 64, 16, 128, 5, 5, 1, 1, 2, 2]),
        // Face recognition.
        ("face", [108, 108, 3, 8, 64, 3, 3, 1, 1, 2, 2]),
        ("face", [27, 27, 128, 8, 128, 3, 3, 1, 1, 1, 1]),
        // Vision: VGG, GoogLeNet and ResNet layers.
        ("vision", [224, 224, 3, 16, 64, 3, 3, 1, 1, 1, 1]),
        ("vision", [28, 28, 256, 16, 512, 3, 3, 1, 1, 1, 1]),
        ("vision", [224, 224, 3, 16, 64, 7, 7, 3, 3, 2, 2]),
        ("vision", [28, 28, 192, 16, 64, 1, 1, 0, 0, 1, 1]),
        ("vision", [14, 14, 512, 16, 48, 5, 5, 2, 2, 1, 1]),
        ("vision", [56, 56, 256, 16, 128, 1, 1, 0, 0, 2, 2]),
        ("vision", [14, 14, 256, 16, 256, 3, 3, 1, 1, 1, 1]),
    ];
    Suite {
        name: "deepbench".into(),
        description: "Representative training convolutions of Baidu DeepBench \
                      (code/kernels/conv_problems.h): speech, face recognition and vision"
            .into(),
        entries: ROWS
            .iter()
            .map(|&(application, row)| deepbench_entry(application, row))
            .collect(),
    }
}

fn deepbench_entry(application: &str, row: DeepBenchRow) -> SuiteEntry {
    let [
        w,
        h,
        c,
        n,
        k,
        filter_w,
        filter_h,
        pad_w,
        pad_h,
        stride_w,
        stride_h,
    ] = row;
    let conv = Conv2d {
        kernel: (filter_h, filter_w),
        stride: (stride_h, stride_w),
        padding: (pad_h, pad_w),
        ..Conv2d::square(c, k, 1, 1, 0)
    };
    SuiteEntry {
        name: entry_name(application, (c, h, w), &conv),
        conv,
        input: (c, h, w),
        default_batch: n,
    }
}

/// `<application>_<c>x<h>x<w>_k<out>_<kh>x<kw>[_s<stride>][_p<padding>]`, e.g.
/// `vision_3x224x224_k64_7x7_s2_p3`; a stride or padding that differs between the axes is
/// written `<vertical>x<horizontal>`.
fn entry_name(application: &str, (c, h, w): (usize, usize, usize), conv: &Conv2d) -> String {
    let pair = |(vertical, horizontal): (usize, usize)| {
        if vertical == horizontal {
            vertical.to_string()
        } else {
            format!("{vertical}x{horizontal}")
        }
    };
    let mut name = format!(
        "{application}_{c}x{h}x{w}_k{}_{}x{}",
        conv.out_channels, conv.kernel.0, conv.kernel.1
    );
    if conv.stride != (1, 1) {
        name += &format!("_s{}", pair(conv.stride));
    }
    if conv.padding != (0, 0) {
        name += &format!("_p{}", pair(conv.padding));
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_entry_fits_and_names_are_unique() {
        let all = suites();
        assert_eq!(
            all.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            suite_names()
        );
        for suite in all {
            assert!(!suite.entries.is_empty(), "{}", suite.name);
            let mut seen = HashSet::new();
            for entry in &suite.entries {
                assert!(
                    seen.insert(&entry.name),
                    "{}: duplicate {}",
                    suite.name,
                    entry.name
                );
                assert_eq!(entry.conv.in_channels, entry.input.0, "{}", entry.name);
                assert!(entry.output_shape(2).is_some(), "{} does not fit", entry.name);
                assert!(entry.forward_flops(entry.default_batch) > 0, "{}", entry.name);
            }
        }
    }

    #[test]
    fn layers_are_those_of_convnet_benchmarks() {
        let layers = suite("layers").expect("known suite");
        let l1 = &layers.entries[0];
        assert_eq!(l1.name, "L1");
        assert_eq!(l1.default_batch, 128);
        // 3x128x128 -> 96x118x118, 3 * 11 * 11 multiply-adds per output.
        assert_eq!(l1.output_shape(128), Some(Shape::new(128, 96, 118, 118)));
        assert_eq!(l1.forward_flops(128), 2 * 128 * 96 * 118 * 118 * 3 * 11 * 11);
        let l5 = &layers.entries[4];
        assert_eq!(l5.output_shape(1), Some(Shape::new(1, 384, 11, 11)));
        assert!(
            layers
                .entries
                .iter()
                .all(|e| e.conv.stride == (1, 1) && e.conv.padding == (0, 0))
        );
    }

    #[test]
    fn deepbench_covers_the_kernel_shapes_that_matter() {
        let deepbench = suite("deepbench").expect("known suite");
        let convs: Vec<&Conv2d> = deepbench.entries.iter().map(|e| &e.conv).collect();
        assert!((8..=12).contains(&convs.len()));
        assert!(convs.iter().any(|c| c.kernel == (1, 1)));
        assert!(convs.iter().any(|c| c.kernel == (3, 3) && c.padding == (1, 1)));
        assert!(convs.iter().any(|c| c.stride == (2, 2)));
        assert!(
            convs
                .iter()
                .any(|c| c.kernel == (7, 7) && c.stride == (2, 2) && c.padding == (3, 3))
        );
        for application in ["speech", "face", "vision"] {
            assert!(deepbench.entries.iter().any(|e| e.name.starts_with(application)));
        }
    }

    #[test]
    fn deepbench_rows_keep_their_axes() {
        // DeepBench's first speech row: 700 frames (w) x 161 frequencies (h), a 20 (w) x 5 (h)
        // filter with stride 2 gives 341 x 79, the input of its second row.
        let first = &suite("deepbench").expect("known suite").entries[0];
        assert_eq!(first.name, "speech_1x161x700_k32_5x20_s2");
        assert_eq!(first.default_batch, 16);
        assert_eq!(first.output_shape(16), Some(Shape::new(16, 32, 79, 341)));
    }

    #[test]
    fn unknown_suite_lists_the_known_ones() {
        let err = suite("layer").expect_err("unknown suite");
        assert!(
            matches!(&err, Error::Model(e) if matches!(**e, super::super::ModelError::UnknownSuite { .. })),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "unknown suite `layer`; known suites: layers, deepbench"
        );
    }

    #[test]
    fn suites_round_trip_through_json() {
        for suite in suites() {
            let json = serde_json::to_string(&suite).expect("serialise");
            let back: Suite = serde_json::from_str(&json).expect("deserialise");
            assert_eq!(back, suite);
        }
    }
}
