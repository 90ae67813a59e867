//! The user's own workloads as data: networks in the configuration (`[[model]]`, the same layer
//! IR as the zoo) and shape lists (`--shapes FILE.csv`, DeepBench-style rows, each a single
//! convolution timed alone).
//!
//! ```toml
//! [[workspace.metadata.convbench.model]]
//! name = "tiny"
//! input = [1, 28, 28]
//! layers = [
//!   { name = "conv1", kind = { op = "conv2d", in_channels = 1, out_channels = 8, kernel = [5, 5], stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1, bias = true } },
//!   { name = "relu1", kind = { op = "relu" } },
//!   { name = "fc", kind = { op = "linear", in_features = 4608, out_features = 10, bias = true } },
//! ]
//! ```
//!
//! A layer without `inputs` reads the layer before it (node `0` is the network input, layer `i`
//! is node `i + 1`); `description` is optional. Every error names the network and the layer.

use super::error::{ModelError, NetworkProblem, ShapeRowProblem};
use super::layer::Conv2d;
use super::network::{MAX_BATCH, Network};
use super::suites::{Suite, SuiteEntry};
use crate::Result;
use std::collections::HashSet;
use std::path::Path;

/// Checks a network read from data and fills in the defaults (a layer with no `inputs` reads
/// the layer before it): names unique and not the zoo's, every input earlier than its layer,
/// shapes that chain at batch 1, and a last layer that gives one score per class.
pub fn network_from_data(mut net: Network) -> Result<Network, ModelError> {
    let model = net.name.clone();
    let bad = |problem: NetworkProblem| ModelError::InvalidNetwork {
        model: model.clone(),
        problem,
    };
    if net.name.is_empty() {
        return Err(ModelError::Unnamed);
    }
    if !net
        .name
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
    {
        // It is a part of benchmark ids (`model/stage/bN/...`), of `--model` lists (split at
        // commas) and of file names.
        return Err(ModelError::BadName {
            model: net.name.clone(),
        });
    }
    // `LeNet` beside the zoo's `lenet` would run as a different network under a name a reader
    // takes for the zoo's: refused whatever the case.
    if let Some(zoo) = super::model_names()
        .into_iter()
        .find(|zoo| zoo.eq_ignore_ascii_case(&net.name))
    {
        return Err(ModelError::ZooName {
            model: net.name.clone(),
            zoo: zoo.to_string(),
        });
    }
    if net.layers.is_empty() {
        return Err(bad(NetworkProblem::NoLayers));
    }
    let mut names = HashSet::new();
    for (i, layer) in net.layers.iter_mut().enumerate() {
        if !names.insert(layer.name.clone()) {
            return Err(bad(NetworkProblem::DuplicateLayer {
                layer: layer.name.clone(),
            }));
        }
        if layer.inputs.is_empty() {
            layer.inputs = vec![i];
        }
        if let Some(&node) = layer.inputs.iter().find(|&&node| node > i) {
            return Err(bad(NetworkProblem::ReadsAhead {
                layer: layer.name.clone(),
                node,
            }));
        }
    }
    let shapes = net.shapes(1).map_err(|e| bad(NetworkProblem::Shape(e)))?;
    let last = shapes.last().copied().unwrap_or(shapes[0]);
    if (last.h, last.w) != (1, 1) || last.c < 2 {
        return Err(bad(NetworkProblem::NoClassScores { last }));
    }
    Ok(net)
}

pub use super::error::SHAPE_COLUMNS;

