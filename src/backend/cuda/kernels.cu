// convbench's own CUDA kernels for the `cuda` backend, compiled once per process by NVRTC.
//
// They cover the ops for which cuDNN and cuBLAS have no call with exactly the semantics of
// `src/kernels/reference.rs` (see `src/backend/cuda/mod.rs`). Each kernel exists for f32 storage
// (`_f32`) and f16 storage (`_f16`); arithmetic is in f32 either way. f16 values are handled as
// their bits (`unsigned short`) and converted with PTX instructions, so no CUDA header is needed.
//
// Every kernel bounds each memory access by its size arguments: the Rust side passes sizes
// derived from the op's geometry, whose tensor lengths `Program::push` has checked.

typedef unsigned short half_bits;

__device__ __forceinline__ float load(const float* p, long long i) { return p[i]; }

__device__ __forceinline__ float load(const half_bits* p, long long i) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p[i]));
    return f;
}

__device__ __forceinline__ void store(float* p, long long i, float v) { p[i] = v; }

__device__ __forceinline__ void store(half_bits* p, long long i, float v) {
    half_bits h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    p[i] = h;
}

__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xff800000); }

// Grid-stride loop over [0, n).
#define FOR_EACH(i, n)                                                                      \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)(n); \
         i += (long long)blockDim.x * gridDim.x)

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

// Sum (or max) over the block; every thread gets the result. blockDim.x is a multiple of 32.
__device__ float block_reduce(float v, bool is_max, float* scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = is_max ? warp_max(v) : warp_sum(v);
    __syncthreads();  // the previous reduction's result may still be being read
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const float neutral = is_max ? negative_infinity() : 0.0f;
        v = lane < warps ? scratch[lane] : neutral;
        v = is_max ? warp_max(v) : warp_sum(v);
        if (lane == 0) scratch[0] = v;
    }
    __syncthreads();
    return scratch[0];
}

// y = a + b.
template <typename S>
__device__ void add(const S* a, const S* b, S* y, long long n) {
    FOR_EACH(i, n) store(y, i, load(a, i) + load(b, i));
}

// Torch's SGD: v = momentum * v + grad + weight_decay * w; w -= lr * v.
template <typename S>
__device__ void sgd(const S* grad, S* weight, S* velocity, long long n, float lr, float momentum,
                    float weight_decay) {
    FOR_EACH(i, n) {
        const float w = load(weight, i);
        const float v = momentum * load(velocity, i) + load(grad, i) + weight_decay * w;
        store(velocity, i, v);
        store(weight, i, w - lr * v);
    }
}

// Copies a block of channels between a part and a concatenated tensor (concat / split).
template <typename S>
__device__ void channel_copy(const S* src, S* dst, long long images, long long hw,
                             long long total_channels, long long part_channels, long long offset,
                             int into_concat) {
    const long long block = part_channels * hw;
    FOR_EACH(i, images * block) {
        const long long image = i / block, rest = i % block;
        const long long concat = image * total_channels * hw + offset * hw + rest;
        if (into_concat) {
            dst[concat] = src[i];
        } else {
            dst[i] = src[concat];
        }
    }
}

// Mean over each plane of hw pixels: one warp per plane.
template <typename S>
__device__ void global_avgpool_forward(const S* x, S* y, long long planes, long long hw) {
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; p < planes;
         p += warps) {
        float s = 0.0f;
        for (long long q = lane; q < hw; q += 32) s += load(x, p * hw + q);
        s = warp_sum(s);
        if (lane == 0) store(y, p, s / (float)hw);
    }
}

template <typename S>
__device__ void global_avgpool_backward(const S* dy, S* dx, long long planes, long long hw) {
    FOR_EACH(i, planes * hw) store(dx, i, load(dy, i / hw) / (float)hw);
}

