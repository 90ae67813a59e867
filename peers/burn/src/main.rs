//! `burn-peer`: times Burn's conv2d on its wgpu backend (forward, gradient with respect to the
//! input, gradient with respect to the weights and bias) on the shapes of a convbench suite or
//! the convolutions of a zoo network, and writes a convbench `RunRecord` that `cargo convbench
//! report` and `plot` read, each benchmark's backend `burn-wgpu`.
//!
//! Every timed call is wall clock from a device sync to a device sync. Backward phases go through
//! Burn's autodiff: the loss `sum(conv2d(x, w, b) * dy)` is built (untimed, synced) with only `x`
//! tracked for `grad_input`, only `w` and `b` for `grad_params`, and `backward()` is timed; so
//! each backward sample also holds the gradient of the `sum` and of the `* dy` (two elementwise
//! passes over the output) besides Burn's `conv2d_x_backward` or `conv2d_weight_backward` and
//! `conv2d_bias_backward`.

use burn::prelude::*;
use burn::tensor::Distribution;
use burn::tensor::module::conv2d;
use burn::tensor::ops::ConvOptions;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const BACKEND: &str = "burn-wgpu";
const BURN_VERSION: &str = "0.22.1";
const WGPU_VERSION: &str = "30.0.2";

/// One convolution: `(in_channels, height, width)` input, `out_channels`, square kernel,
/// stride and padding, with bias (as convbench's `Conv2d::square`).
#[derive(Clone, Debug)]
struct Conv {
    name: &'static str,
    input: (usize, usize, usize),
    out: usize,
    k: usize,
    s: usize,
    p: usize,
    /// Whether the gradient with respect to the input is timed (convbench skips it for the
    /// first layer of a network unless `--data-grad`).
    grad_input: bool,
}

impl Conv {
    fn output_hw(&self) -> (usize, usize) {
        let (_, h, w) = self.input;
        (
            (h + 2 * self.p - self.k) / self.s + 1,
            (w + 2 * self.p - self.k) / self.s + 1,
        )
    }
    /// `2 x` multiply-adds at batch `n`: convbench's count for every conv phase.
    fn flops(&self, n: usize) -> u64 {
        let (oh, ow) = self.output_hw();
        2 * (n * self.out * oh * ow * self.input.0 * self.k * self.k) as u64
    }
    fn x_len(&self, n: usize) -> u64 {
        (n * self.input.0 * self.input.1 * self.input.2) as u64
    }
    fn y_len(&self, n: usize) -> u64 {
        let (oh, ow) = self.output_hw();
        (n * self.out * oh * ow) as u64
    }
    fn w_len(&self) -> u64 {
        (self.out * self.input.0 * self.k * self.k) as u64
    }
    fn params(&self) -> usize {
        self.w_len() as usize + self.out
    }
    /// Bytes each phase must move at least: every tensor read or written once, f32.
    fn bytes(&self, n: usize, phase: &str) -> u64 {
        let b = self.out as u64;
        4 * match phase {
            "forward" => self.x_len(n) + self.w_len() + b + self.y_len(n),
            "grad_input" => self.y_len(n) + self.w_len() + self.x_len(n),
            _ => self.x_len(n) + self.y_len(n) + self.w_len() + b,
        }
    }
}

/// convbench's `layers` suite (src/model/suites.rs): convnet-benchmarks L1-L5, stride 1, no
/// padding, with bias.
fn layers_suite() -> Vec<Conv> {
    let e = |name, input, out, k| Conv {
        name,
        input,
        out,
        k,
        s: 1,
        p: 0,
        grad_input: true,
    };
    vec![
        e("L1", (3, 128, 128), 96, 11),
        e("L2", (64, 64, 64), 128, 9),
        e("L3", (128, 32, 32), 128, 9),
        e("L4", (128, 16, 16), 128, 7),
        e("L5", (384, 13, 13), 384, 3),
    ]
}

/// The convolutions of convbench's `alexnet` (src/model/zoo.rs, "One Weird Trick", 3x224x224).
fn alexnet(data_grad: bool) -> Vec<Conv> {
    let c = |name, input, out, k, s, p| Conv {
        name,
        input,
        out,
        k,
        s,
        p,
        grad_input: true,
    };
    vec![
        Conv {
            grad_input: data_grad,
            ..c("conv1", (3, 224, 224), 64, 11, 4, 2)
        },
        c("conv2", (64, 27, 27), 192, 5, 1, 2),
        c("conv3", (192, 13, 13), 384, 3, 1, 1),
        c("conv4", (384, 13, 13), 256, 3, 1, 1),
        c("conv5", (256, 13, 13), 256, 3, 1, 1),
    ]
}

