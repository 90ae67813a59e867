//! Numeric precision of stored tensors.

use serde::{Deserialize, Serialize};

/// Storage precision of activations, weights and gradients. Arithmetic accumulates in f32
/// either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// IEEE binary32.
    F32,
    /// IEEE binary16 storage, f32 accumulation; needs `SHADER_F16` on wgpu.
    F16,
}

impl Precision {
    /// `"f32"` or `"f16"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
        }
    }

    /// Bytes per stored element.
    pub const fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F16 => 2,
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "f32" | "fp32" | "float32" => Ok(Precision::F32),
            "f16" | "fp16" | "float16" | "half" => Ok(Precision::F16),
            other => Err(format!("unknown precision `{other}`; use f32 or f16")),
        }
    }
}
