//! The network zoo: the classic benchmark convnets, each faithful to its published definition.
//!
//! Dropout is left out (the classic benchmarks time without it) and the softmax cross-entropy
//! loss is added by the harness, so every network ends with its class-score linear layer.

use super::layer::{Conv2d, Lrn, Pool2d};
use super::network::{LayerKind, Network, NetworkBuilder, NodeId};
use crate::Error;

/// Builds the layers of one zoo network; shapes are checked by [`NetworkBuilder::finish`].
type Definition = fn() -> NetworkBuilder;

/// Every model, in the order `list` prints them.
const MODELS: [(&str, Definition); 10] = [
    ("alexnet", alexnet),
    ("overfeat", overfeat_fast),
    ("overfeat-accurate", overfeat_accurate),
    ("vgg-a", vgg_a),
    ("vgg16", vgg16),
    ("googlenet", googlenet),
    ("resnet50", resnet50),
    ("resnet152", resnet152),
    ("densenet161", densenet161),
    ("lenet", lenet),
];

/// Names of every network in the zoo, in the order of [`zoo`].
pub fn model_names() -> Vec<&'static str> {
    MODELS.iter().map(|(name, _)| *name).collect()
}

/// Every network in the zoo.
pub fn zoo() -> Vec<Network> {
    MODELS.iter().map(|(_, definition)| finish(*definition)).collect()
}

/// The zoo network called `name` (as in [`model_names`]).
pub fn network(name: &str) -> Result<Network, Error> {
    MODELS
        .iter()
        .find(|(model, _)| *model == name)
        .map(|(_, definition)| finish(*definition))
        .ok_or_else(|| {
            super::ModelError::UnknownModel {
                name: name.to_string(),
                known: model_names(),
            }
            .into()
        })
}

fn finish(definition: Definition) -> Network {
    // The definitions are constants of this file and the tests lay out every one of them,
    // so a failure here is a bug in this file, never something a user can cause.
    definition()
        .finish()
        .expect("zoo networks are checked by model::zoo::tests::every_network_builds")
}

/// A square convolution without bias (followed by batch normalisation in ResNet and DenseNet).
fn conv_no_bias(
    b: &mut NetworkBuilder,
    name: &str,
    x: NodeId,
    out: usize,
    k: usize,
    s: usize,
    p: usize,
) -> NodeId {
    let conv = Conv2d {
        bias: false,
        ..Conv2d::square(b.channels(x), out, k, s, p)
    };
    b.layer(name, LayerKind::Conv2d(conv), &[x])
}

/// A fully connected layer with bias followed by a ReLU (named `<name>/relu`).
fn fc_relu(b: &mut NetworkBuilder, name: &str, x: NodeId, in_features: usize, out: usize) -> NodeId {
    let y = b.linear(name, x, in_features, out);
    b.relu(&format!("{name}/relu"), y)
}

/// AlexNet as "One Weird Trick" (Krizhevsky 2014): 64-192-384-256-256 channels, one column.
fn alexnet() -> NetworkBuilder {
    let mut b = NetworkBuilder::new(
        "alexnet",
        "AlexNet, the single-column \"One Weird Trick\" variant (Krizhevsky 2014), as in \
         soumith/convnet-benchmarks torch7/imagenet_winners/alexnet.lua",
        (3, 224, 224),
    );
    let x = b.input();
    let x = b.conv_relu("conv1", x, 64, 11, 4, 2);
    let x = b.pool("pool1", x, Pool2d::max(3, 2, 0, false));
    let x = b.conv_relu("conv2", x, 192, 5, 1, 2);
    let x = b.pool("pool2", x, Pool2d::max(3, 2, 0, false));
    let x = b.conv_relu("conv3", x, 384, 3, 1, 1);
    let x = b.conv_relu("conv4", x, 256, 3, 1, 1);
    let x = b.conv_relu("conv5", x, 256, 3, 1, 1);
    let x = b.pool("pool5", x, Pool2d::max(3, 2, 0, false));
    let x = fc_relu(&mut b, "fc6", x, 256 * 6 * 6, 4096);
    let x = fc_relu(&mut b, "fc7", x, 4096, 4096);
    b.linear("fc8", x, 4096, 1000);
    b
}