struct Args {
    suite: Option<String>,
    model: Option<String>,
    batch: usize,
    samples: usize,
    warmup: usize,
    warmup_min_ms: u64,
    data_grad: bool,
    out: Option<String>,
    only: Vec<String>,
}

const USAGE: &str = "usage: burn-peer (--suite layers | --model alexnet) [--batch N] [--samples N] \
[--warmup N] [--warmup-ms MS] [--data-grad] [--only NAME,...] [--out FILE.json]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        suite: None,
        model: None,
        batch: 1,
        samples: 10,
        warmup: 3,
        warmup_min_ms: 200,
        data_grad: false,
        out: None,
        only: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value\n{USAGE}"));
        let number = |v: String| v.parse::<usize>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--suite" => args.suite = Some(value()?),
            "--model" => args.model = Some(value()?),
            "--batch" => args.batch = number(value()?)?,
            "--samples" => args.samples = number(value()?)?,
            "--warmup" => args.warmup = number(value()?)?,
            "--warmup-ms" => args.warmup_min_ms = number(value()?)? as u64,
            "--data-grad" => args.data_grad = true,
            "--only" => args.only = value()?.split(',').map(str::to_string).collect(),
            "--out" => args.out = Some(value()?),
            "-h" | "--help" => return Err(USAGE.into()),
            _ => return Err(format!("unknown argument {flag}\n{USAGE}")),
        }
    }
    if args.suite.is_some() == args.model.is_some() {
        return Err(format!("give one of --suite and --model\n{USAGE}"));
    }
    if args.samples == 0 || args.batch == 0 {
        return Err("--samples and --batch must be at least 1".into());
    }
    Ok(args)
}

// ---- convbench's RunRecord (src/results/mod.rs), the fields it needs, written with serde ----

#[derive(Serialize, Clone)]
struct Adapter {
    backend: String,
    vendor_id: u32,
    device_id: u32,
    name: String,
    device_type: String,
    driver: String,
    driver_info: String,
    runtime_version: String,
}

#[derive(Serialize, Clone, Copy)]
struct Summary {
    median_ns: f64,
    mean_ns: f64,
    min_ns: f64,
    max_ns: f64,
    stddev_ns: f64,
}

