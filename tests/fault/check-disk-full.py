#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A full disk during `probe import` is named as such, and loses nothing:

  check-disk-full.py PROBE ENOSPC_SO DATA_DIR

ENOSPC_SO is preloaded into `probe`; it makes every write to the store's
folder fail with ENOSPC once a byte allowance is spent. For allowances from
none at all to most of what the import needs, the import must exit 1 with a
message that says the disk holding the store is full (and no SQLite or C
internals), and the store must afterwards hold exactly what an earlier good
import put there, pass `PRAGMA integrity_check`, and take the same import
once the disk has room again.
"""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def content(store):
    """A digest of every row of every table, read independently."""
    con = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    h = hashlib.sha256()
    counts = {}
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table' "
                               "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts%' "
                               "ORDER BY name"):
        rows = con.execute('SELECT * FROM "%s"' % name).fetchall()
        rows = sorted(repr(r) for r in rows)
        counts[name] = len(rows)
        for r in rows:
            h.update(r.encode())
    con.close()
    return ok, h.hexdigest(), counts


def main():
    probe, so, data = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    tmp = tempfile.mkdtemp(prefix="pmcp-enospc-")
    fails = 0
    try:
        folder = os.path.join(tmp, "disk")
        os.mkdir(folder)
        store = os.path.join(folder, "store.db")
        good = [probe, "--store", store, "--quiet", "import", "csv",
                os.path.join(data, "lightning-genrisk/lightning_logs/version_3/metrics.csv")]
        r = subprocess.run(good, capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: the first import failed:", r.stderr)
            return 1
        before = content(store)
        big = [probe, "--store", store, "--quiet", "import", "mlflow",
               os.path.join(data, "mlflow-kymatio/mlruns"), "--project", "kymatio"]

        env = dict(os.environ)
        pre = env.get("LD_PRELOAD", "")
        env["LD_PRELOAD"] = (pre + " " + so).strip()
        env["PMCP_TEST_ENOSPC_DIR"] = folder
        # the shim is not built with the sanitizers: let it load after them
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":")
        refused = 0
        for allowance in (0, 512, 4096, 16384, 65536, 262144, 1048576):
            env["PMCP_TEST_ENOSPC_AFTER"] = str(allowance)
            r = subprocess.run(big, capture_output=True, text=True, env=env)
            msg = r.stderr.strip()
            after = content(store)
            if r.returncode == 0:
                # enough room: then the import must have landed whole
                if after == before:
                    print("FAIL allowance %d: exit 0 but the store is unchanged" % allowance)
                    fails += 1
                else:
                    print("ok   allowance %d: enough room, imported" % allowance)
                break
            refused += 1
            named = "full" in msg and folder in msg
            leaks = [w for w in ("SQLITE", "sqlite3_", "errno", ".c:", "I/O error") if w in msg]
            bad = 0
            if r.returncode != 1 or not named or leaks:
                print("FAIL allowance %d: exit %d, message %r (want exit 1, the disk "
                      "holding %s named full, no internals)" % (allowance, r.returncode, msg, folder))
                bad += 1
            if after != before:
                print("FAIL allowance %d: the store changed: %s -> %s" % (allowance, before, after))
                bad += 1
            if not bad:
                print("ok   allowance %d: %s" % (allowance, msg))
            fails += bad
        if refused == 0:
            print("FAIL: no allowance made the import fail: the full disk was never simulated")
            fails += 1

        # with room again the same import lands, and the store is sound
        r = subprocess.run(big, capture_output=True, text=True)
        ok, digest, counts = content(store)
        if r.returncode != 0 or ok != "ok" or counts.get("runs", 0) <= before[2].get("runs", 0):
            print("FAIL: the import after the disk had room: exit %d %r, integrity %s, runs %s"
                  % (r.returncode, r.stderr, ok, counts.get("runs")))
            fails += 1
        else:
            print("ok   with room again: imported, integrity ok, %d runs" % counts["runs"])

        # a new store on a full disk says so too
        env["PMCP_TEST_ENOSPC_AFTER"] = "0"
        fresh = os.path.join(folder, "new.db")
        r = subprocess.run([probe, "--store", fresh, "init"], capture_output=True, text=True, env=env)
        if r.returncode == 0 or "full" not in r.stderr:
            print("FAIL: a new store on a full disk: exit %d %r" % (r.returncode, r.stderr))
            fails += 1
        else:
            print("ok   new store on a full disk: %s" % r.stderr.strip())
    finally:
        shutil.rmtree(tmp)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
