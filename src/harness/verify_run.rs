//! `verify` as a library value: the kernel-variant table on random shapes (one seed, or a seed
//! sweep), then every op of the selected networks against the f64 reference, without timing
//! anything. [`VerifyRequest::prepare`] opens the backends and resolves the kernels; the
//! session then checks the variants and the networks, each returning what the binary prints.

use super::conformance::{self, BackendRows, Row, SweepRow};
use super::select::KernelChoice;
use super::sweep::{DeviceRequest, Job, KernelRequest, Selection, VerifyScope};
use super::{BackendSummary, Interrupt, RunOptions, VerifyEvent, verify_jobs};
use crate::backend::Backend;
use crate::config::Workspace;
use crate::kernels::user::KernelSet;
use crate::{Error, Result};

/// Random shapes per op, variant and precision in the variant table by default.
pub const RANDOM_SHAPES: usize = 3;

/// What `verify` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyRequest {
    /// What to verify; with no model or suite named (here or in the configuration), every
    /// model of the zoo at batch 1 (see [`Selection::verify_scope`]).
    pub selection: Selection,
    /// Where to run it.
    pub device: DeviceRequest,
    /// Which kernels run; a named one is also the only variant of the variant table.
    pub kernels: KernelRequest,
    /// Verifications of the networks, each with fresh random data (at least 1).
    pub repeat: usize,
    /// Random shapes per op, variant and precision in the variant table.
    pub random_shapes: usize,
    /// Seed of the variant table's shapes and data; `None`: a fresh one.
    pub seed: Option<u64>,
    /// A seed sweep: the variant table over this many seeds from the seed.
    pub seeds: Option<u64>,
}

impl Default for VerifyRequest {
    fn default() -> Self {
        Self {
            selection: Selection::default(),
            device: DeviceRequest::default(),
            kernels: KernelRequest::Auto,
            repeat: 1,
            random_shapes: RANDOM_SHAPES,
            seed: None,
            seeds: None,
        }
    }
}

/// The variant tables of every backend with variants.
#[derive(Debug, Clone)]
pub enum VariantTables {
    /// One seed: each line one op, variant, precision and shape.
    Seed {
        /// The seed of the shapes and data.
        seed: u64,
        /// Per backend, its rows.
        tables: Vec<BackendRows<Row>>,
    },
    /// A seed sweep: each line the worst over the seeds.
    Sweep {
        /// The seeds swept, `first..end`.
        seeds: std::ops::Range<u64>,
        /// Per backend, its lines.
        tables: Vec<BackendRows<SweepRow>>,
    },
}

/// A prepared `verify`: backends open, kernels resolved.
pub struct VerifySession<'w> {
    workspace: &'w Workspace,
    request: VerifyRequest,
    mine: KernelSet,
    backends: Vec<Box<dyn Backend>>,
    scope: VerifyScope,
    options: RunOptions,
    /// What the user should know before anything is checked (a backend that could not open,
    /// a kernel choice that does not apply).
    pub notices: Vec<String>,
}

impl VerifyRequest {
    /// Opens the backends and resolves the kernels, in a workspace whose own kernels are `mine`.
    /// `interrupt` set stops the checking between two variants, seeds or benchmarks, keeping
    /// what was checked before (the binary's SIGINT and SIGTERM).
    pub fn prepare(
        self,
        workspace: &Workspace,
        mine: KernelSet,
        interrupt: Interrupt,
    ) -> Result<VerifySession<'_>> {
        let mut notices = Vec::new();
        let backends = self.device.open(&mut notices)?;
        let kernels = KernelChoice::resolve(
            &self.kernels,
            &mine,
            &workspace.target_dir,
            &backends,
            &mut notices,
        )?;
        super::sweep::forced_kernel_notices(&kernels, &backends, &mut notices);
        let scope = self.selection.clone().verify_scope(&workspace.config);
        let options = RunOptions {
            kernels,
            interrupt,
            ..RunOptions::default()
        };
        Ok(VerifySession {
            workspace,
            request: self,
            mine,
            backends,
            scope,
            options,
            notices,
        })
    }
}