/// OverFeat "fast" (Sermanet et al. 2013, table 1) on 231x231 inputs.
fn overfeat_fast() -> NetworkBuilder {
    let mut b = NetworkBuilder::new(
        "overfeat",
        "OverFeat fast model (Sermanet et al. 2013, arXiv:1312.6229), as in \
         soumith/convnet-benchmarks torch7/imagenet_winners/overfeat.lua",
        (3, 231, 231),
    );
    let x = b.input();
    let x = b.conv_relu("conv1", x, 96, 11, 4, 0);
    let x = b.pool("pool1", x, Pool2d::max(2, 2, 0, false));
    let x = b.conv_relu("conv2", x, 256, 5, 1, 0);
    let x = b.pool("pool2", x, Pool2d::max(2, 2, 0, false));
    let x = b.conv_relu("conv3", x, 512, 3, 1, 1);
    let x = b.conv_relu("conv4", x, 1024, 3, 1, 1);
    let x = b.conv_relu("conv5", x, 1024, 3, 1, 1);
    let x = b.pool("pool5", x, Pool2d::max(2, 2, 0, false));
    let x = fc_relu(&mut b, "fc6", x, 1024 * 6 * 6, 3072);
    let x = fc_relu(&mut b, "fc7", x, 3072, 4096);
    b.linear("fc8", x, 4096, 1000);
    b
}

/// OverFeat "accurate" (Sermanet et al. 2013, table 3) on 221x221 inputs.
fn overfeat_accurate() -> NetworkBuilder {
    let mut b = NetworkBuilder::new(
        "overfeat-accurate",
        "OverFeat accurate model, table 3 of Sermanet et al. 2013 (arXiv:1312.6229)",
        (3, 221, 221),
    );
    let x = b.input();
    let x = b.conv_relu("conv1", x, 96, 7, 2, 0); // 108x108
    let x = b.pool("pool1", x, Pool2d::max(3, 3, 0, false)); // 36x36
    let x = b.conv_relu("conv2", x, 256, 7, 1, 0); // 30x30
    let x = b.pool("pool2", x, Pool2d::max(2, 2, 0, false)); // 15x15
    let x = b.conv_relu("conv3", x, 512, 3, 1, 1);
    let x = b.conv_relu("conv4", x, 512, 3, 1, 1);
    let x = b.conv_relu("conv5", x, 1024, 3, 1, 1);
    let x = b.conv_relu("conv6", x, 1024, 3, 1, 1);
    let x = b.pool("pool6", x, Pool2d::max(3, 3, 0, false)); // 5x5
    let x = fc_relu(&mut b, "fc7", x, 1024 * 5 * 5, 4096);
    let x = fc_relu(&mut b, "fc8", x, 4096, 4096);
    b.linear("fc9", x, 4096, 1000);
    b
}

/// A VGG network (Simonyan & Zisserman 2014): 3x3 convolutions with padding 1, each stage
/// ended by a 2x2 max pool, then three fully connected layers on 512x7x7 features.
fn vgg(name: &str, description: &str, stages: &[&[usize]]) -> NetworkBuilder {
    let mut b = NetworkBuilder::new(name, description, (3, 224, 224));
    let mut x = b.input();
    for (stage, widths) in stages.iter().enumerate() {
        for (i, &width) in widths.iter().enumerate() {
            x = b.conv_relu(&format!("conv{}_{}", stage + 1, i + 1), x, width, 3, 1, 1);
        }
        x = b.pool(&format!("pool{}", stage + 1), x, Pool2d::max(2, 2, 0, false));
    }
    let x = fc_relu(&mut b, "fc6", x, 512 * 7 * 7, 4096);
    let x = fc_relu(&mut b, "fc7", x, 4096, 4096);
    b.linear("fc8", x, 4096, 1000);
    b
}

fn vgg_a() -> NetworkBuilder {
    vgg(
        "vgg-a",
        "VGG-11, configuration A of Simonyan & Zisserman 2014 (arXiv:1409.1556), as in \
         soumith/convnet-benchmarks torch7/imagenet_winners/vgg_a.lua",
        &[&[64], &[128], &[256, 256], &[512, 512], &[512, 512]],
    )
}

fn vgg16() -> NetworkBuilder {
    vgg(
        "vgg16",
        "VGG-16, configuration D of Simonyan & Zisserman 2014 (arXiv:1409.1556), as torchvision's vgg16",
        &[
            &[64, 64],
            &[128, 128],
            &[256, 256, 256],
            &[512, 512, 512],
            &[512, 512, 512],
        ],
    )
}

