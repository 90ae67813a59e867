#!/usr/bin/env python3
"""Times LeNet and AlexNet training phases in JAX on the CPU, the peer of `--backend cpu`.

Install (once, in a git-ignored virtual environment at the repository root):

    python3 -m venv .venv && .venv/bin/pip install "jax[cpu]"

Run:

    .venv/bin/python scripts/cpu-peer.py --model lenet --batch 64 --samples 10 --out jax.json

The networks are the zoo's (`src/model/zoo.rs`): same layers, shapes, NCHW layout (or NHWC
with `--layout nhwc`, the layout XLA's CPU convolutions prefer), f32, the
same SGD (lr 0.01, momentum 0.9, weight decay 5e-4, Torch's form), train-mode batch norm. Each
phase is its own jitted function, run alone and waited for (`block_until_ready`), timed on the
wall clock after a warm-up, as convbench's cpu backend times its phases:

- forward: the network, input to logits;
- loss_forward, loss_backward: softmax cross-entropy (per-image loss and probabilities), and
  its gradient of the mean loss with respect to the logits;
- backward: the vector-Jacobian product from the logits' gradient to every parameter's, with
  the forward's residuals saved beforehand (`jax.vjp`). It corresponds to convbench's
  grad_input + grad_params: JAX computes both in one program, so they cannot be timed apart.
  Like convbench by default, it does not compute the gradient of the input images;
- update: SGD with momentum on every parameter (buffers donated, updated in place);
- total: one jitted training step (forward, loss, backward, update), which XLA may fuse across
  phases; convbench's total is the sum of its separately run phases.

With `--networks FILE` it speaks the peer protocol of docs/peers.md instead, for
`cargo convbench peers --peer jax`: it runs the networks convbench names (LeNet and AlexNet
only), checks their parameter counts and FLOPs against convbench's, runs `--stage eval` as the
forward pass alone, and leaves `backward` out of what it reports (convbench has no phase for
both gradients at once).

The JSON written has convbench's record shape where it matters for comparison: a list of
benchmarks, each with `id`, `model`, `batch`, `backend` (`jax-cpu`) and `phases` of
`{phase, samples_ns, summary: {median_ns, ...}}`.
"""

import argparse
import json
import os
import platform
import statistics
import time

import jax
import jax.numpy as jnp
from jax import lax

LEARNING_RATE, MOMENTUM, WEIGHT_DECAY = 0.01, 0.9, 5e-4
BN_EPS = 1e-5
# "nchw" (convbench's layout) or "nhwc" (set by --layout): where the channels are.
LAYOUT = "nchw"


def channels_axis():
    return 1 if LAYOUT == "nchw" else 3


def per_channel(v):
    """A per-channel vector shaped to broadcast over activations of the layout."""
    return v[None, :, None, None] if LAYOUT == "nchw" else v[None, None, None, :]


# Forward FLOPs (2 x multiply-adds of convolutions and fully connected layers, convbench's
# count) add up here while a network is traced by `forward_flops`.
FLOPS = [0]


def conv(x, p, stride, pad):
    numbers = ("NCHW", "OIHW", "NCHW") if LAYOUT == "nchw" else ("NHWC", "OIHW", "NHWC")
    y = lax.conv_general_dilated(
        x, p["w"], (stride, stride), [(pad, pad), (pad, pad)], dimension_numbers=numbers)
    cout, cin, kh, kw = p["w"].shape
    FLOPS[0] += 2 * y.size * cin * kh * kw
    return y + per_channel(p["b"])


def max_pool(x, k, s):
    window, strides = ((1, 1, k, k), (1, 1, s, s)) if LAYOUT == "nchw" else ((1, k, k, 1), (1, s, s, 1))
    return lax.reduce_window(x, -jnp.inf, lax.max, window, strides, "VALID")


def linear(x, p):
    FLOPS[0] += 2 * x.shape[0] * p["w"].shape[0] * p["w"].shape[1]
    return x @ p["w"].T + p["b"]


def forward_flops(net, params, x):
    """convbench's forward FLOP count of `net` at `x`'s batch, from a trace (nothing runs)."""
    FLOPS[0] = 0
    # A new function each time: JAX caches traces, and a cached one would count nothing.
    jax.eval_shape(lambda params, x: net(params, x), params, x)
    return FLOPS[0]


def batch_norm(x, p):
    axes = tuple(a for a in range(4) if a != channels_axis())
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    xhat = (x - mean) * lax.rsqrt(var + BN_EPS)
    return per_channel(p["gamma"]) * xhat + per_channel(p["beta"])


def lenet(params, x):
    x = max_pool(jax.nn.relu(conv(x, params["conv1"], 1, 0)), 2, 2)
    x = batch_norm(x, params["bn1"])
    x = max_pool(jax.nn.relu(conv(x, params["conv2"], 1, 0)), 2, 2)
    return linear(x.reshape(x.shape[0], -1), params["fc"])