// Per image: probabilities = softmax(logits), loss = logsumexp(logits) - logits[label].
// One block per image.
template <typename S>
__device__ void softmax_cross_entropy_forward(const S* logits, const unsigned int* labels,
                                              S* loss, S* probs, long long batch,
                                              long long classes) {
    __shared__ float scratch[32];
    for (long long row = blockIdx.x; row < batch; row += gridDim.x) {
        const long long base = row * classes;
        float m = negative_infinity();
        for (long long k = threadIdx.x; k < classes; k += blockDim.x)
            m = fmaxf(m, load(logits, base + k));
        m = block_reduce(m, true, scratch);
        float s = 0.0f;
        for (long long k = threadIdx.x; k < classes; k += blockDim.x)
            s += expf(load(logits, base + k) - m);
        s = block_reduce(s, false, scratch);
        const float lse = m + logf(s);
        for (long long k = threadIdx.x; k < classes; k += blockDim.x)
            store(probs, base + k, expf(load(logits, base + k) - lse));
        if (threadIdx.x == 0) {
            // Labels are checked below the class count when written (PyTorch raises on one at
            // or above it); should one reach this kernel anyway, its loss is NaN, not another
            // class's, and no logit outside the row is read.
            const long long label = labels[row];
            store(loss, row, label < classes ? lse - load(logits, base + label) : __int_as_float(0x7fc00000));
        }
    }
}

// Gradient of the mean loss: (probabilities - onehot(label)) / batch.
template <typename S>
__device__ void softmax_cross_entropy_backward(const S* probs, const unsigned int* labels, S* d,
                                               long long batch, long long classes) {
    FOR_EACH(i, batch * classes) {
        const long long row = i / classes, k = i % classes;
        // A label out of range (see the forward pass) matches no class.
        const long long label = labels[row];
        store(d, i, (load(probs, i) - (k == label ? 1.0f : 0.0f)) / (float)batch);
    }
}

// Caffe's cross-channel LRN: scale = k + alpha / size * sum over the window of x^2,
// y = x * scale^-beta. The window of channel c is PyTorch's [c - size / 2, c + (size - 1) / 2]
// (an even size reaches one channel further down than up).
template <typename S>
__device__ void lrn_forward(const S* x, S* y, S* scale, long long images, int channels,
                            long long hw, int size, float alpha_over_size, float beta, float k) {
    FOR_EACH(i, images * channels * hw) {
        const long long q = i % hw, plane = i / hw;
        const int c = (int)(plane % channels);
        const long long image = plane / channels;
        const int lo = max(c - size / 2, 0), hi = min(c + (size - 1) / 2 + 1, channels);
        float sq = 0.0f;
        for (int cc = lo; cc < hi; ++cc) {
            const float v = load(x, (image * channels + cc) * hw + q);
            sq += v * v;
        }
        const float s = k + alpha_over_size * sq;
        store(scale, i, s);
        store(y, i, load(x, i) * powf(s, -beta));
    }
}

// dx = dy * scale^-beta - 2 alpha beta / size * x * sum over the channels whose window holds c of
// dy * y / scale, with the scale saved by the forward pass.
template <typename S>
__device__ void lrn_backward(const S* x, const S* y, const S* scale, const S* dy, S* dx,
                             long long images, int channels, long long hw, int size, float beta,
                             float factor) {
    FOR_EACH(i, images * channels * hw) {
        const long long q = i % hw, plane = i / hw;
        const int c = (int)(plane % channels);
        const long long image = plane / channels;
        // Channels whose window holds c: [c - (size - 1) / 2, c + size / 2].
        const int lo = max(c - (size - 1) / 2, 0), hi = min(c + size / 2 + 1, channels);
        float acc = 0.0f;
        for (int cc = lo; cc < hi; ++cc) {
            const long long j = (image * channels + cc) * hw + q;
            acc += load(dy, j) * load(y, j) / load(scale, j);
        }
        store(dx, i, load(dy, i) * powf(load(scale, i), -beta) - factor * load(x, i) * acc);
    }
}

