#!/usr/bin/env python3
"""Checks a browser's screenshot of a page: a PNG of the expected width that
shows a page, not a blank or an error screen.

   png_check.py SHOT.png WIDTH

Decodes the PNG with zlib (8-bit RGB or RGBA, as Chromium writes them),
undoes each row's filter, and asks for many colours (text, charts, links)
on a mostly light background (the page's own). Prints one line; exit 1 on
failure."""
import struct
import sys
import zlib

path, want = sys.argv[1], int(sys.argv[2])


def fail(why):
    print(f"FAIL {path}: {why}")
    sys.exit(1)


try:
    data = open(path, "rb").read()
except OSError as e:
    fail(f"no screenshot ({e})")
if data[:8] != b"\x89PNG\r\n\x1a\n":
    fail("not a PNG")
at, idat, header = 8, b"", None
while at < len(data):
    (n,), kind = struct.unpack(">I", data[at:at + 4]), data[at + 4:at + 8]
    body = data[at + 8:at + 8 + n]
    if kind == b"IHDR":
        header = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    at += 12 + n
width, height, depth, colour, _, _, interlace = header
if width != want:
    fail(f"{width} px wide, not {want}")
if depth != 8 or colour not in (2, 6) or interlace:
    fail(f"a PNG this check does not read (depth {depth}, colour type {colour}, interlace {interlace})")
bpp = 3 if colour == 2 else 4
raw, stride = zlib.decompress(idat), width * bpp
rows, prev, at = [], bytearray(stride), 0
for _ in range(height):
    kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
    at += 1 + stride
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + a) & 255
        elif kind == 2:
            line[i] = (line[i] + b) & 255
        elif kind == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
colours, light, total = set(), 0, 0
for line in rows[::4]:
    for x in range(0, stride, bpp * 2):
        r, g, b = line[x], line[x + 1], line[x + 2]
        colours.add((r, g, b))
        light += r + g + b > 600
        total += 1
if len(colours) < 20:
    fail(f"{len(colours)} colours: a blank or nearly blank page")
if light < total * 0.5:
    fail(f"only {100 * light // total}% light pixels: not the page's light background")
print(f"ok   {path}: {width}x{height}, {len(colours)} colours, {100 * light // total}% light")