def alexnet(params, x):
    x = max_pool(jax.nn.relu(conv(x, params["conv1"], 4, 2)), 3, 2)
    x = max_pool(jax.nn.relu(conv(x, params["conv2"], 1, 2)), 3, 2)
    x = jax.nn.relu(conv(x, params["conv3"], 1, 1))
    x = jax.nn.relu(conv(x, params["conv4"], 1, 1))
    x = max_pool(jax.nn.relu(conv(x, params["conv5"], 1, 1)), 3, 2)
    x = x.reshape(x.shape[0], -1)
    x = jax.nn.relu(linear(x, params["fc6"]))
    x = jax.nn.relu(linear(x, params["fc7"]))
    return linear(x, params["fc8"])


def init_params(model, key):
    """Uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)], as convbench fills its weights."""
    def conv_p(key, cin, cout, k):
        scale = (cin * k * k) ** -0.5
        kw, kb = jax.random.split(key)
        return {"w": jax.random.uniform(kw, (cout, cin, k, k), jnp.float32, -scale, scale),
                "b": jax.random.uniform(kb, (cout,), jnp.float32, -scale, scale)}

    def fc_p(key, fin, fout):
        scale = fin ** -0.5
        kw, kb = jax.random.split(key)
        return {"w": jax.random.uniform(kw, (fout, fin), jnp.float32, -scale, scale),
                "b": jax.random.uniform(kb, (fout,), jnp.float32, -scale, scale)}

    keys = iter(jax.random.split(key, 16))
    if model == "lenet":
        return (lenet, (1, 28, 28), 10, {
            "conv1": conv_p(next(keys), 1, 20, 5),
            "bn1": {"gamma": jnp.ones(20), "beta": jnp.zeros(20)},
            "conv2": conv_p(next(keys), 20, 50, 5),
            "fc": fc_p(next(keys), 50 * 4 * 4, 10)})
    if model == "alexnet":
        return (alexnet, (3, 224, 224), 1000, {
            "conv1": conv_p(next(keys), 3, 64, 11),
            "conv2": conv_p(next(keys), 64, 192, 5),
            "conv3": conv_p(next(keys), 192, 384, 3),
            "conv4": conv_p(next(keys), 384, 256, 3),
            "conv5": conv_p(next(keys), 256, 256, 3),
            "fc6": fc_p(next(keys), 256 * 6 * 6, 4096),
            "fc7": fc_p(next(keys), 4096, 4096),
            "fc8": fc_p(next(keys), 4096, 1000)})
    raise SystemExit(f"unknown model {model}; use lenet or alexnet")


def loss_forward(logits, labels):
    lse = jax.nn.logsumexp(logits, axis=1)
    loss = lse - jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return loss, jnp.exp(logits - lse[:, None])


def loss_backward(probs, labels):
    return (probs - jax.nn.one_hot(labels, probs.shape[1], dtype=probs.dtype)) / probs.shape[0]


def sgd(params, velocity, grads):
    velocity = jax.tree.map(lambda v, g, w: MOMENTUM * v + g + WEIGHT_DECAY * w, velocity, grads, params)
    params = jax.tree.map(lambda w, v: w - LEARNING_RATE * v, params, velocity)
    return params, velocity


def time_phase(fn, samples, warmup, min_warmup_s):
    """Wall-clock nanoseconds of `samples` calls of `fn` (which blocks until done)."""
    start, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - start < min_warmup_s:
        fn()
        done += 1
    out = []
    for _ in range(samples):
        t = time.perf_counter_ns()
        fn()
        out.append(time.perf_counter_ns() - t)
    return out


def summary(samples):
    return {"median_ns": statistics.median(samples), "mean_ns": statistics.fmean(samples),
            "min_ns": min(samples), "max_ns": max(samples),
            "stddev_ns": statistics.stdev(samples) if len(samples) > 1 else 0.0}