struct PoolGeom {
    long long planes;
    int in_h, in_w, out_h, out_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
    int is_max, count_include_pad;
};

// The window of output `out` along one axis, clipped to the input ([lo, hi)), and its span
// including padding (the divisor of Torch's count_include_pad).
__device__ __forceinline__ void pool_window(int out, int kernel, int stride, int pad, int size,
                                            int* lo, int* hi, int* span) {
    const int start = out * stride - pad;
    const int end_padded = min(start + kernel, size + pad);
    *span = end_padded - start;
    *lo = max(start, 0);
    *hi = max(min(end_padded, size), 0);
}

// Whether max pooling's scan of a window moves from `best` to `v`: PyTorch's
// `v > best || isnan(v)`, so a window holding a NaN pools to NaN (its gradient goes to the last
// NaN), otherwise to its first maximum.
__device__ __forceinline__ bool max_pool_takes(float v, float best) {
    return v > best || isnan(v);
}

// Torch pooling (ceil mode windows, padding never wins a max, count_include_pad), one thread
// per output.
template <typename S>
__device__ void pool_forward(const S* x, S* y, PoolGeom g) {
    FOR_EACH(i, g.planes * g.out_h * g.out_w) {
        const int ox = (int)(i % g.out_w);
        const int oy = (int)((i / g.out_w) % g.out_h);
        const long long plane = i / ((long long)g.out_w * g.out_h);
        const S* xin = x + plane * g.in_h * g.in_w;
        int h0, h1, hspan, w0, w1, wspan;
        pool_window(oy, g.kernel_h, g.stride_h, g.pad_h, g.in_h, &h0, &h1, &hspan);
        pool_window(ox, g.kernel_w, g.stride_w, g.pad_w, g.in_w, &w0, &w1, &wspan);
        float result = 0.0f;
        if (g.is_max) {
            bool found = false;
            for (int ih = h0; ih < h1; ++ih)
                for (int iw = w0; iw < w1; ++iw) {
                    const float v = load(xin, (long long)ih * g.in_w + iw);
                    if (!found || max_pool_takes(v, result)) {
                        result = v;
                        found = true;
                    }
                }
        } else {
            float sum = 0.0f;
            for (int ih = h0; ih < h1; ++ih)
                for (int iw = w0; iw < w1; ++iw) sum += load(xin, (long long)ih * g.in_w + iw);
            const int count = g.count_include_pad ? hspan * wspan : (h1 - h0) * (w1 - w0);
            result = sum / (float)max(count, 1);
        }
        store(y, i, result);
    }
}

