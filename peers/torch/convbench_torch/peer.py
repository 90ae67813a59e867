"""The PyTorch peer of convbench: the zoo's networks, built from convbench's own definitions.

Install (once; it pulls torch from PyPI):

    pip install ./peers/torch

Run through convbench, which hands over the networks and reads the result back:

    cargo convbench peers --peer torch --model lenet,alexnet --batch 1,8 --stages eval,train

It speaks the peer protocol of docs/peers.md: `--describe` prints what it is; otherwise it reads
the networks convbench wrote (`--networks FILE`: each network's layers as `src/model` defines
them, its parameter count and its FLOPs), builds each one as a graph of torch modules, checks
the parameter count and the forward FLOPs of what it built against convbench's (it refuses to
time another network), and times the phases as convbench names them:

- forward: the network, input to logits (train mode and autograd on when training; eval mode
  under `torch.inference_mode()` when evaluating);
- loss_forward, loss_backward: cross-entropy of the logits (mean over the batch), and its
  gradient with respect to the logits (autograd);
- grad_input and grad_params: layer by layer from the last, as Torch's `updateGradInput` and
  `accGradParameters`: `torch.autograd.grad` of each layer's output with respect to its inputs,
  then (a separate call) to its parameters, each call timed on its own and the times summed.
  Like convbench by default, the first layer's input gradient is not computed;
- update: `torch.optim.SGD` (lr 0.01, momentum 0.9, weight decay 5e-4, convbench's) step;
- total: one training step as PyTorch code runs it (forward, loss, `loss.backward()`, step),
  timed as a whole; when evaluating, the forward pass.

Every sample is timed on the wall clock, synchronized (`torch.cuda.synchronize()` on a GPU,
where `torch.backends.cudnn.benchmark` is on, as the seeds ran); warm-up by count and duration
first; raw samples are written.
"""

import argparse
import json
import os
import platform
import time

import torch
import torch.nn.functional as F
from torch import nn

LEARNING_RATE, MOMENTUM, WEIGHT_DECAY = 0.01, 0.9, 5e-4
DTYPES = {"f32": torch.float32, "f16": torch.float16}


class Concat(nn.Module):
    def forward(self, *inputs):
        return torch.cat(inputs, 1)


class Add(nn.Module):
    def forward(self, a, b):
        return a + b


class Flatten(nn.Module):
    """A fully connected layer of convbench flattens its input."""

    def __init__(self, linear):
        super().__init__()
        self.linear = linear

    def forward(self, x):
        return self.linear(x.flatten(1))


def build_layer(kind):
    """The torch module of one layer of `src/model` (its `LayerKind`, tagged by `op`)."""
    op = kind["op"]
    if op == "conv2d":
        return nn.Conv2d(kind["in_channels"], kind["out_channels"], tuple(kind["kernel"]),
                         tuple(kind["stride"]), tuple(kind["padding"]), tuple(kind["dilation"]),
                         kind["groups"], kind["bias"])
    if op == "pool":
        args = (tuple(kind["kernel"]), tuple(kind["stride"]), tuple(kind["padding"]))
        if kind["kind"] == "max":
            return nn.MaxPool2d(*args, ceil_mode=kind["ceil_mode"])
        return nn.AvgPool2d(*args, ceil_mode=kind["ceil_mode"],
                            count_include_pad=kind["count_include_pad"])
    if op == "relu":
        return nn.ReLU()
    if op == "lrn":
        return nn.LocalResponseNorm(kind["size"], kind["alpha"], kind["beta"], kind["k"])
    if op == "batch_norm":
        return nn.BatchNorm2d(kind["channels"], kind["eps"], kind["momentum"])
    if op == "linear":
        return Flatten(nn.Linear(kind["in_features"], kind["out_features"], kind["bias"]))
    if op == "global_avg_pool":
        return nn.AdaptiveAvgPool2d(1)
    if op == "concat":
        return Concat()
    if op == "add":
        return Add()
    raise SystemExit(f"convbench_torch does not know the layer op `{op}`")