/// Cross-channel LRN of GoogLeNet (and Caffe's AlexNet).
const GOOGLENET_LRN: Lrn = Lrn {
    size: 5,
    alpha: 1e-4,
    beta: 0.75,
    k: 1.0,
};

/// One inception module: `[1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection]` channels
/// (table 1 of Szegedy et al. 2014), branches concatenated in that order.
fn inception(b: &mut NetworkBuilder, name: &str, x: NodeId, widths: [usize; 6]) -> NodeId {
    let [c1, c3_reduce, c3, c5_reduce, c5, pool_proj] = widths;
    let branch1 = b.conv_relu(&format!("{name}/1x1"), x, c1, 1, 1, 0);
    let reduce3 = b.conv_relu(&format!("{name}/3x3_reduce"), x, c3_reduce, 1, 1, 0);
    let branch3 = b.conv_relu(&format!("{name}/3x3"), reduce3, c3, 3, 1, 1);
    let reduce5 = b.conv_relu(&format!("{name}/5x5_reduce"), x, c5_reduce, 1, 1, 0);
    let branch5 = b.conv_relu(&format!("{name}/5x5"), reduce5, c5, 5, 1, 2);
    let pool = b.pool(&format!("{name}/pool"), x, Pool2d::max(3, 1, 1, false));
    let branch_pool = b.conv_relu(&format!("{name}/pool_proj"), pool, pool_proj, 1, 1, 0);
    b.layer(
        format!("{name}/output"),
        LayerKind::Concat,
        &[branch1, branch3, branch5, branch_pool],
    )
}

/// GoogLeNet as Caffe's bvlc_googlenet (layer names included), without the auxiliary classifiers.
fn googlenet() -> NetworkBuilder {
    let mut b = NetworkBuilder::new(
        "googlenet",
        "GoogLeNet / Inception v1 (Szegedy et al. 2014, arXiv:1409.4842) as Caffe's bvlc_googlenet, \
         without the auxiliary classifiers",
        (3, 224, 224),
    );
    // Caffe rounds pooling output sizes up: 112 -> 56 -> 28 -> 14 -> 7.
    let stem_pool = Pool2d::max(3, 2, 0, true);
    let x = b.input();
    let x = b.conv_relu("conv1/7x7_s2", x, 64, 7, 2, 3);
    let x = b.pool("pool1/3x3_s2", x, stem_pool);
    let x = b.layer("pool1/norm1", LayerKind::Lrn(GOOGLENET_LRN), &[x]);
    let x = b.conv_relu("conv2/3x3_reduce", x, 64, 1, 1, 0);
    let x = b.conv_relu("conv2/3x3", x, 192, 3, 1, 1);
    let x = b.layer("conv2/norm2", LayerKind::Lrn(GOOGLENET_LRN), &[x]);
    let x = b.pool("pool2/3x3_s2", x, stem_pool);
    let x = inception(&mut b, "inception_3a", x, [64, 96, 128, 16, 32, 32]);
    let x = inception(&mut b, "inception_3b", x, [128, 128, 192, 32, 96, 64]);
    let x = b.pool("pool3/3x3_s2", x, stem_pool);
    let x = inception(&mut b, "inception_4a", x, [192, 96, 208, 16, 48, 64]);
    let x = inception(&mut b, "inception_4b", x, [160, 112, 224, 24, 64, 64]);
    let x = inception(&mut b, "inception_4c", x, [128, 128, 256, 24, 64, 64]);
    let x = inception(&mut b, "inception_4d", x, [112, 144, 288, 32, 64, 64]);
    let x = inception(&mut b, "inception_4e", x, [256, 160, 320, 32, 128, 128]);
    let x = b.pool("pool4/3x3_s2", x, stem_pool);
    let x = inception(&mut b, "inception_5a", x, [256, 160, 320, 32, 128, 128]);
    let x = inception(&mut b, "inception_5b", x, [384, 192, 384, 48, 128, 128]);
    let x = b.pool("pool5/7x7_s1", x, Pool2d::avg(7, 1, 0, false));
    b.linear("loss3/classifier", x, 1024, 1000);
    b
}