// Gradient of pool_forward, one thread per input element gathering from the windows that hold
// it (no atomics, deterministic). Max pooling gives the gradient to the element each window
// pools (`max_pool_takes`, in row-major order), recomputed from x.
template <typename S>
__device__ void pool_backward(const S* x, const S* dy, S* dx, PoolGeom g) {
    FOR_EACH(i, g.planes * g.in_h * g.in_w) {
        const int xw = (int)(i % g.in_w);
        const int xh = (int)((i / g.in_w) % g.in_h);
        const long long plane = i / ((long long)g.in_w * g.in_h);
        const S* xin = x + plane * g.in_h * g.in_w;
        const S* dout = dy + plane * g.out_h * g.out_w;
        // Windows [o * stride - pad, o * stride - pad + kernel) that contain the element.
        const int nh = xh + g.pad_h - g.kernel_h + 1, nw = xw + g.pad_w - g.kernel_w + 1;
        const int oy0 = nh <= 0 ? 0 : (nh + g.stride_h - 1) / g.stride_h;
        const int ox0 = nw <= 0 ? 0 : (nw + g.stride_w - 1) / g.stride_w;
        const int oy1 = min((xh + g.pad_h) / g.stride_h, g.out_h - 1);
        const int ox1 = min((xw + g.pad_w) / g.stride_w, g.out_w - 1);
        float grad = 0.0f;
        for (int oy = oy0; oy <= oy1; ++oy) {
            int h0, h1, hspan;
            pool_window(oy, g.kernel_h, g.stride_h, g.pad_h, g.in_h, &h0, &h1, &hspan);
            for (int ox = ox0; ox <= ox1; ++ox) {
                int w0, w1, wspan;
                pool_window(ox, g.kernel_w, g.stride_w, g.pad_w, g.in_w, &w0, &w1, &wspan);
                const float d = load(dout, (long long)oy * g.out_w + ox);
                if (g.is_max) {
                    int best_h = h0, best_w = w0;
                    float best = load(xin, (long long)h0 * g.in_w + w0);
                    for (int ih = h0; ih < h1; ++ih)
                        for (int iw = w0; iw < w1; ++iw) {
                            const float v = load(xin, (long long)ih * g.in_w + iw);
                            if (max_pool_takes(v, best)) {
                                best = v;
                                best_h = ih;
                                best_w = iw;
                            }
                        }
                    if (best_h == xh && best_w == xw) grad += d;
                } else {
                    const int count = g.count_include_pad ? hspan * wspan : (h1 - h0) * (w1 - w0);
                    grad += d / (float)max(count, 1);
                }
            }
        }
        store(dx, i, grad);
    }
}

// Writes the bias into each row's column slice [offset, offset + columns) of a row-major matrix
// with `stride` columns (before a GEMM that accumulates into it).
template <typename S>
__device__ void bias_fill_rows(const S* bias, S* y, long long rows, long long columns,
                               long long stride, long long offset) {
    FOR_EACH(i, rows * columns) {
        const long long r = i / columns, c = i % columns;
        y[r * stride + offset + c] = bias[c];
    }
}

// Sums each column of a row-major column slice over the rows (the bias gradient).
template <typename S>
__device__ void bias_grad_rows(const S* dy, S* db, long long rows, long long columns,
                               long long stride, long long offset) {
    FOR_EACH(c, columns) {
        float s = 0.0f;
        for (long long r = 0; r < rows; ++r) s += load(dy, r * stride + offset + c);
        store(db, c, s);
    }
}

// Pooling geometry as kernel parameters (plain scalars, so the host needs no struct layout).
#define POOL_PARAMS                                                                        \
    long long planes, int in_h, int in_w, int out_h, int out_w, int kernel_h, int kernel_w, \
        int stride_h, int stride_w, int pad_h, int pad_w, int is_max, int count_include_pad
#define POOL_GEOM                                                                    \
    PoolGeom{planes,   in_h,     in_w,  out_h, out_w,  kernel_h,         kernel_w, \
             stride_h, stride_w, pad_h, pad_w, is_max, count_include_pad}