fn summary(samples: &[u64]) -> Summary {
    let mut s: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let median_ns = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let mean_ns = s.iter().sum::<f64>() / n as f64;
    let stddev_ns = if n > 1 {
        (s.iter().map(|x| (x - mean_ns).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    Summary {
        median_ns,
        mean_ns,
        min_ns: s[0],
        max_ns: s[n - 1],
        stddev_ns,
    }
}

#[derive(Serialize)]
struct PhaseResult {
    phase: &'static str,
    samples_ns: Vec<u64>,
    summary: Summary,
}

#[derive(Serialize)]
struct LayerResult {
    layer: String,
    op: &'static str,
    phase: &'static str,
    samples_ns: Vec<u64>,
    summary: Summary,
    flops: u64,
    variant: String,
    bytes: u64,
}

#[derive(Serialize)]
struct Benchmark {
    id: String,
    model: String,
    stage: &'static str,
    batch: usize,
    precision: &'static str,
    backend: &'static str,
    adapter: Adapter,
    timing_method: &'static str,
    warmup_iterations: usize,
    verified: bool,
    params: usize,
    forward_flops: u64,
    iteration_flops: u64,
    device_memory_bytes: u64,
    phases: Vec<PhaseResult>,
    layers: Vec<LayerResult>,
    kernels: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct Host {
    os: &'static str,
    arch: &'static str,
    cpus: usize,
}

#[derive(Serialize)]
struct Settings {
    samples: usize,
    warmup_iterations: usize,
    warmup_min_ms: u64,
    verify: bool,
    data_grad: bool,
    layers: bool,
}

#[derive(Serialize)]
struct RunRecord {
    format_version: u32,
    convbench_version: String,
    created_unix_s: u64,
    git_commit: Option<String>,
    git_dirty: Option<bool>,
    host: Host,
    settings: Settings,
    benchmarks: Vec<Benchmark>,
}

// ---- the measurements ----

const PHASES: [&str; 3] = ["forward", "grad_input", "grad_params"];

/// Waits for the device; a device that fails ends the run (exit 1), naming the adapter's error.
fn sync(device: &Device) {
    if let Err(e) = device.sync() {
        eprintln!(
            "burn-peer: the device failed to execute ({e:?}); nothing was written. Try a smaller \
             --batch, or another adapter (CUBECL_WGPU_DEFAULT_DEVICE)"
        );
        std::process::exit(1);
    }
}

/// Wall clock of `f` from a device sync to a device sync.
fn timed<T>(device: &Device, f: impl FnOnce() -> T) -> (u64, T) {
    sync(device);
    let start = Instant::now();
    let out = f();
    sync(device);
    (start.elapsed().as_nanos() as u64, out)
}

struct Tensors {
    x: Tensor<4>,
    w: Tensor<4>,
    b: Tensor<1>,
    dy: Tensor<4>,
    options: ConvOptions<2>,
}

impl Tensors {
    fn new(conv: &Conv, batch: usize, device: &Device) -> Self {
        let (c, h, w) = conv.input;
        let (oh, ow) = conv.output_hw();
        let fan_in = (c * conv.k * conv.k) as f64;
        let scale = 1.0 / fan_in.sqrt();
        Self {
            x: Tensor::random([batch, c, h, w], Distribution::Uniform(-1.0, 1.0), device),
            w: Tensor::random(
                [conv.out, c, conv.k, conv.k],
                Distribution::Uniform(-scale, scale),
                device,
            ),
            b: Tensor::zeros([conv.out], device),
            dy: Tensor::random(
                [batch, conv.out, oh, ow],
                Distribution::Uniform(-1.0, 1.0),
                device,
            ),
            options: ConvOptions::new([conv.s, conv.s], [conv.p, conv.p], [1, 1], 1),
        }
    }

    /// One sample of `phase` (ns), the result synced and dropped.
    fn sample(&self, phase: &str, device: &Device) -> u64 {
        match phase {
            "forward" => {
                let (ns, y) = timed(device, || {
                    conv2d(
                        self.x.clone(),
                        self.w.clone(),
                        Some(self.b.clone()),
                        self.options.clone(),
                    )
                });
                drop(y);
                ns
            }
            "grad_input" => {
                let x = self.x.clone().autodiff().require_grad();
                let loss = self.loss(x.clone(), self.w.clone().autodiff(), self.b.clone().autodiff());
                let (ns, grads) = timed(device, || loss.backward());
                let dx = x.grad(&grads).expect("x tracked");
                drop(dx);
                ns
            }
            _ => {
                let w = self.w.clone().autodiff().require_grad();
                let b = self.b.clone().autodiff().require_grad();
                let loss = self.loss(self.x.clone().autodiff(), w.clone(), b.clone());
                let (ns, grads) = timed(device, || loss.backward());
                let dw = w.grad(&grads).expect("w tracked");
                let db = b.grad(&grads).expect("b tracked");
                drop((dw, db));
                ns
            }
        }
    }

    /// `sum(conv2d(x, w, b) * dy)`: its gradient with respect to the conv output is `dy`.
    fn loss(&self, x: Tensor<4>, w: Tensor<4>, b: Tensor<1>) -> Tensor<1> {
        let y = conv2d(x, w, Some(b), self.options.clone());
        (y * self.dy.clone().autodiff()).sum()
    }
}

fn adapter(device: &Device) -> Adapter {
    let name = device
        .identity()
        .map(|id| id.name)
        .unwrap_or_else(|| "unknown".into());
    // Burn reports the adapter's name only; the other fields come from wgpu's own listing of
    // the adapter of that name (the same wgpu 30 that Burn links).
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    descriptor.backends = wgpu::Backends::all();
    let instance = wgpu::Instance::new(descriptor);
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    let info = adapters
        .iter()
        .map(|a| a.get_info())
        .filter(|i| i.name == name)
        .min_by_key(|i| i.backend != wgpu::Backend::Vulkan);
    let runtime_version = format!("burn {BURN_VERSION} (wgpu {WGPU_VERSION})");
    match info {
        Some(i) => Adapter {
            backend: i.backend.to_str().to_string(),
            vendor_id: i.vendor,
            device_id: i.device,
            name,
            device_type: match i.device_type {
                wgpu::DeviceType::DiscreteGpu => "discrete",
                wgpu::DeviceType::IntegratedGpu => "integrated",
                wgpu::DeviceType::VirtualGpu => "virtual",
                wgpu::DeviceType::Cpu => "cpu",
                wgpu::DeviceType::Other => "other",
            }
            .into(),
            driver: i.driver,
            driver_info: i.driver_info,
            runtime_version,
        },
        None => Adapter {
            backend: "wgpu".into(),
            vendor_id: 0,
            device_id: 0,
            name,
            device_type: "other".into(),
            driver: String::new(),
            driver_info: String::new(),
            runtime_version,
        },
    }
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let (convs, prefix, single) = match (&args.suite, &args.model) {
        (Some(s), _) if s == "layers" => (layers_suite(), "layers/", true),
        (_, Some(m)) if m == "alexnet" => (alexnet(args.data_grad), "alexnet", false),
        _ => {
            eprintln!("known: --suite layers, --model alexnet");
            std::process::exit(2);
        }
    };
    let convs: Vec<Conv> = convs
        .into_iter()
        .filter(|c| args.only.is_empty() || args.only.iter().any(|o| o == c.name))
        .collect();
    let created_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let adapter = adapter(&device);
    eprintln!("burn {BURN_VERSION} on {} ({})", adapter.name, adapter.backend);

    // One entry per conv: its layer results (one per phase timed) and warm-up count.
    let mut measured = Vec::new();
    for conv in &convs {
        let t = Tensors::new(conv, args.batch, &device);
        sync(&device);
        let phases: Vec<&str> = PHASES
            .iter()
            .copied()
            .filter(|p| *p != "grad_input" || conv.grad_input)
            .collect();
        let mut layers = Vec::new();
        let mut warm_min = usize::MAX;
        for phase in &phases {
            // Warm-up: at least `--warmup` calls and `--warmup-ms`; the first calls autotune.
            let start = Instant::now();
            let mut warm = 0;
            while warm < args.warmup || start.elapsed() < Duration::from_millis(args.warmup_min_ms) {
                t.sample(phase, &device);
                warm += 1;
            }
            warm_min = warm_min.min(warm);
            let samples: Vec<u64> = (0..args.samples).map(|_| t.sample(phase, &device)).collect();
            let s = summary(&samples);
            eprintln!(
                "{:<6} {:<12} median {:>10.3} ms  {:>8.1} GFLOP/s",
                conv.name,
                phase,
                s.median_ns / 1e6,
                conv.flops(args.batch) as f64 / s.median_ns
            );
            layers.push(LayerResult {
                layer: conv.name.to_string(),
                op: "conv2d",
                phase,
                summary: s,
                samples_ns: samples,
                flops: conv.flops(args.batch),
                variant: format!(
                    "burn {} autotune",
                    if *phase == "forward" { "conv2d" } else { "autodiff" }
                ),
                bytes: conv.bytes(args.batch, phase),
            });
        }
        measured.push((conv.clone(), layers, warm_min));
    }

    let bench = |model: String, entries: Vec<(Conv, Vec<LayerResult>, usize)>| {
        let n = args.batch;
        let mut phases = Vec::new();
        let sample_count = args.samples;
        // A phase's samples: the sum over layers of the i-th sample; total: over every phase.
        let mut total = vec![0u64; sample_count];
        for phase in PHASES {
            let rows: Vec<&LayerResult> = entries
                .iter()
                .flat_map(|(_, l, _)| l.iter())
                .filter(|l| l.phase == phase)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let samples: Vec<u64> = (0..sample_count)
                .map(|i| rows.iter().map(|l| l.samples_ns[i]).sum())
                .collect();
            for (t, s) in total.iter_mut().zip(&samples) {
                *t += s;
            }
            phases.push(PhaseResult {
                phase,
                summary: summary(&samples),
                samples_ns: samples,
            });
        }
        phases.push(PhaseResult {
            phase: "total",
            summary: summary(&total),
            samples_ns: total,
        });
        let forward_flops = entries.iter().map(|(c, _, _)| c.flops(n)).sum();
        let iteration_flops = entries
            .iter()
            .flat_map(|(c, l, _)| l.iter().map(move |_| c.flops(n)))
            .sum();
        Benchmark {
            id: format!("{model}/train/b{n}/f32/{BACKEND}"),
            model,
            stage: "train",
            batch: n,
            precision: "f32",
            backend: BACKEND,
            adapter: adapter.clone(),
            timing_method: "wall_clock",
            warmup_iterations: entries.iter().map(|(_, _, w)| *w).min().unwrap_or(0),
            verified: false,
            params: entries.iter().map(|(c, _, _)| c.params()).sum(),
            forward_flops,
            iteration_flops,
            device_memory_bytes: 0,
            phases,
            layers: entries.into_iter().flat_map(|(_, l, _)| l).collect(),
            kernels: BTreeMap::new(),
        }
    };
    let benchmarks = if single {
        measured
            .into_iter()
            .map(|e| bench(format!("{prefix}{}", e.0.name), vec![e]))
            .collect()
    } else {
        vec![bench(prefix.to_string(), measured)]
    };
    let record = RunRecord {
        format_version: 2,
        convbench_version: format!("burn-peer {} (burn {BURN_VERSION})", env!("CARGO_PKG_VERSION")),
        created_unix_s,
        git_commit: None,
        git_dirty: None,
        host: Host {
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        },
        settings: Settings {
            samples: args.samples,
            warmup_iterations: args.warmup,
            warmup_min_ms: args.warmup_min_ms,
            verify: false,
            data_grad: args.data_grad,
            layers: true,
        },
        benchmarks,
    };
    let json = serde_json::to_string_pretty(&record).expect("a record serializes");
    match &args.out {
        Some(path) => std::fs::write(path, json + "\n").unwrap_or_else(|e| {
            eprintln!("cannot write {path}: {e}");
            std::process::exit(1);
        }),
        None => println!("{json}"),
    }
}
