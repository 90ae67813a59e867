// Winograd F(2x2, 3x3) convolution, fused into one dispatch: filter transform, input transform,
// the 16 elementwise products summed over input channels, and the output transform.
//
// Both entry points compute one 3x3 stride-1 convolution of a source tensor S into a
// destination tensor D (NCHW), per convolution group:
//
//   D[n, o, y, x] = sum_{r, ky, kx} S[n, r, y + ky + off_y, x + kx + off_x] * F(o, r, ky, kx)
//
//   forward        S = x, D = y, F(o, r, ky, kx) = w[o, r, ky, kx], off = -pad
//   backward data  S = dy, D = dx, F(o, r, ky, kx) = w[r, o, 2 - ky, 2 - kx], off = pad - 2
//
// (backward data of a stride-1 conv is the forward conv of dy with the filter rotated by 180
// degrees and its channel axes swapped; the host expresses the rotation and the swap as the
// filter strides below, and a negative offset past the edge reads zeros, as padding does).
//
// D is cut into 2x2 tiles, each computed from a 4x4 tile of S:
//   Y = A^T [ sum_r (G g G^T) * (B^T d B) ] A     (* elementwise over the 4x4 positions)
// Each workgroup owns BO destination channels x BT tiles. Per slice of BK source channels it
// stages U = G g G^T (BO x BK filters, half the invocations) and V = B^T d B (BK x BT tiles,
// the other half) in workgroup memory as f32, so f16 storage accumulates in f32. Every
// position of the 4x4 is then a BO x BK by BK x BT GEMM; each invocation owns one position and
// a 4 x 4 block of (channel, tile) pairs in registers. At the end the 16 positions of every
// pair meet in workgroup memory and one invocation per pair applies A^T . A and writes the
// in-bounds outputs of its tile.
alias T = f32;

const BO: u32 = 16u;
const BT: u32 = 16u;
const BK: u32 = 8u;
const WG: u32 = 256u;
// Workgroup memory: U then V while reducing, the 16 accumulated positions of every pair at the
// end (16 * BO * BT floats; the same 16 KiB).
const U_LEN: u32 = 16u * BK * BO;
const SHARED_LEN: u32 = 16u * BO * BT;