def benchmark(model, batch, samples, warmup, min_warmup_s, stage="train", expected=None):
    net, (c, h, w), classes, params = init_params(model, jax.random.PRNGKey(0))
    kx, ky = jax.random.split(jax.random.PRNGKey(1))
    shape = (batch, c, h, w) if LAYOUT == "nchw" else (batch, h, w, c)
    x = jax.random.uniform(kx, shape, jnp.float32, -1.0, 1.0)
    counts = {"params": sum(leaf.size for leaf in jax.tree.leaves(params)),
              "forward_flops": forward_flops(net, params, x)}
    if expected is not None:
        want = {"params": expected["params"], "forward_flops": expected["forward_flops_per_image"] * batch}
        if counts != want:
            raise SystemExit(f"{model}: this peer's network has {counts}, convbench's {want}")
    if stage == "eval":
        forward = jax.jit(net)
        s = time_phase(lambda: forward(params, x).block_until_ready(), samples, warmup, min_warmup_s)
        return {"model": model, "stage": "eval", "batch": batch, "precision": "f32", **counts,
                "warmup_iterations": warmup,
                "phases": [{"phase": "forward", "samples_ns": s}, {"phase": "total", "samples_ns": s}]}
    labels = jax.random.randint(ky, (batch,), 0, classes, jnp.int32)
    velocity = jax.tree.map(jnp.zeros_like, params)

    forward = jax.jit(net)
    loss_fwd = jax.jit(loss_forward)
    loss_bwd = jax.jit(loss_backward)
    save = jax.jit(lambda p, x: jax.vjp(lambda p: net(p, x), p))
    backward = jax.jit(lambda vjp_fn, g: vjp_fn(g)[0])
    update = jax.jit(sgd, donate_argnums=(0, 1))

    def step(params, velocity, x, labels):
        def mean_loss(p):
            return loss_forward(net(p, x), labels)[0].mean()
        grads = jax.grad(mean_loss)(params)
        return sgd(params, velocity, grads)
    train_step = jax.jit(step, donate_argnums=(0, 1))

    logits = forward(params, x)
    _, probs = loss_fwd(logits, labels)
    dlogits = loss_bwd(probs, labels)
    _, vjp_fn = save(params, x)
    grads = backward(vjp_fn, dlogits)
    state = {"params": params, "velocity": velocity}

    def run_update():
        state["params"], state["velocity"] = update(state["params"], state["velocity"], grads)
        jax.block_until_ready(state["params"])

    def run_step():
        state["params"], state["velocity"] = train_step(state["params"], state["velocity"], x, labels)
        jax.block_until_ready(state["params"])

    phases = {
        "forward": lambda: forward(params, x).block_until_ready(),
        "loss_forward": lambda: jax.block_until_ready(loss_fwd(logits, labels)),
        "loss_backward": lambda: loss_bwd(probs, labels).block_until_ready(),
        "backward": lambda: jax.block_until_ready(backward(vjp_fn, dlogits)),
        "update": run_update,
    }
    results = []
    for name, fn in phases.items():
        s = time_phase(fn, samples, warmup, min_warmup_s)
        results.append({"phase": name, "samples_ns": s, "summary": summary(s)})
    # Donation consumed the originals; the step runs on the state the update phase left.
    s = time_phase(run_step, samples, warmup, min_warmup_s)
    results.append({"phase": "total", "samples_ns": s, "summary": summary(s)})
    return {"id": f"{model}/train/b{batch}/f32/jax-cpu", "model": model, "stage": "train",
            "batch": batch, "precision": "f32", "backend": "jax-cpu", "layout": LAYOUT,
            "timing_method": "wall_clock", "phases": results, **counts,
            "warmup_iterations": warmup}


def describe():
    """What this peer is, in the peer protocol of docs/peers.md."""
    return {"backend": "jax-cpu", "version": f"jax {jax.__version__}",
            "device": f"cpu: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
            "device_kind": "cpu", "timing_method": "wall_clock",
            "notes": f"{LAYOUT} layout; each phase its own jitted function; the backward (grad_input "
                     "and grad_params in one XLA program) is not in the record; total: one jitted "
                     "training step"}


def protocol(args):
    """`cargo convbench peers --peer jax`: the networks convbench names, in the peer protocol."""
    with open(args.networks) as f:
        networks = json.load(f)["networks"]
    if set(args.precision.split(",")) != {"f32"}:
        raise SystemExit("the JAX peer runs f32 only")
    benchmarks = []
    for expected in networks:
        for stage in args.stage.split(","):
            for batch in map(int, args.batch.split(",")):
                bench = benchmark(expected["network"]["name"], batch, args.samples, args.warmup,
                                  args.warmup_ms / 1000, stage, expected)
                # convbench has no phase for a fused backward: leave it out.
                bench["phases"] = [{"phase": p["phase"], "samples_ns": p["samples_ns"]}
                                   for p in bench["phases"] if p["phase"] != "backward"]
                for key in ("id", "backend", "layout", "timing_method"):
                    bench.pop(key, None)
                benchmarks.append(bench)
    return {**describe(), "benchmarks": benchmarks}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="lenet", help="lenet or alexnet, comma-separated")
    ap.add_argument("--batch", default="64", help="batch sizes, comma-separated")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--warmup-ms", type=int, default=200)
    ap.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw",
                    help="activation layout: convbench's (nchw) or XLA's preferred one on CPU (nhwc)")
    ap.add_argument("--out", help="JSON file to write (else stdout)")
    ap.add_argument("--describe", action="store_true", help="peer protocol: what this peer is")
    ap.add_argument("--networks", help="peer protocol: the networks file convbench wrote")
    ap.add_argument("--stage", default="train", help="peer protocol: eval, train, comma-separated")
    ap.add_argument("--precision", default="f32", help="peer protocol: f32 only")
    args = ap.parse_args()
    global LAYOUT
    LAYOUT = args.layout
    if args.describe:
        print(json.dumps(describe()))
        return
    if args.networks:
        text = json.dumps(protocol(args))
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        else:
            print(text)
        return
    benchmarks = [benchmark(m, int(b), args.samples, args.warmup, args.warmup_ms / 1000)
                  for m in args.model.split(",") for b in args.batch.split(",")]
    record = {
        "peer": "jax-cpu",
        "jax_version": jax.__version__,
        "host": {"os": platform.system().lower(), "arch": platform.machine(), "cpus": os.cpu_count()},
        "benchmarks": benchmarks,
    }
    text = json.dumps(record, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