class Network(nn.Module):
    """A convbench network: layers in topological order; node 0 is the input, layer i node i+1."""

    def __init__(self, definition):
        super().__init__()
        self.name = definition["name"]
        self.input = tuple(definition["input"])
        self.layers = nn.ModuleList(build_layer(layer["kind"]) for layer in definition["layers"])
        # A layer read from data with no inputs reads the layer before.
        self.inputs = [layer.get("inputs") or [i] for i, layer in enumerate(definition["layers"])]

    def forward(self, x):
        nodes = [x]
        for layer, inputs in zip(self.layers, self.inputs):
            nodes.append(layer(*(nodes[i] for i in inputs)))
        return nodes[-1]

    def param_count(self):
        return sum(p.numel() for p in self.parameters())

    def forward_flops(self, x):
        """2 x multiply-adds of convolutions and fully connected layers, convbench's count."""
        flops = 0

        def count(module, inputs, output):
            nonlocal flops
            if isinstance(module, nn.Conv2d):
                k = module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
                flops += 2 * output.numel() * k
            elif isinstance(module, nn.Linear):
                flops += 2 * inputs[0].shape[0] * module.in_features * module.out_features

        hooks = [m.register_forward_hook(count) for m in self.modules()
                 if isinstance(m, (nn.Conv2d, nn.Linear))]
        with torch.inference_mode():
            self.forward(x)
        for hook in hooks:
            hook.remove()
        return flops


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(fn, device):
    """Nanoseconds of one synchronized call of `fn`, and its result."""
    synchronize(device)
    start = time.perf_counter_ns()
    result = fn()
    synchronize(device)
    return time.perf_counter_ns() - start, result


def layer_backward(net, x, grad_logits, device):
    """Nanoseconds of the layer-by-layer input gradients and parameter gradients (summed), and
    the parameter gradients: each layer is run on detached inputs so that its backward can be
    asked for alone."""
    nodes, tape = [x], []
    for layer, inputs in zip(net.layers, net.inputs):
        leaves = [nodes[i] if i == 0 else nodes[i].detach().requires_grad_() for i in inputs]
        out = layer(*leaves)
        tape.append((layer, inputs, leaves, out))
        nodes.append(out)
    grads = {len(nodes) - 1: grad_logits}
    grad_input_ns = grad_params_ns = 0
    param_grads = {}
    for index in range(len(tape) - 1, -1, -1):
        layer, inputs, leaves, out = tape[index]
        grad_out = grads.pop(index + 1, None)
        if grad_out is None:
            continue
        params = list(layer.parameters())
        wanted = [(i, leaf) for i, leaf in zip(inputs, leaves) if i != 0]
        if wanted:
            ns, gs = timed(lambda: torch.autograd.grad(out, [leaf for _, leaf in wanted], grad_out,
                                                       retain_graph=True), device)
            grad_input_ns += ns
            for (i, _), g in zip(wanted, gs):
                grads[i] = grads[i] + g if i in grads else g
        if params:
            ns, gs = timed(lambda: torch.autograd.grad(out, params, grad_out, retain_graph=True), device)
            grad_params_ns += ns
            param_grads.update(zip(map(id, params), gs))
    return grad_input_ns, grad_params_ns, param_grads


def sample_phases(fns, samples, warmup, warmup_s):
    """Calls `fns()` (which returns {phase: ns}) until warm, then `samples` times."""
    start, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - start < warmup_s:
        fns()
        done += 1
    out = {}
    for _ in range(samples):
        for phase, ns in fns().items():
            out.setdefault(phase, []).append(max(1, ns))
    return done, out


