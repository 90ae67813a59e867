//! Layer hyper-parameters and the shape arithmetic that follows from them.

use serde::{Deserialize, Serialize};

/// A 4-d activation shape in NCHW order. Fully connected activations are `(n, c, 1, 1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shape {
    /// Batch size (images).
    pub n: usize,
    /// Channels (or features for a fully connected activation).
    pub c: usize,
    /// Height in pixels.
    pub h: usize,
    /// Width in pixels.
    pub w: usize,
}

impl Shape {
    /// A new NCHW shape.
    pub const fn new(n: usize, c: usize, h: usize, w: usize) -> Self {
        Self { n, c, h, w }
    }

    /// Number of elements.
    pub const fn len(&self) -> usize {
        self.n * self.c * self.h * self.w
    }

    /// True when the shape holds no element.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of elements, `None` when the product overflows `usize`.
    pub fn checked_len(&self) -> Option<usize> {
        self.n
            .checked_mul(self.c)?
            .checked_mul(self.h)?
            .checked_mul(self.w)
    }

    /// Elements of one image (`c * h * w`).
    pub const fn per_image(&self) -> usize {
        self.c * self.h * self.w
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}x{}", self.n, self.c, self.h, self.w)
    }
}

/// A 2-d convolution: weights `[out_channels, in_channels / groups, kh, kw]`, optional bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Conv2d {
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// Kernel size `(height, width)`.
    pub kernel: (usize, usize),
    /// Stride `(vertical, horizontal)`.
    pub stride: (usize, usize),
    /// Zero padding on each side `(vertical, horizontal)`.
    pub padding: (usize, usize),
    /// Dilation `(vertical, horizontal)`.
    pub dilation: (usize, usize),
    /// Channel groups; both channel counts are divisible by it.
    pub groups: usize,
    /// Whether a per-output-channel bias is added.
    pub bias: bool,
}

impl Conv2d {
    /// A square `k x k` convolution with stride `s`, padding `p`, no dilation, one group, bias.
    pub const fn square(in_channels: usize, out_channels: usize, k: usize, s: usize, p: usize) -> Self {
        Self {
            in_channels,
            out_channels,
            kernel: (k, k),
            stride: (s, s),
            padding: (p, p),
            dilation: (1, 1),
            groups: 1,
            bias: true,
        }
    }

    /// Output height and width for an input of `h x w`, or `None` when the kernel does not fit.
    pub fn output_hw(&self, h: usize, w: usize) -> Option<(usize, usize)> {
        let out = |size: usize, k: usize, s: usize, p: usize, d: usize| -> Option<usize> {
            let span = d * (k - 1) + 1;
            let padded = size + 2 * p;
            (padded >= span && s > 0).then(|| (padded - span) / s + 1)
        };
        Some((
            out(h, self.kernel.0, self.stride.0, self.padding.0, self.dilation.0)?,
            out(w, self.kernel.1, self.stride.1, self.padding.1, self.dilation.1)?,
        ))
    }

    /// Number of weight elements.
    pub const fn weight_len(&self) -> usize {
        self.out_channels * (self.in_channels / self.groups) * self.kernel.0 * self.kernel.1
    }

    /// Number of learnable parameters (weights and bias).
    pub const fn param_count(&self) -> usize {
        self.weight_len() + if self.bias { self.out_channels } else { 0 }
    }
}

/// Pooling flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolKind {
    /// Maximum over the window; ties go to the first element in row-major order.
    Max,
    /// Average over the window.
    Avg,
}

/// 2-d max or average pooling with Torch semantics. Max pooling follows PyTorch on NaN: a
/// window holding one pools to NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pool2d {
    /// Max or average.
    pub kind: PoolKind,
    /// Window `(height, width)`.
    pub kernel: (usize, usize),
    /// Stride `(vertical, horizontal)`.
    pub stride: (usize, usize),
    /// Implicit padding on each side; padded cells never win a max and count in an average
    /// only when `count_include_pad` is set.
    pub padding: (usize, usize),
    /// Round the output size up (Caffe and GoogLeNet); a window that would start entirely in
    /// the right or bottom padding is dropped, as Torch does.
    pub ceil_mode: bool,
    /// Average pooling divides by the window size including padding (Torch's default).
    pub count_include_pad: bool,
}

impl Pool2d {
    /// A square max pool.
    pub const fn max(k: usize, s: usize, p: usize, ceil_mode: bool) -> Self {
        Self {
            kind: PoolKind::Max,
            kernel: (k, k),
            stride: (s, s),
            padding: (p, p),
            ceil_mode,
            count_include_pad: true,
        }
    }

    /// A square average pool (padding counted in the divisor, as Torch's default).
    pub const fn avg(k: usize, s: usize, p: usize, ceil_mode: bool) -> Self {
        Self {
            kind: PoolKind::Avg,
            ..Self::max(k, s, p, ceil_mode)
        }
    }

    /// Output height and width for an input of `h x w`, or `None` when the window does not fit.
    pub fn output_hw(&self, h: usize, w: usize) -> Option<(usize, usize)> {
        let ceil = self.ceil_mode;
        let out = |size: usize, k: usize, s: usize, p: usize| -> Option<usize> {
            let padded = size + 2 * p;
            if padded < k || s == 0 || p * 2 > k {
                return None;
            }
            let span = padded - k;
            let mut o = if ceil { span.div_ceil(s) } else { span / s } + 1;
            // Torch: the last window must start inside the input or the left padding.
            if ceil && (o - 1) * s >= size + p {
                o -= 1;
            }
            Some(o)
        };
        Some((
            out(h, self.kernel.0, self.stride.0, self.padding.0)?,
            out(w, self.kernel.1, self.stride.1, self.padding.1)?,
        ))
    }
}

/// Cross-channel local response normalisation (AlexNet, GoogLeNet), as PyTorch's
/// `LocalResponseNorm`: `y = x / (k + alpha / size * sum_{window} x^2) ^ beta`, the window of
/// channel `c` being `c - size / 2 ..= c + (size - 1) / 2` clipped to the channels (centred for
/// an odd size; an even size reaches one channel further down than up).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Lrn {
    /// Channels in the window: odd in the classic models; an even size follows PyTorch (above).
    pub size: usize,
    /// Scale of the sum of squares.
    pub alpha: f64,
    /// Exponent.
    pub beta: f64,
    /// Additive constant.
    pub k: f64,
}

/// Batch normalisation over N, H, W per channel, with learnable scale and shift. Training needs
/// more than one value per channel (`n * h * w >= 2`), as in PyTorch: planning refuses a layer
/// with one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchNorm {
    /// Channels.
    pub channels: usize,
    /// Added to the variance before the square root.
    pub eps: f64,
    /// Weight of the new batch statistic in the running averages (Torch convention).
    pub momentum: f64,
}

/// A fully connected layer over the flattened `c * h * w` features; weights `[out, in]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Linear {
    /// Input features.
    pub in_features: usize,
    /// Output features.
    pub out_features: usize,
    /// Whether a bias is added.
    pub bias: bool,
}
