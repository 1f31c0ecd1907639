import numpy as np
# Reference convolution (NCHW input, OIHW filter) and its gradients, by direct accumulation over kernel taps.
def taps(x_shape, w_shape, s, plo, phi, d):
    N, C, H, W = x_shape; O, Cg, kh, kw = w_shape
    Ho = (H + plo[0] + phi[0] - d[0] * (kh - 1) - 1) // s[0] + 1
    Wo = (W + plo[1] + phi[1] - d[1] * (kw - 1) - 1) // s[1] + 1
    for a in range(kh):
        for b in range(kw):
            yield a, b, (slice(None), slice(None), slice(a * d[0], a * d[0] + s[0] * (Ho - 1) + 1, s[0]),
                         slice(b * d[1], b * d[1] + s[1] * (Wo - 1) + 1, s[1])), (Ho, Wo)
def pad(x, plo, phi): return np.pad(x, ((0, 0), (0, 0), (plo[0], phi[0]), (plo[1], phi[1])))
def fwd(x, w, s, plo, phi, d, G):
    O, Cg = w.shape[:2]; Og = O // G; xp = pad(x, plo, phi); y = None
    for a, b, sl, (Ho, Wo) in taps(x.shape, w.shape, s, plo, phi, d):
        y = np.zeros((x.shape[0], O, Ho, Wo)) if y is None else y
        p = xp[sl]
        for g in range(G):
            y[:, g*Og:(g+1)*Og] += np.einsum('nchw,oc->nohw', p[:, g*Cg:(g+1)*Cg], w[g*Og:(g+1)*Og, :, a, b])
    return y
def grad_x(x_shape, w, dy, s, plo, phi, d, G):
    O, Cg = w.shape[:2]; Og = O // G; N, C, H, W = x_shape
    dxp = np.zeros((N, C, H + plo[0] + phi[0], W + plo[1] + phi[1]))
    for a, b, sl, _ in taps(x_shape, w.shape, s, plo, phi, d):
        for g in range(G):
            dxp[sl][:, g*Cg:(g+1)*Cg] += np.einsum('nohw,oc->nchw', dy[:, g*Og:(g+1)*Og], w[g*Og:(g+1)*Og, :, a, b])
    return dxp[:, :, plo[0]:plo[0] + H, plo[1]:plo[1] + W]
def grad_w(x, w_shape, dy, s, plo, phi, d, G):
    O, Cg = w_shape[:2]; Og = O // G; xp = pad(x, plo, phi); dw = np.zeros(w_shape)
    for a, b, sl, _ in taps(x.shape, w_shape, s, plo, phi, d):
        p = xp[sl]
        for g in range(G):
            dw[g*Og:(g+1)*Og, :, a, b] += np.einsum('nohw,nchw->oc', dy[:, g*Og:(g+1)*Og], p[:, g*Cg:(g+1)*Cg])
    return dw
def lit(x):
    x = np.asarray(x)
    if x.ndim == 0: return f"{float(x):.9g}"
    return "{" + ", ".join(lit(v) for v in x) + "}"
def shape(t, x): return f"{t}[{','.join(map(str, x.shape))}]"


# The two geometries the __cudnn$conv* tests use, with integer data so every result is exact:
#  A: NHWC (b01f_01io->b01f), x [1,6,6,4], w [3,3,2,4] (HWIO), 2 groups, stride 2, pad 1_1 (the windows stop one
#     short of the padded end) -> y [1,3,3,4];
#  B: NCHW (bf01_oi01->bf01), x [1,3,5,6], w [2,3,2,3] (OIHW), stride 1x2, pad 2_1x0_2, rhs_dilate 2x1 -> y [1,2,6,3].
# Arrays are kept NCHW / OIHW here; A's are transposed to NHWC / HWIO for its HLO.
def case(name):
    rng = np.random.default_rng(7 if name == "A" else 11)
    if name == "A":
        x = rng.integers(-2, 3, (1, 4, 6, 6)).astype(float); w = rng.integers(-2, 3, (4, 2, 3, 3)).astype(float)
        geo = ((2, 2), (1, 1), (1, 1), (1, 1), 2)
    else:
        x = rng.integers(-2, 3, (1, 3, 5, 6)).astype(float); w = rng.integers(-2, 3, (2, 3, 2, 3)).astype(float)
        geo = ((1, 2), (2, 0), (1, 2), (2, 1), 1)
    y = fwd(x, w, *geo)
    dy = rng.integers(-2, 3, y.shape).astype(float)
    return x, w, y, dy, geo


def hlo(name, kind, array):  # A's activations NHWC, filters HWIO
    if name == "A":
        array = array.transpose(0, 2, 3, 1) if kind == "act" else array.transpose(2, 3, 1, 0)
    return array


if __name__ == "__main__":
    for name in ("A", "B"):
        x, w, y, dy, geo = case(name)
        for label, v in [("x", x), ("w", w), ("y", y), ("dy", dy), ("dx", grad_x(x.shape, w, dy, *geo)),
                         ("dw", grad_w(x, w.shape, dy, *geo))]:
            v = hlo(name, "filter" if label in ("w", "dw") else "act", v)
            print(name, label, shape("f32", v), lit(v))