def benchmark(definition, expected, stage, batch, precision, device, args):
    torch.manual_seed(0)
    dtype = DTYPES[precision]
    net = Network(definition).to(device=device, dtype=dtype)
    c, h, w = net.input
    x = torch.rand(batch, c, h, w, device=device, dtype=dtype) * 2 - 1
    params, flops = net.param_count(), net.forward_flops(x)
    if params != expected["params"] or flops != expected["forward_flops_per_image"] * batch:
        raise SystemExit(f"{net.name}: built {params} parameters and {flops} FLOPs, convbench has "
                         f"{expected['params']} and {expected['forward_flops_per_image'] * batch}")
    with torch.inference_mode():
        classes = net.eval()(x[:1]).shape[1]
    labels = torch.randint(0, classes, (batch,), device=device)
    optimizer = torch.optim.SGD(net.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM,
                                weight_decay=WEIGHT_DECAY)

    if stage == "eval":
        net.eval()

        def phases():
            with torch.inference_mode():
                ns, _ = timed(lambda: net(x), device)
            return {"forward": ns, "total": ns}
    else:
        net.train()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(net(x), labels).backward()
            optimizer.step()

        def phases():
            forward_ns, logits = timed(lambda: net(x), device)
            leaf = logits.detach().requires_grad_()
            loss_forward_ns, loss = timed(lambda: F.cross_entropy(leaf, labels), device)
            loss_backward_ns, (grad_logits,) = timed(lambda: torch.autograd.grad(loss, leaf), device)
            grad_input_ns, grad_params_ns, grads = layer_backward(net, x, grad_logits, device)
            for p in net.parameters():
                p.grad = grads[id(p)]
            update_ns, _ = timed(optimizer.step, device)
            total_ns, _ = timed(step, device)
            return {"forward": forward_ns, "loss_forward": loss_forward_ns,
                    "loss_backward": loss_backward_ns, "grad_input": grad_input_ns,
                    "grad_params": grad_params_ns, "update": update_ns, "total": total_ns}

    warm, samples = sample_phases(phases, args.samples, args.warmup, args.warmup_ms / 1000)
    return {"model": net.name, "stage": stage, "batch": batch, "precision": precision,
            "params": params, "forward_flops": flops, "warmup_iterations": warm,
            "phases": [{"phase": phase, "samples_ns": ns} for phase, ns in samples.items()]}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(device):
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
        # Strict f32, as convbench computes it: TF32 would round the inputs of every
        # convolution and product to 10 bits of mantissa (cuDNN allows it by default).
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        name = f"cuda: {torch.cuda.get_device_name(device)}"
        notes = f"cudnn {torch.backends.cudnn.version()}, cudnn.benchmark on, TF32 off"
    else:
        name = f"cpu: {cpu_name()}, {torch.get_num_threads()} threads"
        notes = f"{torch.get_num_threads()} threads, mkldnn {torch.backends.mkldnn.is_available()}"
    notes += ("; grad_input and grad_params layer by layer (torch.autograd.grad per layer); "
              "total: one training step (forward, loss, loss.backward(), SGD step)")
    return {"backend": f"torch-{device.type}", "version": f"torch {torch.__version__}",
            "device": name, "device_kind": device.type, "timing_method": "wall_clock",
            "notes": notes}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--describe", action="store_true", help="print what this peer is, as JSON")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--networks", help="the networks file convbench wrote")
    ap.add_argument("--batch", default="1")
    ap.add_argument("--stage", default="train", help="eval, train, comma-separated")
    ap.add_argument("--precision", default="f32", help="f32, f16, comma-separated")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--warmup-ms", type=int, default=200)
    ap.add_argument("--out", help="where to write the result (else stdout)")
    args = ap.parse_args()
    device = torch.device(args.device)
    description = describe(device)
    if args.describe:
        print(json.dumps(description))
        return
    if not args.networks:
        raise SystemExit("give --networks FILE (convbench writes it: cargo convbench peers)")
    with open(args.networks) as f:
        networks = json.load(f)["networks"]
    benchmarks = []
    for expected in networks:
        for stage in args.stage.split(","):
            for batch in map(int, args.batch.split(",")):
                for precision in args.precision.split(","):
                    benchmarks.append(benchmark(expected["network"], expected, stage, batch,
                                                precision, device, args))
    text = json.dumps({**description, "host_cpus": os.cpu_count(), "benchmarks": benchmarks})
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)