/// A suite of single convolutions from a DeepBench-style CSV: rows `N,C,H,W,K,R,S,stride,pad`
/// (batch, input channels, height, width, output channels, kernel height, kernel width, stride,
/// padding), an optional header line, `#` comments. The suite is named after the file's stem; each
/// row's name says its shape, and its batch `N` is the row's default batch.
pub fn shape_list(path: &Path) -> Result<Suite> {
    let text = crate::fs::read_text(path, crate::fs::MAX_TEXT_FILE_BYTES)?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "shapes".into());
    let mut entries: Vec<SuiteEntry> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |problem: ShapeRowProblem| ModelError::InvalidShapeRow {
            path: path.to_path_buf(),
            line: line_no,
            problem,
        };
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let numbers: std::result::Result<Vec<usize>, _> = fields.iter().map(|f| f.parse::<usize>()).collect();
        let Ok(v) = numbers else {
            // The header names its columns; a first row of negative or other bad numbers is
            // an error, not a header to skip.
            if entries.is_empty()
                && fields
                    .first()
                    .is_some_and(|f| f.starts_with(|ch: char| ch.is_ascii_alphabetic()))
            {
                continue;
            }
            return Err(at(ShapeRowProblem::NotNumbers {
                row: line.to_string(),
            })
            .into());
        };
        let [n, c, h, w, k, r, s, stride, pad] = v[..] else {
            return Err(at(ShapeRowProblem::ColumnCount { columns: v.len() }).into());
        };
        if n == 0 || c == 0 || h == 0 || w == 0 || k == 0 || r == 0 || s == 0 || stride == 0 {
            return Err(at(ShapeRowProblem::ZeroSize).into());
        }
        if n > MAX_BATCH {
            return Err(at(ShapeRowProblem::BatchTooLarge { batch: n }).into());
        }
        // Kernels take every size as a 32-bit integer.
        if let Some(&size) = v.iter().find(|&&value| value > u32::MAX as usize) {
            return Err(at(ShapeRowProblem::SizeTooLarge { size }).into());
        }
        let conv = Conv2d {
            in_channels: c,
            out_channels: k,
            kernel: (r, s),
            stride: (stride, stride),
            padding: (pad, pad),
            dilation: (1, 1),
            groups: 1,
            bias: false,
        };
        if conv.output_hw(h, w).is_none() {
            return Err(at(ShapeRowProblem::KernelDoesNotFit {
                kernel: (r, s),
                input: (h, w),
                padding: pad,
            })
            .into());
        }
        let entry = SuiteEntry {
            name: format!("{c}x{h}x{w}_k{k}_{r}x{s}_s{stride}_p{pad}"),
            conv,
            input: (c, h, w),
            default_batch: n,
        };
        if entries
            .iter()
            .any(|e| e.name == entry.name && e.default_batch == n)
        {
            return Err(at(ShapeRowProblem::RepeatedRow {
                name: entry.name,
                batch: n,
            })
            .into());
        }
        entries.push(entry);
    }
    if entries.is_empty() {
        return Err(ModelError::NoShapeRows {
            path: path.to_path_buf(),
        }
        .into());
    }
    // The same shape at two batches: the batch joins the name so benchmark ids stay unique.
    let repeated: Vec<String> = entries
        .iter()
        .filter(|e| entries.iter().filter(|o| o.name == e.name).count() > 1)
        .map(|e| e.name.clone())
        .collect();
    for entry in &mut entries {
        if repeated.contains(&entry.name) {
            entry.name = format!("{}_n{}", entry.name, entry.default_batch);
        }
    }
    Ok(Suite {
        description: format!("single convolutions listed in {}", path.display()),
        name,
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Shape;

    fn tiny() -> Network {
        let toml = r#"
            name = "tiny"
            input = [1, 12, 12]
            layers = [
              { name = "conv1", kind = { op = "conv2d", in_channels = 1, out_channels = 4, kernel = [5, 5], stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1, bias = true } },
              { name = "relu1", kind = { op = "relu" } },
              { name = "fc", kind = { op = "linear", in_features = 256, out_features = 10, bias = true } },
            ]
        "#;
        toml::from_str(toml).expect("the documented form parses")
    }

    /// The documented example (docs/user-kernels.md, linked from the README), verbatim.
    #[test]
    fn the_documented_network_is_valid() {
        let readme = include_str!("../../docs/user-kernels.md");
        let start = readme
            .find("[[workspace.metadata.convbench.model]]\nname = \"tiny\"\ninput")
            .expect("docs/user-kernels.md shows a network");
        let end = start + readme[start..].find("```").expect("its code block ends");
        #[derive(serde::Deserialize)]
        struct Manifest {
            workspace: Workspace,
        }
        #[derive(serde::Deserialize)]
        struct Workspace {
            metadata: Metadata,
        }
        #[derive(serde::Deserialize)]
        struct Metadata {
            convbench: crate::config::Config,
        }
        let manifest: Manifest = toml::from_str(&readme[start..end]).expect("the documented TOML parses");
        let net = manifest
            .workspace
            .metadata
            .convbench
            .model
            .into_iter()
            .next()
            .expect("one model");
        let net = network_from_data(net).expect("the documented network is valid");
        assert_eq!(net.classes().expect("shapes"), 10);
    }

    /// `scripts/op-networks.toml`, the ops `scripts/heuristic-vs-direct.sh` times alone: every
    /// network there is valid, and each of its convolutions and fully connected layers but the
    /// `head` classifiers is the layer of that name in each zoo network it stands for, with the
    /// same op, the same input (shape for a convolution, number of features for a fully
    /// connected layer) and an input gradient exactly where the zoo's layer has one
    /// (docs/tuned-vs-direct.md relies on this).
    #[test]
    fn the_op_networks_are_ops_of_the_zoo() {
        use crate::model::LayerKind;
        let text = include_str!("../../scripts/op-networks.toml");
        let config: crate::config::Config = toml::from_str(text).expect("scripts/op-networks.toml parses");
        let stands_for: &[(&str, &[&str])] = &[
            ("vgg-fc", &["vgg-a", "vgg16"]),
            ("overfeat-accurate-fc", &["overfeat-accurate"]),
            ("resnet-fc", &["resnet50", "resnet152"]),
            ("densenet161-fc", &["densenet161"]),
            ("vgg-conv1_1", &["vgg-a", "vgg16"]),
            ("overfeat-accurate-conv1", &["overfeat-accurate"]),
            ("vgg16-extra", &["vgg16"]),
            ("densenet161-block3-conv2", &["densenet161"]),
            ("densenet161-block4-conv2", &["densenet161"]),
        ];
        let names: Vec<&str> = config.model.iter().map(|net| net.name.as_str()).collect();
        let expected: Vec<&str> = stands_for.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names, expected,
            "a network added to op-networks.toml needs its zoo networks here"
        );
        // A network's convolutions and fully connected layers by name: the op, its input (a
        // fully connected layer reads the flattened features), and whether it computes an
        // input gradient (it does unless it reads the network's input).
        type Op = (LayerKind, (usize, usize, usize), bool);
        let ops = |net: &Network| -> Vec<(String, Op)> {
            let shapes = net.shapes(1).expect("shapes at batch 1");
            net.layers
                .iter()
                .filter_map(|layer| {
                    let x = shapes[layer.inputs[0]];
                    let input = match layer.kind {
                        LayerKind::Conv2d(_) => (x.c, x.h, x.w),
                        LayerKind::Linear(_) => (x.c * x.h * x.w, 1, 1),
                        _ => return None,
                    };
                    Some((
                        layer.name.clone(),
                        (layer.kind.clone(), input, layer.inputs[0] != 0),
                    ))
                })
                .collect()
        };
        for (net, (name, zoo_names)) in config.model.into_iter().zip(stands_for) {
            let net = network_from_data(net).unwrap_or_else(|e| panic!("{name}: {e}"));
            let timed: Vec<_> = ops(&net)
                .into_iter()
                .filter(|(layer, _)| layer != "head")
                .collect();
            assert!(!timed.is_empty(), "{name} holds no op of the zoo");
            for zoo_name in *zoo_names {
                let zoo_ops = ops(&crate::model::network(zoo_name).expect("a zoo network"));
                for (layer, op) in &timed {
                    let zoo_op = zoo_ops.iter().find(|(zoo_layer, _)| zoo_layer == layer);
                    assert_eq!(
                        zoo_op.map(|(_, op)| op),
                        Some(op),
                        "{name}'s {layer} against {zoo_name}'s"
                    );
                }
            }
        }
    }

    #[test]
    fn a_data_network_chains_and_gets_default_inputs() {
        let net = network_from_data(tiny()).expect("valid");
        assert_eq!(net.layers[1].inputs, [1]);
        assert_eq!(net.classes().expect("shapes"), 10);
    }

    #[test]
    fn bad_networks_name_the_layer() {
        let mut wrong = tiny();
        if let super::super::LayerKind::Linear(l) = &mut wrong.layers[2].kind {
            l.in_features = 100;
        }
        let error = network_from_data(wrong).expect_err("256 features").to_string();
        assert!(
            error.contains("tiny") && error.contains("fc") && error.contains("256"),
            "{error}"
        );
        let mut late = tiny();
        late.layers[0].inputs = vec![2];
        let error = network_from_data(late).expect_err("reads ahead").to_string();
        assert!(error.contains("conv1") && error.contains("node 2"), "{error}");
        let mut zoo = tiny();
        zoo.name = "alexnet".into();
        assert!(network_from_data(zoo).is_err());
        for name in [
            "layers/L5",
            "a,b",
            "my net",
            "..",
            "*",
            "a\nb",
            "\u{1b}[31mred",
            "ĸërnel",
        ] {
            let mut odd = tiny();
            odd.name = name.into();
            let error = network_from_data(odd).expect_err(name);
            assert!(matches!(error, ModelError::BadName { .. }), "{name}: {error}");
            assert!(error.to_string().contains("ASCII letters"), "{error}");
        }
        let mut plain = tiny();
        plain.name = "My_net-2".into();
        assert!(network_from_data(plain).is_ok());
        // A one-input layer given two inputs would read only the first, and the other's layers
        // would silently leave the backward pass.
        let mut forked = tiny();
        forked.layers[1].inputs = vec![0, 1];
        let error = network_from_data(forked)
            .expect_err("relu of two inputs")
            .to_string();
        assert!(
            error.contains("relu1") && error.contains("takes one input, not 2"),
            "{error}"
        );
    }

    #[test]
    fn an_lrn_window_of_no_channels_is_refused() {
        let mut net = tiny();
        let lrn = |size| {
            super::super::LayerKind::Lrn(crate::model::Lrn {
                size,
                alpha: 1e-4,
                beta: 0.75,
                k: 1.0,
            })
        };
        net.layers[1].kind = lrn(0);
        let error = network_from_data(net.clone()).expect_err("size 0").to_string();
        assert!(
            error.contains("tiny") && error.contains("relu1") && error.contains("size of 1 or more"),
            "{error}"
        );
        net.layers[1].kind = lrn(1);
        network_from_data(net).expect("a window of one channel");
    }

    /// The numbers that crashed or misled before they were checked: each is an input error
    /// naming the model, the layer and the field.
    #[test]
    fn zero_sizes_are_refused_naming_the_model_the_layer_and_the_field() {
        use crate::model::{LayerKind, Pool2d};
        let conv = |change: fn(&mut crate::model::Conv2d)| {
            let mut net = tiny();
            if let LayerKind::Conv2d(c) = &mut net.layers[0].kind {
                change(c);
            }
            net
        };
        let pool = |pool: Pool2d| {
            let mut net = tiny();
            net.layers[1].kind = LayerKind::Pool(pool);
            net
        };
        let mut empty_input = tiny();
        empty_input.input = (1, 0, 0);
        let mut no_features = tiny();
        no_features.input = (1, 0, 0);
        no_features.layers.remove(0);
        if let LayerKind::Linear(l) = &mut no_features.layers[1].kind {
            l.in_features = 0;
        }
        let cases = [
            (
                conv(|c| c.out_channels = 0),
                "conv1: `out_channels` is 0; it must be at least 1",
            ),
            (conv(|c| c.in_channels = 0), "conv1: `in_channels` is 0"),
            (
                conv(|c| c.kernel = (0, 0)),
                "conv1: `kernel` is [0, 0]; it must be at least 1",
            ),
            (conv(|c| c.stride = (0, 1)), "conv1: `stride` is [0, 1]"),
            (conv(|c| c.dilation = (1, 0)), "conv1: `dilation` is [1, 0]"),
            (conv(|c| c.groups = 0), "conv1: `groups` is 0"),
            (
                conv(|c| c.out_channels = u32::MAX as usize + 1),
                "`out_channels` is 4294967296; it must be at most",
            ),
            (pool(Pool2d::avg(0, 1, 0, false)), "relu1: `kernel` is [0, 0]"),
            (pool(Pool2d::max(0, 1, 0, false)), "relu1: `kernel` is [0, 0]"),
            (pool(Pool2d::max(2, 0, 0, false)), "relu1: `stride` is [0, 0]"),
            (
                pool(Pool2d::max(2, 1, 2, false)),
                "a pool's padding is at most half its kernel",
            ),
            (empty_input, "`input` is [1, 0, 0]"),
            (no_features, "`input` is [1, 0, 0]"),
        ];
        for (net, needle) in cases {
            let error = network_from_data(net).expect_err(needle);
            assert_eq!(error.kind(), crate::ErrorKind::InvalidInput, "{error}");
            let message = error.to_string();
            assert!(
                message.contains("model `tiny`") && message.contains(needle),
                "{message}"
            );
        }
        let mut huge = tiny();
        if let LayerKind::Conv2d(c) = &mut huge.layers[0].kind {
            c.out_channels = 1 << 30;
        }
        let message = network_from_data(huge).expect_err("too large").to_string();
        assert!(
            message.contains("conv1: its output is") && message.contains("4294967295 elements"),
            "{message}"
        );
    }

    #[test]
    fn a_user_kernel_filter_of_zero_or_huge_sizes_is_refused_naming_the_key() {
        use crate::kernels::user::Only;
        let only = |change: fn(&mut Only)| {
            let mut only = Only::default();
            change(&mut only);
            only.check()
        };
        assert_eq!(
            only(|o| o.groups = Some(0)).expect_err("groups 0"),
            "`only.groups` is 0; it must be at least 1"
        );
        assert!(
            only(|o| o.kernel = Some([0, 3]))
                .expect_err("kernel 0")
                .contains("`only.kernel` is [0, 3]")
        );
        assert!(
            only(|o| o.stride = Some([1, 0]))
                .expect_err("stride 0")
                .contains("`only.stride`")
        );
        assert!(
            only(|o| o.dilation = Some([0, 0]))
                .expect_err("dilation 0")
                .contains("`only.dilation`")
        );
        let huge = only(|o| o.kernel = Some([u32::MAX as usize, 3])).expect_err("huge kernel");
        assert!(huge.contains("too large to verify"), "{huge}");
        only(|o| o.kernel = Some([3, 3])).expect("a 3x3 kernel");
        only(|_| {}).expect("no constraint");
    }

    #[test]
    fn shape_lists_read_deepbench_rows_and_reject_bad_ones() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("mine.csv");
        std::fs::write(
            &path,
            "N,C,H,W,K,R,S,stride,pad\n16,3,224,224,64,7,7,2,3\n# comment\n8,64,56,56,64,3,3,1,1\n",
        )
        .expect("write");
        let suite = shape_list(&path).expect("two rows");
        assert_eq!(suite.name, "mine");
        assert_eq!(suite.entries.len(), 2);
        assert_eq!(suite.entries[0].name, "3x224x224_k64_7x7_s2_p3");
        assert_eq!(suite.entries[0].default_batch, 16);
        assert_eq!(suite.entries[1].conv.padding, (1, 1));
        for (text, needle) in [
            ("1,3,8,8,4,3,3,1\n", ":1: 8 columns"),
            ("1,3,8,8,4,9,9,1,0\n", ":1: a 9x9 kernel"),
            ("N,C\n1,3,x,8,4,3,3,1,0\n", ":2:"),
            ("", "no rows"),
        ] {
            std::fs::write(&path, text).expect("write");
            let error = shape_list(&path).expect_err(text).to_string();
            assert!(error.contains(needle), "{text}: {error}");
        }
    }

    /// The numbers of a small valid network (see [`degenerate_network`]) with up to three of them
    /// replaced by a zero or an extreme (`u32::MAX`, one past it, the largest TOML integer), as
    /// a user could type them.
    fn degenerate_numbers() -> impl proptest::strategy::Strategy<Value = Vec<usize>> {
        use proptest::prelude::*;
        let extreme = prop_oneof![
            3 => Just(0usize),
            1 => Just(u32::MAX as usize),
            1 => Just(u32::MAX as usize + 1),
            1 => Just(i64::MAX as usize),
        ];
        (
            proptest::collection::vec(1usize..=3, 21),
            4usize..=8,
            4usize..=8,
            proptest::collection::vec((0usize..21, extreme), 0..=3),
        )
            .prop_map(|(mut numbers, height, width, replaced)| {
                numbers[1] = height;
                numbers[2] = width;
                numbers[3] = numbers[0]; // in_channels = the input's channels
                numbers[13] = 1; // groups
                numbers[16] = 0; // pool padding
                for (index, value) in replaced {
                    numbers[index] = value;
                }
                numbers
            })
    }

    /// A conv, a pool and a linear layer built from `numbers` (21 of them); the linear layer's
    /// `in_features` matches what reaches it when `match_features` is set and the shapes allow.
    fn degenerate_network(numbers: &[usize], max_pool: bool, match_features: bool) -> Network {
        use crate::model::{Conv2d, LayerKind, Linear, Pool2d};
        let n = |i: usize| numbers[i];
        let conv = Conv2d {
            in_channels: n(3),
            out_channels: n(4),
            kernel: (n(5), n(6)),
            stride: (n(7), n(8)),
            padding: (n(9), n(10)),
            dilation: (n(11), n(12)),
            groups: n(13),
            bias: true,
        };
        let pool = if max_pool { Pool2d::max } else { Pool2d::avg }(n(14), n(15), n(16), false);
        let layer = |name: &str, kind| super::super::Layer {
            name: name.into(),
            kind,
            inputs: Vec::new(),
        };
        let mut net = Network {
            name: "degenerate".into(),
            description: String::new(),
            input: (n(0), n(1), n(2)),
            layers: vec![
                layer("conv1", LayerKind::Conv2d(conv)),
                layer("pool1", LayerKind::Pool(pool)),
                layer(
                    "fc",
                    LayerKind::Linear(Linear {
                        in_features: n(17),
                        out_features: n(18).saturating_mul(2),
                        bias: n(20) % 2 == 0,
                    }),
                ),
            ],
        };
        if match_features {
            let mut front = net.clone();
            front.layers.truncate(2);
            for (i, layer) in front.layers.iter_mut().enumerate() {
                layer.inputs = vec![i];
            }
            if let Ok(shapes) = front.shapes(1)
                && let LayerKind::Linear(linear) = &mut net.layers[2].kind
            {
                linear.in_features = shapes[2].per_image();
            }
        }
        net
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Whatever numbers a `[[model]]` holds, checking it gives a network or an input error
        /// (exit 2), never a panic; and a network it accepts plans, runs and verifies on the CPU
        /// reference (at tiny sizes, to stay fast).
        #[test]
        fn degenerate_numbers_are_input_errors_or_verify_on_the_cpu(
            numbers in degenerate_numbers(),
            max_pool: bool,
            match_features: bool,
        ) {
            let net = degenerate_network(&numbers, max_pool, match_features);
            let shown = format!("{net:?}");
            match network_from_data(net) {
                Err(error) => proptest::prop_assert_eq!(
                    error.kind(),
                    crate::ErrorKind::InvalidInput,
                    "{}: {}",
                    shown,
                    error
                ),
                Ok(net) => {
                    let shapes = net.shapes(1).expect("an accepted network has shapes");
                    let elements: usize = shapes.iter().map(Shape::len).sum::<usize>() + net.param_count();
                    if elements <= 20_000 {
                        let backend = crate::backend::cpu::CpuBackend::new();
                        let target = crate::harness::Target::Model(net);
                        let options = crate::harness::RunOptions::default();
                        let verified = crate::harness::verify_target(
                            &backend,
                            &target,
                            1,
                            crate::model::Precision::F32,
                            &options,
                            &mut |_| {},
                        );
                        proptest::prop_assert!(verified.is_ok(), "{}: {:?}", shown, verified.err());
                    }
                }
            }
        }

        /// Whatever numbers a user kernel's `only` holds, checking it passes or refuses it, and
        /// the shapes verification then generates stay within the bound the check promises.
        #[test]
        fn degenerate_only_filters_are_refused_or_give_small_shapes(
            numbers in proptest::collection::vec(
                proptest::prop_oneof![
                    3 => proptest::strategy::Just(0usize),
                    6 => 1usize..=3,
                    1 => proptest::strategy::Just(u32::MAX as usize),
                    1 => proptest::strategy::Just(i64::MAX as usize),
                ],
                9,
            ),
            given in proptest::collection::vec(proptest::bool::ANY, 5),
            seed: u64,
        ) {
            use crate::kernels::user::{MAX_VERIFIED_ELEMENTS, Only};
            use rand::SeedableRng;
            let pair = |i: usize| given[i / 2].then_some([numbers[i], numbers[i + 1]]);
            let only = Only {
                kernel: pair(0),
                stride: pair(2),
                padding: pair(4),
                dilation: pair(6),
                groups: given[4].then_some(numbers[8]),
                bias: None,
            };
            if only.check().is_ok() {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                for op in ["conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter"] {
                    let Some(op) = crate::harness::conformance::random_op(op, &only, false, &mut rng) else {
                        continue;
                    };
                    let (crate::kernels::Op::Conv2dForward(g)
                    | crate::kernels::Op::Conv2dBackwardData(g)
                    | crate::kernels::Op::Conv2dBackwardFilter(g)) = op else {
                        panic!("{op:?} is not a convolution");
                    };
                    for len in [g.input.len(), g.output.len(), g.conv.weight_len()] {
                        proptest::prop_assert!(len <= MAX_VERIFIED_ELEMENTS, "{:?}: {}", only, len);
                    }
                }
            }
        }
    }
}