/// A torchvision bottleneck block (v1.5: the stride is on the 3x3 convolution), with the
/// 1x1 + batch-norm projection shortcut when the shape changes.
fn bottleneck(b: &mut NetworkBuilder, name: &str, x: NodeId, planes: usize, stride: usize) -> NodeId {
    let out = planes * 4;
    let y = conv_no_bias(b, &format!("{name}.conv1"), x, planes, 1, 1, 0);
    let y = b.batch_norm(&format!("{name}.bn1"), y);
    let y = b.relu(&format!("{name}.relu1"), y);
    let y = conv_no_bias(b, &format!("{name}.conv2"), y, planes, 3, stride, 1);
    let y = b.batch_norm(&format!("{name}.bn2"), y);
    let y = b.relu(&format!("{name}.relu2"), y);
    let y = conv_no_bias(b, &format!("{name}.conv3"), y, out, 1, 1, 0);
    let y = b.batch_norm(&format!("{name}.bn3"), y);
    let shortcut = if stride != 1 || b.channels(x) != out {
        let s = conv_no_bias(b, &format!("{name}.downsample.0"), x, out, 1, stride, 0);
        b.batch_norm(&format!("{name}.downsample.1"), s)
    } else {
        x
    };
    let sum = b.layer(format!("{name}.add"), LayerKind::Add, &[y, shortcut]);
    b.relu(&format!("{name}.relu3"), sum)
}

/// A torchvision bottleneck ResNet with `blocks` bottlenecks in each of its four stages.
fn resnet(name: &str, description: &str, blocks: [usize; 4]) -> NetworkBuilder {
    let mut b = NetworkBuilder::new(name, description, (3, 224, 224));
    let x = b.input();
    let x = conv_no_bias(&mut b, "conv1", x, 64, 7, 2, 3);
    let x = b.batch_norm("bn1", x);
    let x = b.relu("relu", x);
    let mut x = b.pool("maxpool", x, Pool2d::max(3, 2, 1, false));
    for (stage, (&count, planes)) in blocks.iter().zip([64, 128, 256, 512]).enumerate() {
        for block in 0..count {
            let stride = if stage > 0 && block == 0 { 2 } else { 1 };
            x = bottleneck(&mut b, &format!("layer{}.{block}", stage + 1), x, planes, stride);
        }
    }
    let x = b.layer("avgpool", LayerKind::GlobalAvgPool, &[x]);
    b.linear("fc", x, 2048, 1000);
    b
}

fn resnet50() -> NetworkBuilder {
    resnet(
        "resnet50",
        "ResNet-50 v1.5 (He et al. 2015, arXiv:1512.03385; stride on the 3x3 conv) as torchvision's resnet50",
        [3, 4, 6, 3],
    )
}

fn resnet152() -> NetworkBuilder {
    resnet(
        "resnet152",
        "ResNet-152 v1.5 (He et al. 2015, arXiv:1512.03385; stride on the 3x3 conv) as torchvision's \
         resnet152",
        [3, 8, 36, 3],
    )
}

/// DenseNet-161 as torchvision's densenet161: growth 48, blocks (6, 12, 36, 24), 96 initial
/// features, bottleneck width 4 x growth, transitions halving the channels.
fn densenet161() -> NetworkBuilder {
    const GROWTH: usize = 48;
    const BOTTLENECK: usize = 4 * GROWTH;
    const BLOCKS: [usize; 4] = [6, 12, 36, 24];
    let mut b = NetworkBuilder::new(
        "densenet161",
        "DenseNet-161 (Huang et al. 2016, arXiv:1608.06993) as torchvision's densenet161",
        (3, 224, 224),
    );
    let x = b.input();
    let x = conv_no_bias(&mut b, "conv0", x, 96, 7, 2, 3);
    let x = b.batch_norm("norm0", x);
    let x = b.relu("relu0", x);
    let mut x = b.pool("pool0", x, Pool2d::max(3, 2, 1, false));
    for (block, &layers) in BLOCKS.iter().enumerate() {
        for layer in 1..=layers {
            let name = format!("denseblock{}.denselayer{layer}", block + 1);
            let y = b.batch_norm(&format!("{name}.norm1"), x);
            let y = b.relu(&format!("{name}.relu1"), y);
            let y = conv_no_bias(&mut b, &format!("{name}.conv1"), y, BOTTLENECK, 1, 1, 0);
            let y = b.batch_norm(&format!("{name}.norm2"), y);
            let y = b.relu(&format!("{name}.relu2"), y);
            let y = conv_no_bias(&mut b, &format!("{name}.conv2"), y, GROWTH, 3, 1, 1);
            // torchvision concatenates all earlier features before each layer; concatenating
            // the new features onto the running concatenation gives the same tensors.
            x = b.layer(format!("{name}.concat"), LayerKind::Concat, &[x, y]);
        }
        if block + 1 < BLOCKS.len() {
            let name = format!("transition{}", block + 1);
            let half = b.channels(x) / 2;
            let y = b.batch_norm(&format!("{name}.norm"), x);
            let y = b.relu(&format!("{name}.relu"), y);
            let y = conv_no_bias(&mut b, &format!("{name}.conv"), y, half, 1, 1, 0);
            x = b.pool(&format!("{name}.pool"), y, Pool2d::avg(2, 2, 0, false));
        }
    }
    let x = b.batch_norm("norm5", x);
    let x = b.relu("relu5", x);
    let features = b.channels(x);
    let x = b.layer("avgpool", LayerKind::GlobalAvgPool, &[x]);
    b.linear("classifier", x, features, 1000);
    b
}

