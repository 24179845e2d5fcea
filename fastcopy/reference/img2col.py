"""Reference (test-oracle) img2col loads (LoadData 3D V2 / V2Pro / LoadDataWithStride, and V1 in
:func:`load3d_v1`), written literally from the formulas in docs/cube-in.md, one element at a time. Slow on purpose;
never validates. int4b_t loads are the 1-byte loads of their bytes (K fields halved).

``blocks`` = the (mStartPt, kStartPt) of each repeat (one block without repeat); they are stacked along M
(``mode = 0``) or K (``mode = 1``) into one matrix ``Xs`` that is placed as ``image``:

    "Zz"   (m, k) -> ((m//16)*Q + k//C0)*512 + (m%16)*32 + (k%C0)*es
    "Zz^T" (m, k) -> ((k//16)*Q + m//C0)*512 + (k%16)*32 + (m%C0)*es
    "Nz"   (m, k) -> ((k//C0)*Q + m//16)*512 + (m%16)*32 + (k%C0)*es
    "Nz^T" and "Zn" (m, k) -> ((m//C0)*Q + k//16)*512 + (k%16)*32 + (m%C0)*es
"""

from __future__ import annotations

from ._writer import ByteWriter


def x_element(m, k, *, H, W, pads, C0, Kh, Kw, sh, sw, dh, dw):
    """NC1HWC0 element index of X[m][k], or None for a padded position."""
    left, right, top, bottom = pads
    Wo = (W + left + right - ((Kw - 1) * dw + 1)) // sw + 1
    ho, wo = m // Wo, m % Wo
    c1 = k // (Kh * Kw * C0)
    i = (k // (Kw * C0)) % Kh
    j = (k // C0) % Kw
    c0 = k % C0
    h = ho * sh - top + i * dh
    w = wo * sw - left + j * dw
    if 0 <= h < H and 0 <= w < W:
        return ((c1 * H + h) * W + w) * C0 + c0
    return None


def place(image, m, k, *, es, Q):
    c0 = 32 // es
    if image == "Zz":
        return ((m // 16) * Q + k // c0) * 512 + (m % 16) * 32 + (k % c0) * es
    if image == "Zz^T":
        return ((k // 16) * Q + m // c0) * 512 + (k % 16) * 32 + (m % c0) * es
    if image == "Nz":
        return ((k // c0) * Q + m // 16) * 512 + (m % 16) * 32 + (k % c0) * es
    return ((m // c0) * Q + k // 16) * 512 + (k % 16) * 32 + (m % c0) * es


def load3d(dst, dst_def, src, src_def, *, es, H, W, pads, Kh, Kw, sh, sw, dh, dw, mExtension, kExtension,
           blocks, mode, image, Q, pad_bytes, boundary=0, src_l1=0, poison=0xFF):
    writer = ByteWriter(dst, dst_def, poison)
    c0 = 32 // es
    geo = dict(H=H, W=W, pads=pads, C0=c0, Kh=Kh, Kw=Kw, sh=sh, sw=sw, dh=dh, dw=dw)
    for b, (m0, k0) in enumerate(blocks):
        for mm in range(mExtension):
            for kk in range(kExtension):
                e = x_element(m0 + mm, k0 + kk, **geo)
                big_m = mm + (b * mExtension if mode == 0 else 0)
                big_k = kk + (b * kExtension if mode == 1 else 0)
                d = place(image, big_m, big_k, es=es, Q=Q)
                if e is None:
                    writer.write(d, bytearray(pad_bytes), True)
                    continue
                s = e * es
                if boundary and s + src_l1 >= boundary:
                    s -= boundary
                writer.write(d, src[s:s + es], src_def[s:s + es])
    writer.finish()


def load3d_v1(dst, dst_def, src, src_def, *, es, H, W, pads, c1Index, fetchFilterW, fetchFilterH, leftTopW,
              leftTopH, strideW, strideH, filterW, filterH, dilationFilterW, dilationFilterH, jumpStride,
              repeatMode, repeatTime, pad_bytes, cSize=0, boundary=0, src_l1=0, poison=0xFF):
    """LoadData 3D V1 (experimental mapping of docs/cube-in.md). ``boundary`` in bytes. The windows walk::

        (h, w) = (leftTopH, leftTopW); after each window: w += strideW, and when w + Ew > W + right:
        (h, w) = (h + strideH, -left)

    repeat r (mode 0: tap number r after the start tap, the first 16 windows; mode 1: the start tap, windows
    16r .. 16r+15), row i, channel c:  fractal r*jumpStride, byte i*32 + c*es  <-  L1(c1, h + kh*dilationH,
    w + kw*dilationW, c), taps counted kernel column fastest, then kernel row, then channel block c1.

    ``cSize = 1``: each pixel of the map holds ``CS = 8 // es`` channels (8 bytes), so channel block c1 is ``CS``
    channels wide; byte ``c*es`` of a row is channel ``c % CS`` of tap ``c // CS`` after the row's first tap, and
    mode 0 moves ``C0 // CS`` (4) taps per repeat.
    """
    left, right, top, bottom = pads
    c0 = 32 // es
    ew = (filterW - 1) * dilationFilterW + 1
    walk = []
    h, w = leftTopH, leftTopW
    for _ in range(16 * repeatTime):
        walk.append((h, w))
        w += strideW
        if w + ew > W + right:
            h, w = h + strideH, -left
    writer = ByteWriter(dst, dst_def, poison)
    cs = 8 // es if cSize else c0  # channels per pixel
    start_tap = (c1Index * filterH + fetchFilterH) * filterW + fetchFilterW
    for r in range(repeatTime):
        for i in range(16):
            wh, ww = walk[16 * r + i] if repeatMode == 1 else walk[i]
            for c in range(c0):
                tap = start_tap + (r * (c0 // cs) if repeatMode == 0 else 0) + c // cs
                kw = tap % filterW
                kh = (tap // filterW) % filterH
                c1 = tap // (filterW * filterH)
                y, x = wh + kh * dilationFilterH, ww + kw * dilationFilterW
                d = r * jumpStride * 512 + i * 32 + c * es
                if not (0 <= y < H and 0 <= x < W):
                    writer.write(d, bytearray(pad_bytes), True)
                    continue
                s = (((c1 * H + y) * W + x) * cs + c % cs) * es
                if boundary and s + src_l1 >= boundary:
                    s -= boundary
                writer.write(d, src[s:s + es], src_def[s:s + es])
    writer.finish()
