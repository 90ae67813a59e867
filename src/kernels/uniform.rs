//! Params uniforms: each shader's `Params` struct, defined once in Rust.
//!
//! The `uniform!` macro declares a struct whose fields are the shader's `Params` members, in
//! order; it yields the words a dispatch uploads ([`Uniform::words`]) and the layout
//! ([`Uniform::LAYOUT`]) that a test checks, member by member (name, offset, scalar type),
//! against the WGSL struct as naga reflects it. A field renamed, reordered, added or retyped on
//! one side only fails that test instead of shifting every later word.

/// A scalar member of a params uniform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `f32`.
    F32,
}

/// A Rust type that is one 4-byte uniform member.
pub trait Member: Copy {
    /// Its WGSL scalar type.
    const SCALAR: Scalar;
    /// Its bits.
    fn word(self) -> u32;
}

impl Member for u32 {
    const SCALAR: Scalar = Scalar::U32;
    fn word(self) -> u32 {
        self
    }
}

impl Member for i32 {
    const SCALAR: Scalar = Scalar::I32;
    fn word(self) -> u32 {
        u32::from_ne_bytes(self.to_ne_bytes())
    }
}

impl Member for f32 {
    const SCALAR: Scalar = Scalar::F32;
    fn word(self) -> u32 {
        self.to_bits()
    }
}

/// A params uniform.
pub trait Uniform {
    /// `(member name, scalar type)` in WGSL order; member `k` is at byte offset `4 k`.
    const LAYOUT: &'static [(&'static str, Scalar)];
    /// The words to upload, in [`Uniform::LAYOUT`] order.
    fn words(&self) -> Vec<u32>;
}

/// Declares a params uniform struct (see the module docs).
macro_rules! uniform {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        $vis struct $name {
            $($(#[$fmeta])* pub(crate) $field: $ty,)+
        }

        impl $crate::kernels::uniform::Uniform for $name {
            const LAYOUT: &'static [(&'static str, $crate::kernels::uniform::Scalar)] =
                &[$((stringify!($field), <$ty as $crate::kernels::uniform::Member>::SCALAR)),+];

            fn words(&self) -> Vec<u32> {
                vec![$($crate::kernels::uniform::Member::word(self.$field)),+]
            }
        }
    };
}
pub(crate) use uniform;

#[cfg(test)]
mod tests {
    use super::{Scalar, Uniform};
    use crate::kernels::registry::{self, Shader};

    /// `(member name, byte offset, scalar type)` of each member.
    type Layout = Vec<(String, u32, Scalar)>;

    /// The `Params` struct of `shader` as naga reflects it.
    fn reflected(shader: &Shader) -> Layout {
        let source = crate::kernels::shader_set::ShaderSet::embedded()
            .expect("the embedded includes resolve")
            .final_source(shader, crate::model::Precision::F32, false, &[])
            .expect("no constants to set");
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{}: {}", shader.file, e.emit_to_string(&source)));
        let params = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some("Params"))
            .unwrap_or_else(|| panic!("{} has no Params struct", shader.file));
        let naga::TypeInner::Struct { members, .. } = &params.1.inner else {
            panic!("{}: Params is not a struct", shader.file)
        };
        members
            .iter()
            .map(|m| {
                let scalar = match &module.types[m.ty].inner {
                    naga::TypeInner::Scalar(s) => match (s.kind, s.width) {
                        (naga::ScalarKind::Uint, 4) => Scalar::U32,
                        (naga::ScalarKind::Sint, 4) => Scalar::I32,
                        (naga::ScalarKind::Float, 4) => Scalar::F32,
                        other => panic!("{}: {:?} is {other:?}", shader.file, m.name),
                    },
                    other => panic!("{}: {:?} is {other:?}", shader.file, m.name),
                };
                (m.name.clone().unwrap_or_default(), m.offset, scalar)
            })
            .collect()
    }

    fn expected<U: Uniform>() -> Layout {
        U::LAYOUT
            .iter()
            .enumerate()
            .map(|(k, &(name, scalar))| (name.to_string(), 4 * k as u32, scalar))
            .collect()
    }

    #[test]
    fn every_params_struct_matches_its_shader() {
        use crate::kernels::{
            activation, batchnorm, col2im, conv2d, gemm, linear, loss, lrn, optimizer, pool, tensor, winograd,
        };
        let pairs: [(&Shader, Layout); 12] = [
            (&registry::CONV2D, expected::<conv2d::ConvParams>()),
            (&registry::COL2IM, expected::<col2im::Col2imParams>()),
            (&registry::POOL, expected::<pool::PoolParams>()),
            (&registry::ACTIVATION, expected::<activation::ActivationParams>()),
            (&registry::LRN, expected::<lrn::LrnParams>()),
            (&registry::BATCHNORM, expected::<batchnorm::BatchNormParams>()),
            (&registry::LINEAR, expected::<linear::LinearParams>()),
            (&registry::GEMM, expected::<gemm::GemmParams>()),
            (&registry::WINOGRAD, expected::<winograd::WinogradParams>()),
            (&registry::LOSS, expected::<loss::LossParams>()),
            (&registry::TENSOR, expected::<tensor::TensorParams>()),
            (&registry::OPTIMIZER, expected::<optimizer::SgdParams>()),
        ];
        for (shader, rust) in pairs {
            assert_eq!(reflected(shader), rust, "{}", shader.file);
        }
    }
}
