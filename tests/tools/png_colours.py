#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a picture shows, for the tests that look at one: png_colours.py PNG [RRGGBB...]

Decodes an 8-bit RGB or RGBA PNG (what rsvg-convert and chromium write) with the standard library
alone and prints "<distinct colours> coloured|grey <width>x<height>": "coloured" when one of the
given colours appears in it. A blank image has one colour."""
import struct
import sys
import zlib


def colours(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("png_colours: %s: not a PNG" % path)
    pos, idat, w, h, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise SystemExit("png_colours: %s: 8-bit RGB(A) expected" % path)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, seen = zlib.decompress(idat), w * bpp, bytearray(w * bpp), set()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the row's filter (PNG spec, section 9)
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            paeth = a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c
            line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth)[f]) & 255
        seen.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return seen, w, h


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    seen, w, h = colours(argv[1])
    want = {bytes.fromhex(c) for c in argv[2:]}
    print(len(seen), "coloured" if seen & want else "grey", "%dx%d" % (w, h))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
