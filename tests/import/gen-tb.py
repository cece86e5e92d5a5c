#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes TensorBoard event files covering what the real sample files lack:
HistogramProto histograms (packed and unpacked buckets), scalars written as
tensors (float / double / half / int64, content or *_val fields, metadata
only on a tag's first value as TF2 does), the histograms plugin's [k, 3]
tensors, the hparams plugin's session start info (run parameters), an
hparams.yaml beside the events, and summaries the importer must skip (an
image, a text tensor).
Deterministic: the same bytes every time.

  gen-tb.py OUTDIR       writes OUTDIR/synth/run_a/events.out.tfevents.*
                         and OUTDIR/synth/run_b/events.out.tfevents.* (two
                         files: a resumed run)
"""
import os
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(body):
    head = struct.pack("<Q", len(body))
    return head + struct.pack("<I", masked(head)) + body + struct.pack("<I", masked(body))


def varint(v):
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(num, wt):
    return varint((num << 3) | wt)


def f_varint(num, v):
    return key(num, 0) + varint(v)


def f_double(num, v):
    return key(num, 1) + struct.pack("<d", v)


def f_float(num, v):
    return key(num, 5) + struct.pack("<f", v)


def f_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return key(num, 2) + varint(len(b)) + b


def event(wall, step, summary=None, extra=b""):
    e = f_double(1, wall) + f_varint(2, step) + extra
    if summary is not None:
        e += f_bytes(5, summary)
    return e


def value(tag, body, plugin=None):
    md = b""
    if plugin:
        md = f_bytes(9, f_bytes(1, f_bytes(1, plugin)))
    return f_bytes(1, f_bytes(1, tag) + md + body)


def shape(*dims):
    return f_bytes(2, b"".join(f_bytes(2, f_varint(1, d)) for d in dims))


def tensor(dtype, dims, content=None, vals=b""):
    t = f_varint(1, dtype) + shape(*dims)
    if content is not None:
        t += f_bytes(4, content)
    return f_bytes(8, t + vals)


def histo(mn, mx, num, s, sq, limits, counts, packed=True):
    h = f_double(1, mn) + f_double(2, mx) + f_double(3, num) + f_double(4, s) + f_double(5, sq)
    if packed:
        h += f_bytes(6, b"".join(struct.pack("<d", x) for x in limits))
        h += f_bytes(7, b"".join(struct.pack("<d", x) for x in counts))
    else:
        h += b"".join(f_double(6, x) for x in limits)
        h += b"".join(f_double(7, x) for x in counts)
    return f_bytes(5, h)


def pb_value(v):
    """google.protobuf.Value"""
    if v is None:
        return f_varint(1, 0)
    if isinstance(v, bool):
        return f_varint(4, int(v))
    if isinstance(v, (int, float)):
        return f_double(2, float(v))
    if isinstance(v, str):
        return f_bytes(3, v)
    return f_bytes(6, b"")  # a list: not a scalar parameter


HPARAMS = {"lr": 0.0003, "batch_size": 64, "optimizer": "adamw", "amp": True,
           "notes": None, "layers": [1, 2]}


def hparams_value():
    """What torch's SummaryWriter.add_hparams writes: the hparams plugin,
    HParamsPluginData{version=0, session_start_info=3{hparams=1 map}}."""
    start = b"".join(f_bytes(1, f_bytes(1, k) + f_bytes(2, pb_value(v)))
                     for k, v in HPARAMS.items())
    content = f_varint(1, 0) + f_bytes(3, start)
    md = f_bytes(9, f_bytes(1, f_bytes(1, "hparams") + f_bytes(2, content)))
    return f_bytes(1, f_bytes(1, "_hparams_/session_start_info") + md)


def run_a():
    recs = [event(1700000000.0, 0, extra=f_bytes(3, "brain.Event:2")),
            event(1700000000.1, 0, hparams_value())]
    wall = 1700000000.5
    for step in range(0, 50, 5):
        s = step / 10.0
        summ = value("loss", f_float(2, 1.0 / (1 + s)))
        # TF2 scalar: float tensor content; plugin metadata only the first time
        summ += value("tf2/acc", tensor(1, [], struct.pack("<f", 0.5 + s / 20)),
                      plugin="scalars" if step == 0 else None)
        # double via double_val (packed), no metadata at all
        summ += value("tf2/lr", tensor(2, [], vals=f_bytes(6, struct.pack("<d", 1e-3 * (0.9 ** step)))))
        # half via half_val (varint of the bits)
        hb = struct.unpack("<H", struct.pack("<e", 1.5 + step))[0]
        summ += value("tf2/half", tensor(19, [], vals=f_bytes(13, varint(hb))),
                      plugin="scalars" if step == 0 else None)
        # int64 scalar with shape [1]
        summ += value("tf2/count", tensor(9, [1], struct.pack("<q", -3 + step)),
                      plugin="scalars" if step == 0 else None)
        lim = [-1.0 + 0.25 * i for i in range(9)]
        cnt = [float((i * step) % 7) for i in range(9)]
        summ += value("weights", histo(-0.9, 1.0, sum(cnt), 0.1 * step, 2.0 + step, lim, cnt,
                                       packed=step % 10 == 0))
        rows = [(i * 0.5, i * 0.5 + 0.5, float(i + step)) for i in range(4)]
        summ += value("tf2/hist", tensor(2, [4, 3], b"".join(struct.pack("<ddd", *r) for r in rows)),
                      plugin="histograms" if step == 0 else None)
        # skipped: an image and a text tensor
        summ += value("img", f_bytes(4, f_varint(1, 2) + f_varint(2, 2)))
        summ += value("notes", tensor(7, [], vals=f_bytes(8, "hello")),
                      plugin="text" if step == 0 else None)
        recs.append(event(wall + step, step, summ))
    # an empty histograms-plugin tensor and an event with no summary
    recs.append(event(wall + 60, 60, value("tf2/hist", tensor(2, [0, 3], b""))))
    recs.append(event(wall + 61, 61, extra=f_bytes(6, f_varint(1, 1))))
    return b"".join(record(r) for r in recs)


def run_b(first):
    recs = []
    base = 0 if first else 100
    for i in range(20):
        step = base + i
        recs.append(event(1700001000.0 + step, step,
                          value("metric/x", f_float(2, (-1) ** i * step * 0.125))))
    return b"".join(record(r) for r in recs)


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    out = sys.argv[1]
    files = {
        "synth/run_a/events.out.tfevents.1700000000.synth.1.0": run_a(),
        "synth/run_b/events.out.tfevents.1700001000.synth.2.0": run_b(True),
        "synth/run_b/events.out.tfevents.1700002000.synth.2.1": run_b(False),
    }
    for rel, data in files.items():
        p = os.path.join(out, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    # Lightning's TensorBoardLogger writes hparams.yaml beside the events;
    # hparams.expected.json is how the tests expect it to be read
    with open(os.path.join(out, "synth/run_b/hparams.yaml"), "w") as f:
        f.write("seed: 7\nmodel:\n  width: 0.5\n  name: mlp\n")
    with open(os.path.join(out, "synth/run_b/hparams.expected.json"), "w") as f:
        f.write('{"seed": ["int", 7], "model/width": ["float", 0.5], "model/name": ["str", "mlp"]}\n')


if __name__ == "__main__":
    main()
