#!/usr/bin/env python3
"""Writes a copy of shaders/ to DIR whose direct conv2d_forward does redundant work: a second
pass over the first 1/FRACTION of each output's taps (rounded up), whose sum is only compared
with a value no input reaches, so the result stays exactly the same and verification passes.

    scripts/slow-conv.py DIR [FRACTION]   (default 4: about a quarter more work per output)
"""
import pathlib
import shutil
import sys

out = pathlib.Path(sys.argv[1])
fraction = int(sys.argv[2]) if len(sys.argv) > 2 else 4
src = pathlib.Path(__file__).resolve().parent.parent / "shaders"
if out.exists():
    shutil.rmtree(out)
shutil.copytree(src, out)
conv = out / "conv2d.wgsl"
text = conv.read_text()
anchor = "    fwd_y[i] = T(acc);\n}\n"
assert text.count(anchor) == 1, "conv2d_forward's store is not where this script expects it"
extra = f"""    var extra = 0.0;
    let taps = cin_g * p.kh * p.kw;
    for (var t = 0u; t < (taps + {fraction - 1}u) / {fraction}u; t += 1u) {{
        let icl = t / (p.kh * p.kw);
        let ki = (t / p.kw) % p.kh;
        let kj = t % p.kw;
        let ih = tap(oh, ki, p.sh, p.ph, p.dh, p.h);
        let iw = tap(ow, kj, p.sw, p.pw, p.dw, p.w);
        if (ih >= 0 && iw >= 0) {{
            let xbase = (n * p.cin + group * cin_g + icl) * p.h * p.w;
            extra += f32(fwd_x[xbase + u32(ih) * p.w + u32(iw)]) * f32(fwd_w[(oc * cin_g + icl) * p.kh * p.kw + ki * p.kw + kj]);
        }}
    }}
    if (extra == 3.0e38) {{
        acc += 1.0;
    }}
"""
conv.write_text(text.replace(anchor, extra + anchor))
print(f"wrote {out} (conv2d_forward does 1/{fraction} more multiply-adds, result unchanged)")
