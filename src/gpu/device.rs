//! An opened adapter: device, queue, limits, the pipeline cache and error capture.

use super::DeviceError;
use super::adapter::{AdapterSummary, select, summarize};
use super::watchdog::Watchdog;
use crate::Result;
use crate::kernels::registry::{Shader, naga_source};
use crate::kernels::shader_set::ShaderSet;
use crate::model::Precision;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A shader module's identity: file, precision and specialised constants (tile sizes). Whether
/// subgroup blocks are compiled is fixed per device.
type ModuleKey = (&'static str, Precision, Vec<(&'static str, u32)>);

/// What every handle of one device (see [`Gpu::with_shaders`]) compiled, by the specialised
/// WGSL source (and entry point): two shader sets that agree on a shader share its module and
/// pipelines, so `ab`'s base and head compile the code they have in common once, and an A/A
/// comparison times the very same pipelines on both sides.
#[derive(Default)]
struct Compiled {
    modules: HashMap<String, wgpu::ShaderModule>,
    pipelines: HashMap<(String, &'static str), wgpu::ComputePipeline>,
}

/// What names one pipeline: shader, entry point, precision and specialised constants.
pub(super) type PipelineKey = (&'static Shader, &'static str, Precision, Vec<(&'static str, u32)>);

/// How a device is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuOptions {
    /// Use subgroup operations (`SUBGROUP`) where the adapter offers them; off, every shader
    /// runs its portable blocks (see [`crate::kernels::registry::SUBGROUPS_BEGIN`]).
    pub subgroups: bool,
}

impl Default for GpuOptions {
    /// Subgroups on, unless the environment says `CONVBENCH_SUBGROUPS=0`.
    fn default() -> Self {
        Self {
            subgroups: std::env::var("CONVBENCH_SUBGROUPS").map_or(true, |v| v != "0"),
        }
    }
}

/// A device on one adapter, with the adapter's own limits and the features convbench uses
/// (`TIMESTAMP_QUERY`, `SHADER_F16`) requested when offered.
pub struct Gpu {
    pub(super) device: wgpu::Device,
    pub(super) queue: wgpu::Queue,
    pub(super) summary: AdapterSummary,
    pub(super) limits: wgpu::Limits,
    subgroups: bool,
    /// Where the WGSL comes from (embedded unless [`Gpu::with_shaders`] says otherwise).
    shaders: Arc<ShaderSet>,
    /// This handle's pipelines by shader file, precision and constants (its shader set fixes
    /// the source): the lookup of every dispatch of every load.
    pipelines: Mutex<HashMap<(ModuleKey, &'static str), wgpu::ComputePipeline>>,
    /// Shared by every handle of the device.
    compiled: Arc<Mutex<Compiled>>,
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// The deadline of every wait for the device.
    pub(super) watchdog: Watchdog,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.summary)
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// Opens the adapter named by `selector` (see `--adapter`), or the best one.
    pub fn open(selector: Option<&str>) -> Result<Self> {
        Self::open_with(selector, GpuOptions::default())
    }

    /// [`Self::open`] with `options`.
    pub fn open_with(selector: Option<&str>, options: GpuOptions) -> Result<Self> {
        let watchdog = Watchdog::from_env()?;
        let adapter = select(selector)?;
        let summary = summarize(0, &adapter);
        let mut wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_F16;
        if options.subgroups {
            wanted |= wgpu::Features::SUBGROUP;
        }
        let required_features = adapter.features() & wanted;
        let limits = adapter.limits();
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("convbench"),
            required_features,
            required_limits: limits.clone(),
            ..Default::default()
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&descriptor)).map_err(|e| DeviceError::Open {
                adapter: summary.fingerprint.label(),
                message: e.to_string(),
            })?;
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            if let Ok(mut errors) = sink.lock() {
                errors.push(error.to_string());
            }
        }));
        Ok(Self {
            device,
            queue,
            summary,
            limits,
            subgroups: required_features.contains(wgpu::Features::SUBGROUP),
            shaders: Arc::new(ShaderSet::embedded()?),
            pipelines: Mutex::new(HashMap::new()),
            compiled: Arc::default(),
            uncaptured,
            watchdog,
        })
    }

    /// The same device and queue compiling its shaders from `shaders`: `ab` runs two shader
    /// sets side by side on one GPU this way, their work queued on the same queue so that both
    /// see the same clocks and load. What both sets spell alike is compiled once.
    pub fn with_shaders(&self, shaders: ShaderSet) -> Self {
        Self {
            device: self.device.clone(),
            queue: self.queue.clone(),
            summary: self.summary.clone(),
            limits: self.limits.clone(),
            subgroups: self.subgroups,
            shaders: Arc::new(shaders),
            pipelines: Mutex::new(HashMap::new()),
            compiled: Arc::clone(&self.compiled),
            uncaptured: Arc::clone(&self.uncaptured),
            watchdog: self.watchdog,
        }
    }

    /// The shader set this device compiles from.
    pub fn shaders(&self) -> &ShaderSet {
        &self.shaders
    }

    /// What the adapter is and offers.
    pub fn summary(&self) -> &AdapterSummary {
        &self.summary
    }

    /// Whether programs of `precision` can run.
    pub fn supports(&self, precision: Precision) -> bool {
        precision == Precision::F32 || self.device.features().contains(wgpu::Features::SHADER_F16)
    }

    /// Largest buffer one storage binding can cover (bytes).
    pub fn max_tensor_bytes(&self) -> u64 {
        self.limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
    }

    /// Whether shaders run their subgroup blocks (the adapter has `SUBGROUP` and it was not
    /// turned off).
    pub fn uses_subgroups(&self) -> bool {
        self.subgroups
    }

    /// Whether ops are timed with GPU timestamps.
    pub fn has_timestamps(&self) -> bool {
        self.device.features().contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Runs `f` inside validation and out-of-memory error scopes; an error names `what`.
    pub(super) fn scoped<T>(&self, what: &str, f: impl FnOnce() -> T) -> Result<T> {
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let value = f();
        if let Some(error) = pollster::block_on(memory.pop()) {
            let _ = pollster::block_on(validation.pop());
            return Err(DeviceError::OutOfMemory {
                what: what.to_string(),
                message: error.to_string(),
            }
            .into());
        }
        if let Some(error) = pollster::block_on(validation.pop()) {
            return Err(DeviceError::Rejected {
                what: what.to_string(),
                message: error.to_string(),
            }
            .into());
        }
        self.check_uncaptured(what)?;
        Ok(value)
    }

    /// Fails with any error wgpu reported outside a scope.
    pub(super) fn check_uncaptured(&self, what: &str) -> Result<()> {
        let errors = self
            .uncaptured
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(DeviceError::Uncaptured {
                what: what.to_string(),
                messages: errors,
            }
            .into())
        }
    }

    /// Compiles the pipelines `dispatches` name (shader, entry point, precision, constants) on
    /// several threads at once, one per core up to one per pipeline, so that loading a program
    /// waits for its slowest pipeline rather than for the sum of them (drivers compile on the
    /// CPU; wgpu keeps error scopes per thread). What fails here is left for [`Self::pipeline`]
    /// to compile again and report, in the program's order.
    pub(super) fn precompile(&self, dispatches: &[PipelineKey]) {
        let dispatches: Vec<&PipelineKey> = match self.pipelines.lock() {
            Ok(cache) => dispatches
                .iter()
                .filter(|(shader, entry, precision, constants)| {
                    !cache.contains_key(&((shader.file, *precision, constants.clone()), *entry))
                })
                .collect(),
            Err(_) => return,
        };
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(dispatches.len());
        if threads < 2 {
            return;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let worker = || {
                    while let Some((shader, entry, precision, constants)) = dispatches
                        .get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                        .copied()
                    {
                        let _ = self.pipeline(shader, entry, *precision, constants);
                    }
                };
                // A thread the system refuses only means fewer compile at once.
                if std::thread::Builder::new().spawn_scoped(scope, worker).is_err() {
                    break;
                }
            }
        });
    }

    /// The pipeline of `entry` in `shader` at `precision`, specialised with `constants` (see
    /// [`ShaderSet::final_source`]), compiled once and cached.
    pub(super) fn pipeline(
        &self,
        shader: &'static Shader,
        entry: &'static str,
        precision: Precision,
        constants: &[(&'static str, u32)],
    ) -> Result<wgpu::ComputePipeline> {
        let module_key: ModuleKey = (shader.file, precision, constants.to_vec());
        let key = (module_key.clone(), entry);
        if let Some(p) = self.pipelines.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(p);
        }
        if !self.supports(precision) {
            return Err(DeviceError::NoF16 {
                adapter: self.summary.fingerprint.label(),
            }
            .into());
        }
        let what = if constants.is_empty() {
            format!("{} ({precision})", shader.file)
        } else {
            let sizes: Vec<String> = constants.iter().map(|(n, v)| format!("{n}={v}")).collect();
            format!("{} ({precision}, {})", shader.file, sizes.join(" "))
        };
        let source = self
            .shaders
            .final_source(shader, precision, self.subgroups, constants)
            .ok_or_else(|| DeviceError::UndeclaredConstant { what: what.clone() })?;
        let shared_key = (source, entry);
        let lock = || {
            self.compiled
                .lock()
                .map_err(|_| DeviceError::Poisoned { what: "shader cache" })
        };
        // The lock is not held while compiling, so that [`Self::precompile`]'s threads compile
        // at once; two threads that race on one pipeline both compile it and the first stays.
        let (pipeline, module) = {
            let compiled = lock()?;
            (
                compiled.pipelines.get(&shared_key).cloned(),
                compiled.modules.get(&shared_key.0).cloned(),
            )
        };
        let pipeline = match pipeline {
            Some(pipeline) => pipeline,
            None => {
                let module = match module {
                    Some(module) => module,
                    None => {
                        let module = self.scoped(&format!("compiling {what}"), || {
                            self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                                label: Some(shader.file),
                                source: wgpu::ShaderSource::Wgsl(
                                    naga_source(&shared_key.0).into_owned().into(),
                                ),
                            })
                        })?;
                        lock()?
                            .modules
                            .entry(shared_key.0.clone())
                            .or_insert(module)
                            .clone()
                    }
                };
                let pipeline = self.scoped(&format!("creating pipeline {entry} of {what}"), || {
                    self.device
                        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                            label: Some(entry),
                            layout: None,
                            module: &module,
                            entry_point: Some(entry),
                            compilation_options: Default::default(),
                            cache: None,
                        })
                })?;
                lock()?.pipelines.entry(shared_key).or_insert(pipeline).clone()
            }
        };
        if let Ok(mut cache) = self.pipelines.lock() {
            cache.insert(key, pipeline.clone());
        }
        Ok(pipeline)
    }
}