/// The convolutional network of PaddlePaddle's "recognize_digits" example (MNIST).
fn lenet() -> NetworkBuilder {
    let mut b = NetworkBuilder::new(
        "lenet",
        "LeNet-style MNIST classifier of PaddlePaddle's recognize_digits example (conv-pool, batch \
         norm, conv-pool, fc)",
        (1, 28, 28),
    );
    let x = b.input();
    let x = b.conv_relu("conv1", x, 20, 5, 1, 0); // 24x24
    let x = b.pool("pool1", x, Pool2d::max(2, 2, 0, false)); // 12x12
    let x = b.batch_norm("bn1", x);
    let x = b.conv_relu("conv2", x, 50, 5, 1, 0); // 8x8
    let x = b.pool("pool2", x, Pool2d::max(2, 2, 0, false)); // 4x4
    b.linear("fc", x, 50 * 4 * 4, 10);
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_network_builds() {
        let networks = zoo();
        assert_eq!(networks.len(), model_names().len());
        for (network, name) in networks.iter().zip(model_names()) {
            assert_eq!(network.name, name);
            assert!(
                !network.description.contains('\n'),
                "{name}: description is one line"
            );
            let shapes = network.shapes(2).expect("shapes at batch 2");
            assert_eq!(shapes.len(), network.layers.len() + 1);
            assert!(shapes.iter().all(|s| s.n == 2 && !s.is_empty()), "{name}");
            let classes = if name == "lenet" { 10 } else { 1000 };
            assert_eq!(network.classes(), Ok(classes), "{name}");
            assert!(
                matches!(network.layers.last().map(|l| &l.kind), Some(LayerKind::Linear(_))),
                "{name} ends with its classifier"
            );
        }
    }

    #[test]
    fn layer_names_are_unique() {
        for network in zoo() {
            let mut seen = HashSet::new();
            for layer in &network.layers {
                assert!(
                    seen.insert(&layer.name),
                    "{}: duplicate layer {}",
                    network.name,
                    layer.name
                );
            }
        }
    }

    #[test]
    fn model_names_are_unique() {
        let names = model_names();
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len());
    }

    fn params(name: &str) -> usize {
        network(name).expect("known model").param_count()
    }

    #[test]
    fn parameter_counts_match_the_published_ones() {
        assert_eq!(params("alexnet"), 61_100_840);
        assert_eq!(params("vgg16"), 138_357_544); // torchvision vgg16
        assert_eq!(params("resnet50"), 25_557_032); // torchvision resnet50
        assert_eq!(params("resnet152"), 60_192_808); // torchvision resnet152
        assert_eq!(params("densenet161"), 28_681_000); // torchvision densenet161
        // vgg-a is VGG-11 (torchvision vgg11: 132,863,336); lenet is small enough to count
        // by hand: conv 520 + batch norm 40 + conv 25,050 + fc 8,010.
        assert_eq!(params("vgg-a"), 132_863_336);
        assert_eq!(params("lenet"), 33_620);
        // OverFeat: convs 96*3*121+96, 256*96*25+256, 512*256*9+512, 1024*512*9+1024,
        // 1024*1024*9+1024; fc 36864*3072+3072, 3072*4096+4096, 4096*1000+1000.
        assert_eq!(params("overfeat"), 145_920_872);
        // Sermanet et al. 2013, table 4: 144M parameters for the accurate model.
        assert_eq!(params("overfeat-accurate"), 144_656_488);
    }

    #[test]
    fn googlenet_parameters_are_those_of_bvlc_googlenet_without_aux() {
        // 6,998,552 is Torch's count for GoogLeNet without its auxiliary classifiers, and
        // this definition gives exactly that: every convolution and the classifier with a bias
        // as published (Caffe's bvlc_googlenet), true 5x5 convolutions in the 5x5 branches, and
        // no parameters in LRN, pooling or concatenation. (torchvision's googlenet differs: batch
        // norm instead of biases and 3x3 convolutions in the "5x5" branches.)
        let count = params("googlenet") as f64;
        assert!((count / 6_998_552.0 - 1.0).abs() < 0.01, "{count}");
    }

    #[test]
    fn forward_flops_per_image_match_the_published_ones() {
        // 2 x multiply-adds of convolutions and fully connected layers; references are the
        // usual multiply-add counts (torchvision's "GFLOPS" column counts multiply-adds).
        let cases = [
            ("alexnet", 1.43e9),
            ("vgg16", 2.0 * 15.47e9),
            ("resnet50", 2.0 * 4.09e9),
            ("resnet152", 2.0 * 11.51e9),
            ("densenet161", 2.0 * 7.73e9),
            ("googlenet", 2.0 * 1.58e9),
            // Sermanet et al. 2013, table 4: 2,810M and 5,369M connections.
            ("overfeat", 2.0 * 2.81e9),
            ("overfeat-accurate", 2.0 * 5.369e9),
            ("vgg-a", 2.0 * 7.61e9),
        ];
        for (name, expected) in cases {
            let flops = network(name)
                .expect("known model")
                .forward_flops_per_image()
                .expect("shapes");
            let ratio = flops as f64 / expected;
            assert!(
                (0.95..1.05).contains(&ratio),
                "{name}: {flops} FLOPs, expected about {expected}"
            );
        }
    }

    #[test]
    fn unknown_model_lists_the_known_ones() {
        let err = network("alexnett").expect_err("unknown model");
        assert!(
            matches!(&err, Error::Model(e) if matches!(**e, super::super::ModelError::UnknownModel { .. })),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains("unknown model `alexnett`"), "{message}");
        for name in model_names() {
            assert!(message.contains(name), "{message} lacks {name}");
        }
    }

    #[test]
    fn spatial_sizes_follow_the_published_definitions() {
        let output_of = |model: &str, layer: &str| {
            let network = network(model).expect("known model");
            let shapes = network.shapes(1).expect("shapes");
            let index = network
                .layers
                .iter()
                .position(|l| l.name == layer)
                .expect("layer exists");
            let s = shapes[index + 1];
            (s.c, s.h, s.w)
        };
        assert_eq!(output_of("alexnet", "conv1"), (64, 55, 55));
        assert_eq!(output_of("alexnet", "pool5"), (256, 6, 6));
        assert_eq!(output_of("overfeat", "pool5"), (1024, 6, 6));
        assert_eq!(output_of("overfeat-accurate", "pool1"), (96, 36, 36));
        assert_eq!(output_of("overfeat-accurate", "pool6"), (1024, 5, 5));
        assert_eq!(output_of("googlenet", "pool1/3x3_s2"), (64, 56, 56));
        assert_eq!(output_of("googlenet", "inception_3a/output"), (256, 28, 28));
        assert_eq!(output_of("googlenet", "inception_4e/output"), (832, 14, 14));
        assert_eq!(output_of("googlenet", "inception_5b/output"), (1024, 7, 7));
        assert_eq!(output_of("resnet50", "maxpool"), (64, 56, 56));
        assert_eq!(output_of("resnet50", "layer4.2.relu3"), (2048, 7, 7));
        assert_eq!(output_of("densenet161", "transition3.pool"), (1056, 7, 7));
        assert_eq!(output_of("densenet161", "norm5"), (2208, 7, 7));
        assert_eq!(output_of("lenet", "pool2"), (50, 4, 4));
    }
}
