//! `tune` as a library value: [`TuneRequest::prepare`] opens the adapter and finds the distinct
//! (op, shape, precision) of the selected benchmarks; [`TuneSession::run`] verifies and times
//! every kernel variant of each and caches the fastest for the adapter (which `run` then uses).

use super::Interrupt;
use super::sweep::{Selection, is_real_gpu};
use super::tune::{TuneCache, TuneJob, TuneOptions, TuneProgress, TuneResult, distinct_ops, tune_all};
use crate::backend::Backend;
use crate::backend::wgpu::WgpuBackend;
use crate::config::Workspace;
use crate::kernels::Variant;
use crate::kernels::user::KernelSet;
use crate::{Error, Result};
use std::path::PathBuf;

/// What `tune` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneRequest {
    /// What to tune: the ops of the benchmarks `run` would run with the same selection.
    pub selection: Selection,
    /// Also tune the first layer's input gradient (as `run --data-grad` computes it).
    pub data_grad: bool,
    /// The wgpu adapter.
    pub adapter: Option<String>,
    /// Timed runs of each variant.
    pub samples: usize,
    /// Untimed runs of each variant first (at least 1: a pipeline's first dispatch can include
    /// one-time costs).
    pub warmup_iterations: usize,
    /// Verify each variant against the CPU reference before timing it.
    pub verify: bool,
}

impl Default for TuneRequest {
    fn default() -> Self {
        Self {
            selection: Selection::default(),
            data_grad: false,
            adapter: None,
            samples: TuneOptions::default().samples,
            warmup_iterations: TuneOptions::default().warmup_iterations,
            verify: true,
        }
    }
}

/// A prepared `tune`: the adapter open, the distinct ops found.
pub struct TuneSession {
    backend: WgpuBackend,
    kernels: KernelSet,
    options: TuneOptions,
    /// The distinct ops to tune, in order.
    pub ops: Vec<TuneJob>,
    /// The adapter's tune cache, which every finished op is written to.
    pub cache_path: PathBuf,
    /// What the user should know first (benchmarks left out, a cache that starts afresh).
    pub notices: Vec<String>,
}

impl TuneRequest {
    /// Opens the adapter and finds the distinct ops of the selection, in a workspace whose own
    /// kernels are tuned too.
    pub fn prepare(&self, workspace: &Workspace) -> Result<TuneSession> {
        let kernels = workspace.kernel_set()?;
        let backend = WgpuBackend::open(self.adapter.as_deref())?;
        let mut notices = Vec::new();
        let benchmarks = self
            .selection
            .jobs(&workspace.config, is_real_gpu(&backend), &mut notices)?;
        let ops = distinct_ops(&backend, &benchmarks, self.data_grad)?;
        let adapter = backend.adapter();
        let cache_path = TuneCache::path(&workspace.target_dir, &adapter.slug());
        notices.extend(TuneCache::restart_notice(&cache_path, adapter));
        let options = TuneOptions {
            warmup_iterations: self.warmup_iterations.max(1),
            samples: self.samples,
            verify: self.verify,
            ..TuneOptions::default()
        };
        Ok(TuneSession {
            backend,
            kernels,
            options,
            ops,
            cache_path,
            notices,
        })
    }
}

impl TuneSession {
    /// The adapter tuned, as tables name it.
    pub fn adapter_label(&self) -> String {
        self.backend.adapter().label()
    }

    /// The most variants an op is timed with (convbench's and the workspace's).
    pub fn variants(&self) -> usize {
        Variant::all_in(&self.kernels).len()
    }

    /// Tunes every op, writing each winner to the cache as it is found. When `interrupt` asks
    /// (SIGINT or SIGTERM), it stops after the op being tuned: the ops finished, and beside
    /// them why the rest were not.
    pub fn run(
        &self,
        interrupt: &Interrupt,
        on_event: &mut dyn FnMut(TuneProgress<'_>),
    ) -> Result<(Vec<TuneResult>, Option<Error>)> {
        tune_all(
            &self.backend,
            &self.ops,
            &self.kernels,
            &self.options,
            &self.cache_path,
            interrupt,
            on_event,
        )
    }
}