impl VerifySession<'_> {
    /// Checks every kernel variant (convbench's and the workspace's, or the one named) on
    /// random shapes on each backend with variants: the tables checked, and beside them the
    /// error of the first failure. `on_seed` hears each seed of a sweep as it starts, and its
    /// place in the sweep (from 1).
    pub fn variants(&self, on_seed: &mut dyn FnMut(u64, u64)) -> Result<(VariantTables, Option<Error>)> {
        let request = &self.request;
        let name = match &request.kernels {
            KernelRequest::Named(name) => name.as_str(),
            KernelRequest::Auto | KernelRequest::Heuristic => "auto",
        };
        let variants = conformance::requested_variants(name, &self.mine)?;
        let precisions = &self.scope.variant_precisions;
        // A precision asked for that a backend cannot run is the error it is for the networks,
        // not a table left empty (without --precision, an adapter's f16 is skipped, said there).
        if self.scope.explicit_precisions {
            for backend in self
                .backends
                .iter()
                .filter(|b| super::select::has_variants(b.kind()))
            {
                if let Some(&precision) = precisions.iter().find(|&&p| !backend.supports(p)) {
                    return Err(super::unsupported(backend.as_ref(), precision));
                }
            }
        }
        let shapes = request.random_shapes;
        let seed = request.seed.unwrap_or_else(rand::random);
        let (tables, error) = match request.seeds {
            None => {
                let (tables, error) = conformance::check_backends(
                    &self.backends,
                    &variants,
                    precisions,
                    shapes,
                    seed,
                    &self.options.interrupt,
                );
                (VariantTables::Seed { seed, tables }, error)
            }
            Some(seeds) => {
                let seeds = conformance::seed_range(seed, seeds)?;
                let first = seeds.start;
                let (tables, error) = conformance::sweep_backends(
                    &self.backends,
                    &variants,
                    precisions,
                    shapes,
                    seeds.clone(),
                    &self.options.interrupt,
                    &mut |seed| on_seed(seed, seed - first + 1),
                );
                (VariantTables::Sweep { seeds, tables }, error)
            }
        };
        // Not a row anywhere, on a backend that runs variants, and nothing stopped the check: the
        // variants implement no op at the precisions asked for (a kernel without `f16 = true`,
        // in f16), and an empty table with exit 0 would read as a pass.
        let checked = match &tables {
            VariantTables::Seed { tables, .. } => tables.iter().any(|t| !t.rows.is_empty()),
            VariantTables::Sweep { tables, .. } => tables.iter().any(|t| !t.rows.is_empty()),
        };
        let any_variants = self
            .backends
            .iter()
            .any(|b| super::select::has_variants(b.kind()));
        if error.is_none() && !checked && any_variants {
            return Err(super::SweepError::NoVariantToCheck {
                variants: match name {
                    "auto" => "any kernel variant".to_string(),
                    named => named.to_string(),
                },
                precisions: precisions
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(" or "),
            }
            .into());
        }
        Ok((tables, error))
    }

    /// Fails when no backend runs WGSL kernel variants (`--backend cpu`): `verify --variants`
    /// would check nothing and exit 0.
    pub fn check_variants_run(&self) -> Result<()> {
        if self
            .backends
            .iter()
            .any(|b| super::select::has_variants(b.kind()))
        {
            return Ok(());
        }
        let backends: Vec<&str> = self.backends.iter().map(|b| b.kind().as_str()).collect();
        Err(super::SweepError::NoVariantBackend {
            backends: backends.join(" and "),
        }
        .into())
    }

    /// The networks' benchmarks to verify.
    pub fn jobs(&self) -> Result<Vec<Job>> {
        self.scope
            .selection
            .jobs(&self.workspace.config, false, &mut Vec::new())
    }

    /// How many verifications of a benchmark `jobs` make: one per backend and repetition.
    pub fn verifications(&self, jobs: &[Job]) -> usize {
        jobs.len() * self.backends.len() * self.request.repeat
    }

    /// Verifies every op of `jobs` on every backend, [`VerifyRequest::repeat`] times: per
    /// backend, the worst ratio of error to bound of each op, and beside them what stopped the
    /// checking early (the first op beyond its bound, an interrupt), as [`verify_jobs`] says.
    pub fn networks(
        &self,
        jobs: &[Job],
        on_event: &mut dyn FnMut(VerifyEvent<'_>),
    ) -> Result<(Vec<BackendSummary>, Option<Error>)> {
        verify_jobs(
            &self.backends,
            jobs,
            &self.options,
            self.request.repeat,
            self.scope.explicit_precisions,
            on_event,
        )
    }
}