struct Params {
    groups: u32,
    // Source: channels in all, per group, height, width.
    src_c: u32,
    src_cg: u32,
    src_h: u32,
    src_w: u32,
    // Destination alike.
    dst_c: u32,
    dst_cg: u32,
    dst_h: u32,
    dst_w: u32,
    // 2x2 tiles of one destination plane, and in the batch.
    tiles_y: u32,
    tiles_x: u32,
    tiles: u32,
    // Workgroups per group along the channels and along the tiles.
    o_blocks: u32,
    t_blocks: u32,
    off_y: i32,
    off_x: i32,
    // F(o, r, ky, kx) = w[w_base + g * w_group + o * w_o + r * w_r + ky * w_ky + kx * w_kx].
    w_group: u32,
    w_o: u32,
    w_r: u32,
    w_base: u32,
    w_ky: i32,
    w_kx: i32,
    has_bias: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<T>;
@group(0) @binding(2) var<storage, read> weights: array<T>;
@group(0) @binding(3) var<storage, read> bias: array<T>;
@group(0) @binding(4) var<storage, read_write> dst: array<T>;

var<workgroup> shared_tile: array<f32, SHARED_LEN>;

// A 2x2 tile of the batch: image, tile row, tile column.
struct Tile {
    n: u32,
    ty: u32,
    tx: u32,
}

fn tile_of(t: u32) -> Tile {
    let plane = p.tiles_y * p.tiles_x;
    return Tile(t / plane, (t % plane) / p.tiles_x, t % p.tiles_x);
}

// g (3x3, row-major) -> G g G^T (4x4, row-major).
fn filter_transform(g: array<f32, 9>) -> array<f32, 16> {
    var s: array<f32, 12>;
    for (var j = 0u; j < 3u; j += 1u) {
        let g0 = g[j];
        let g1 = g[3u + j];
        let g2 = g[6u + j];
        s[j] = g0;
        s[3u + j] = 0.5 * (g0 + g1 + g2);
        s[6u + j] = 0.5 * (g0 - g1 + g2);
        s[9u + j] = g2;
    }
    var u: array<f32, 16>;
    for (var i = 0u; i < 4u; i += 1u) {
        let s0 = s[3u * i];
        let s1 = s[3u * i + 1u];
        let s2 = s[3u * i + 2u];
        u[4u * i] = s0;
        u[4u * i + 1u] = 0.5 * (s0 + s1 + s2);
        u[4u * i + 2u] = 0.5 * (s0 - s1 + s2);
        u[4u * i + 3u] = s2;
    }
    return u;
}

// d (4x4, row-major) -> B^T d B (4x4, row-major).
fn input_transform(d: array<f32, 16>) -> array<f32, 16> {
    var t: array<f32, 16>;
    for (var j = 0u; j < 4u; j += 1u) {
        let d0 = d[j];
        let d1 = d[4u + j];
        let d2 = d[8u + j];
        let d3 = d[12u + j];
        t[j] = d0 - d2;
        t[4u + j] = d1 + d2;
        t[8u + j] = d2 - d1;
        t[12u + j] = d1 - d3;
    }
    var v: array<f32, 16>;
    for (var i = 0u; i < 4u; i += 1u) {
        let t0 = t[4u * i];
        let t1 = t[4u * i + 1u];
        let t2 = t[4u * i + 2u];
        let t3 = t[4u * i + 3u];
        v[4u * i] = t0 - t2;
        v[4u * i + 1u] = t1 + t2;
        v[4u * i + 2u] = t2 - t1;
        v[4u * i + 3u] = t1 - t3;
    }
    return v;
}

fn winograd(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) {
    let block = wg.y * nwg.x + wg.x;
    let per_group = p.o_blocks * p.t_blocks;
    if (block >= per_group * p.groups) {
        return;
    }
    let g = block / per_group;
    let o0 = ((block % per_group) / p.t_blocks) * BO;
    let t0 = (block % p.t_blocks) * BT;

    // Staging roles, resolved once: invocations below BO * BK transform filters (channel
    // `stage_o` of source channel `stage_r` of each slice), the others input tiles (tile
    // `stage_t` of source channel `stage_r`).
    let is_filter = lid < BO * BK;
    let stage = select(lid - BO * BK, lid, is_filter);
    let stage_r = select(stage / BT, stage / BO, is_filter);
    let stage_o = stage % BO;
    let stage_t = stage % BT;
    let o_ok = o0 + stage_o < p.dst_cg;
    let w_row = i32(p.w_base + g * p.w_group + (o0 + stage_o) * p.w_o);
    let t_ok = t0 + stage_t < p.tiles;
    let staged_tile = tile_of(t0 + stage_t);
    let y0 = i32(2u * staged_tile.ty) + p.off_y;
    let x0 = i32(2u * staged_tile.tx) + p.off_x;
    let src_image = (staged_tile.n * p.src_c + g * p.src_cg) * p.src_h * p.src_w;

    // This invocation's position and 4 x 4 block of (channel, tile) pairs.
    let pos = lid / 16u;
    let o_blk = ((lid % 16u) / 4u) * 4u;
    let t_blk = (lid % 4u) * 4u;
    var acc: array<vec4<f32>, 4>;

    for (var r0 = 0u; r0 < p.src_cg; r0 += BK) {
        let r = r0 + stage_r;
        let r_ok = r < p.src_cg;
        if (is_filter) {
            var f: array<f32, 9>;
            if (o_ok && r_ok) {
                let base = w_row + i32(r * p.w_r);
                for (var ky = 0; ky < 3; ky += 1) {
                    for (var kx = 0; kx < 3; kx += 1) {
                        f[3 * ky + kx] = f32(weights[u32(base + ky * p.w_ky + kx * p.w_kx)]);
                    }
                }
            }
            let u = filter_transform(f);
            for (var q = 0u; q < 16u; q += 1u) {
                shared_tile[(q * BK + stage_r) * BO + stage_o] = u[q];
            }
        } else {
            var d: array<f32, 16>;
            if (t_ok && r_ok) {
                let plane = src_image + r * p.src_h * p.src_w;
                for (var i = 0; i < 4; i += 1) {
                    let y = y0 + i;
                    for (var j = 0; j < 4; j += 1) {
                        let x = x0 + j;
                        if (y >= 0 && x >= 0 && u32(y) < p.src_h && u32(x) < p.src_w) {
                            d[4 * i + j] = f32(src[plane + u32(y) * p.src_w + u32(x)]);
                        }
                    }
                }
            }
            let v = input_transform(d);
            for (var q = 0u; q < 16u; q += 1u) {
                shared_tile[U_LEN + (q * BK + stage_r) * BT + stage_t] = v[q];
            }
        }
        workgroupBarrier();
        for (var k = 0u; k < BK; k += 1u) {
            let u_row = (pos * BK + k) * BO + o_blk;
            let v_row = U_LEN + (pos * BK + k) * BT + t_blk;
            let v = vec4<f32>(shared_tile[v_row], shared_tile[v_row + 1u], shared_tile[v_row + 2u],
                              shared_tile[v_row + 3u]);
            for (var i = 0u; i < 4u; i += 1u) {
                acc[i] = fma(vec4<f32>(shared_tile[u_row + i]), v, acc[i]);
            }
        }
        workgroupBarrier();
    }

    // Gather the 16 positions of each pair: pair `lid` is channel lid / BT, tile lid % BT.
    for (var i = 0u; i < 4u; i += 1u) {
        for (var j = 0u; j < 4u; j += 1u) {
            shared_tile[pos * BO * BT + (o_blk + i) * BT + t_blk + j] = acc[i][j];
        }
    }
    workgroupBarrier();
    var m: array<f32, 16>;
    for (var q = 0u; q < 16u; q += 1u) {
        m[q] = shared_tile[q * BO * BT + lid];
    }
    let o = o0 + lid / BT;
    let t = t0 + lid % BT;
    if (o >= p.dst_cg || t >= p.tiles) {
        return;
    }
    // A^T m A, rows then columns.
    var row: array<f32, 8>;
    for (var j = 0u; j < 4u; j += 1u) {
        row[j] = m[j] + m[4u + j] + m[8u + j];
        row[4u + j] = m[4u + j] - m[8u + j] - m[12u + j];
    }
    var y_tile: array<f32, 4>;
    for (var i = 0u; i < 2u; i += 1u) {
        y_tile[2u * i] = row[4u * i] + row[4u * i + 1u] + row[4u * i + 2u];
        y_tile[2u * i + 1u] = row[4u * i + 1u] - row[4u * i + 2u] - row[4u * i + 3u];
    }
    let channel = g * p.dst_cg + o;
    var b = 0.0;
    if (p.has_bias != 0u) {
        b = f32(bias[channel]);
    }
    let tile = tile_of(t);
    let plane = (tile.n * p.dst_c + channel) * p.dst_h * p.dst_w;
    for (var i = 0u; i < 2u; i += 1u) {
        for (var j = 0u; j < 2u; j += 1u) {
            let y = 2u * tile.ty + i;
            let x = 2u * tile.tx + j;
            if (y < p.dst_h && x < p.dst_w) {
                dst[plane + y * p.dst_w + x] = T(y_tile[2u * i + j] + b);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn conv2d_forward_winograd(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
    winograd(wg, nwg, lid);
}

@compute @workgroup_size(WG)
fn conv2d_backward_data_winograd(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                 @builtin(local_invocation_index) lid: u32) {
    winograd(wg, nwg, lid);
}
