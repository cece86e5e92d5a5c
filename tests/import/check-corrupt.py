#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Corrupt and truncated inputs must be refused with an error that names
the file and the byte offset or line of the fault.

  check-corrupt.py DATA_DIR dump IMPORT_DUMP
      runs tests/import/import-dump KIND PATH on each broken input;
  check-corrupt.py DATA_DIR probe PROBE
      runs `PROBE --store TMP import KIND PATH` (`papers import` for arXiv)
      and also checks that the store still holds what an earlier good
      import put there (a failing import changes nothing).

Each case derives a broken copy of real test data in a temporary folder
and states the exact message fragment expected (offsets computed here).
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile


def record_offsets(data):
    offs = []
    off = 0
    while off < len(data):
        (n,) = struct.unpack_from("<Q", data, off)
        offs.append((off, n))
        off += 12 + n + 4
    return offs


def main():
    data_dir, mode, tool = sys.argv[1], sys.argv[2], sys.argv[3]
    tmp = tempfile.mkdtemp(prefix="pmcp-corrupt-")
    cases = []

    # --- TensorBoard: flipped bytes and truncation at known offsets
    src = os.path.join(data_dir, "tensorboard-reducer/runs/strict/run_1")
    ev = [f for f in os.listdir(src) if "tfevents" in f][0]
    raw = open(os.path.join(src, ev), "rb").read()
    offs = record_offsets(raw)
    r5, n5 = offs[5]

    def tb_case(name, mutate, expect):
        d = os.path.join(tmp, "tb-" + name)
        os.makedirs(d)
        p = os.path.join(d, ev)
        with open(p, "wb") as f:
            f.write(mutate(bytearray(raw)))
        cases.append(("tensorboard", d, [p, expect]))

    def flip(at):
        def m(b):
            b[at] ^= 0x40
            return bytes(b)
        return m

    tb_case("data-crc", flip(r5 + 12 + n5 + 1),
            "byte offset %d: data CRC mismatch" % r5)
    tb_case("data-byte", flip(r5 + 12 + 2),
            "byte offset %d: data CRC mismatch" % r5)
    tb_case("length-crc", flip(r5 + 9),
            "byte offset %d: length CRC mismatch" % r5)
    tb_case("length", flip(r5 + 1),
            "byte offset %d: length CRC mismatch" % r5)
    tb_case("truncated-data", lambda b: bytes(b[:r5 + 12 + n5 // 2]),
            "byte offset %d: truncated record data" % r5)
    tb_case("truncated-header", lambda b: bytes(b[:r5 + 5]),
            "byte offset %d: truncated record header" % r5)
    tb_case("truncated-crc", lambda b: bytes(b[:r5 + 12 + n5 + 2]),
            "byte offset %d: truncated record" % r5)

    # --- CSV (Lightning metrics.csv): bad lines
    csv_src = os.path.join(data_dir, "lightning-genrisk/lightning_logs/version_4/metrics.csv")
    lines = open(csv_src, encoding="utf-8").read().split("\n")

    def csv_case(name, new_lines, expect):
        d = os.path.join(tmp, "csv-" + name, "version_4")
        os.makedirs(d)
        p = os.path.join(d, "metrics.csv")
        open(p, "w", encoding="utf-8").write("\n".join(new_lines))
        cases.append(("csv", p, [p, expect]))

    bad = list(lines)
    bad[6] = "6,0,abc,1.0"
    csv_case("not-a-number", bad, 'line 7: column "train_disc_loss": "abc" is not a number')
    bad = list(lines)
    bad[9] = bad[9] + ",7"
    csv_case("fields", bad, "line 10: 5 fields where the header has 4")
    bad = list(lines)
    bad[12] = '12,"3,1.0,2.0'
    csv_case("quote", bad, "line 13: unterminated quoted field")
    bad = list(lines)
    bad[3] = "x3,0,1.0,2.0"
    csv_case("step", bad, 'line 4: step "x3" is not an integer')

    # a folder of runs whose last one is broken: the earlier runs, already
    # written inside the transaction, must not stay
    d = os.path.join(tmp, "csv-dir", "lightning_logs")
    shutil.copytree(os.path.join(data_dir, "lightning-genrisk/lightning_logs"), d)
    p = os.path.join(d, "version_5", "metrics.csv")
    os.chmod(p, 0o644)
    with open(p, "a", encoding="utf-8") as f:
        f.write("99,9,1.0\n")
    cases.append(("csv", d, [p, "line 42: 3 fields where the header has 4"]))

    # --- HF trainer_state.json: truncated JSON
    hf_src = os.path.join(data_dir, "hf-whisper/trainer_state.json")
    text = open(hf_src, encoding="utf-8").read()
    cut = text[: text.index('"step": 1500')]
    d = os.path.join(tmp, "hf-trunc")
    os.makedirs(d)
    p = os.path.join(d, "trainer_state.json")
    open(p, "w", encoding="utf-8").write(cut)
    cases.append(("hf", p, [p, "line %d: invalid JSON" % (cut.count("\n") + 1)]))

    # --- arXiv JSON lines: a broken record on line 7
    ax_src = os.path.join(data_dir, "arxiv-sample/arxiv-metadata-sample-200.jsonl")
    ax = open(ax_src, encoding="utf-8").read().split("\n")
    ax[6] = ax[6][: len(ax[6]) // 2]
    d = os.path.join(tmp, "arxiv")
    os.makedirs(d)
    p = os.path.join(d, "broken.jsonl")
    open(p, "w", encoding="utf-8").write("\n".join(ax))
    cases.append(("arxiv", p, [p, "line 7: invalid JSON"]))
    ax = open(ax_src, encoding="utf-8").read().split("\n")
    ax[2] = '{"title": "no id"}'
    p2 = os.path.join(d, "noid.jsonl")
    open(p2, "w", encoding="utf-8").write("\n".join(ax))
    cases.append(("arxiv", p2, [p2, 'line 3: a record needs string "id"']))

    # --- MLflow: a bad metric line, a bad meta.yaml
    ml_src = os.path.join(data_dir, "mlflow-kymatio/mlruns")
    d = os.path.join(tmp, "ml-metric", "mlruns")
    shutil.copytree(ml_src, d)
    run = os.path.join(d, "1", "2569eda7ba4e46248fb210e95efb528d")
    mp = os.path.join(run, "metrics", "Final Accuracy")
    os.chmod(mp, 0o644)
    with open(mp, "a", encoding="utf-8") as f:
        f.write("1619102014900 oops 1\n")
    cases.append(("mlflow", d, [mp, "line 2: expected"]))
    d = os.path.join(tmp, "ml-meta", "mlruns")
    shutil.copytree(ml_src, d)
    meta = os.path.join(d, "2", "meta.yaml")
    os.chmod(meta, 0o644)
    with open(meta, "a", encoding="utf-8") as f:
        f.write("tags: [unclosed\n")
    cases.append(("mlflow", d, [meta, "line 6: did not find expected ',' or ']'"]))

    store = os.path.join(tmp, "store.db")
    fails = 0
    if mode == "probe":
        # a good import first: the failing ones must leave it as it was
        good = subprocess.run([tool, "--store", store, "--quiet", "import", "csv",
                               os.path.join(data_dir, "lightning-genrisk/lightning_logs/version_3/metrics.csv")],
                              capture_output=True, text=True)
        if good.returncode != 0:
            print("FAIL: the good import failed:", good.stderr)
            return 1
        before = snapshot(tool, store)

    for kind, path, expect in cases:
        if mode == "dump":
            cmd = [tool, kind, path]
        elif kind == "arxiv":
            cmd = [tool, "--store", store, "--quiet", "papers", "import", path]
        else:
            cmd = [tool, "--store", store, "--quiet", "import", kind, path]
        r = subprocess.run(cmd, capture_output=True, text=True)
        msg = r.stderr.strip()
        ok = r.returncode == 1 and all(e in msg for e in expect)
        print("%s %s %s: %s" % ("ok  " if ok else "FAIL", kind, os.path.relpath(path, tmp), msg))
        if not ok:
            print("     expected exit 1 and a message containing", expect)
            fails += 1
        if mode == "probe":
            after = snapshot(tool, store)
            if after != before:
                print("FAIL: the store changed after a failed import:\n  before %s\n  after  %s" % (before, after))
                fails += 1
    shutil.rmtree(tmp)
    return 1 if fails else 0


def snapshot(tool, store):
    """What the store holds, by an independent read of the SQLite file."""
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    out = {}
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table' "
                               "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts%'"):
        try:
            out[name] = con.execute('SELECT count(*) FROM "%s"' % name).fetchone()[0]
        except sqlite3.DatabaseError:
            pass
    con.close()
    return out


if __name__ == "__main__":
    sys.exit(main())