#define CONVBENCH_KERNELS(S, suffix)                                                           \
    extern "C" __global__ void add_##suffix(const S* a, const S* b, S* y, long long n) {      \
        add(a, b, y, n);                                                                       \
    }                                                                                          \
    extern "C" __global__ void sgd_##suffix(const S* grad, S* weight, S* velocity,            \
                                            long long n, float lr, float momentum,             \
                                            float weight_decay) {                              \
        sgd(grad, weight, velocity, n, lr, momentum, weight_decay);                            \
    }                                                                                          \
    extern "C" __global__ void channel_copy_##suffix(                                          \
        const S* src, S* dst, long long images, long long hw, long long total_channels,        \
        long long part_channels, long long offset, int into_concat) {                          \
        channel_copy(src, dst, images, hw, total_channels, part_channels, offset,              \
                     into_concat);                                                             \
    }                                                                                          \
    extern "C" __global__ void global_avgpool_forward_##suffix(const S* x, S* y,              \
                                                               long long planes,               \
                                                               long long hw) {                 \
        global_avgpool_forward(x, y, planes, hw);                                              \
    }                                                                                          \
    extern "C" __global__ void global_avgpool_backward_##suffix(const S* dy, S* dx,           \
                                                                long long planes,              \
                                                                long long hw) {                \
        global_avgpool_backward(dy, dx, planes, hw);                                           \
    }                                                                                          \
    extern "C" __global__ void softmax_cross_entropy_forward_##suffix(                         \
        const S* logits, const unsigned int* labels, S* loss, S* probs, long long batch,       \
        long long classes) {                                                                   \
        softmax_cross_entropy_forward(logits, labels, loss, probs, batch, classes);            \
    }                                                                                          \
    extern "C" __global__ void softmax_cross_entropy_backward_##suffix(                        \
        const S* probs, const unsigned int* labels, S* d, long long batch, long long classes) { \
        softmax_cross_entropy_backward(probs, labels, d, batch, classes);                      \
    }                                                                                          \
    extern "C" __global__ void lrn_forward_##suffix(const S* x, S* y, S* scale,                \
                                                    long long images, int channels,            \
                                                    long long hw, int size,                    \
                                                    float alpha_over_size, float beta,         \
                                                    float k) {                                 \
        lrn_forward(x, y, scale, images, channels, hw, size, alpha_over_size, beta, k);        \
    }                                                                                          \
    extern "C" __global__ void lrn_backward_##suffix(                                          \
        const S* x, const S* y, const S* scale, const S* dy, S* dx, long long images,          \
        int channels, long long hw, int size, float beta, float factor) {                      \
        lrn_backward(x, y, scale, dy, dx, images, channels, hw, size, beta, factor);           \
    }                                                                                          \
    extern "C" __global__ void pool_forward_##suffix(const S* x, S* y, POOL_PARAMS) {         \
        pool_forward(x, y, POOL_GEOM);                                                         \
    }                                                                                          \
    extern "C" __global__ void pool_backward_##suffix(const S* x, const S* dy, S* dx,         \
                                                      POOL_PARAMS) {                           \
        pool_backward(x, dy, dx, POOL_GEOM);                                                   \
    }                                                                                          \
    extern "C" __global__ void bias_fill_rows_##suffix(const S* bias, S* y, long long rows,   \
                                                       long long columns, long long stride,    \
                                                       long long offset) {                     \
        bias_fill_rows(bias, y, rows, columns, stride, offset);                                \
    }                                                                                          \
    extern "C" __global__ void bias_grad_rows_##suffix(const S* dy, S* db, long long rows,    \
                                                       long long columns, long long stride,    \
                                                       long long offset) {                     \
        bias_grad_rows(dy, db, rows, columns, stride, offset);                                 \
    }

CONVBENCH_KERNELS(float, f32)
CONVBENCH_KERNELS(half_bits, f16)

// f16 <-> f32 for up to four vectors of n elements at once: batch norm's per-channel tensors are
// stored in f16 in f16 programs, and cuDNN takes them in f32. `packed` holds the vectors one
// after another; unused pointers are null and `count` says how many are used.
extern "C" __global__ void unpack_half(float* packed, const half_bits* s0, const half_bits* s1,
                                       const half_bits* s2, const half_bits* s3, int count,
                                       long long n) {
    FOR_EACH(i, count * n) {
        const long long which = i / n, j = i % n;
        const half_bits* src = which == 0 ? s0 : which == 1 ? s1 : which == 2 ? s2 : s3;
        packed[i] = load(src, j);
    }
}

extern "C" __global__ void pack_half(const float* packed, half_bits* d0, half_bits* d1,
                                     half_bits* d2, half_bits* d3, int count, long long n) {
    FOR_EACH(i, count * n) {
        const long long which = i / n, j = i % n;
        half_bits* dst = which == 0 ? d0 : which == 1 ? d1 : which == 2 ? d2 : d3;
        store(dst, j, packed[i]);
    }
}
