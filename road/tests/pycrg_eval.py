"""Evaluates OpenCRG files with the official C library (through pycrg) for
road/tests/road/pycrg.rs. Reads one JSON request per line on stdin:
{"file": path, "xy": [[x, y], ...], "uv": [[u, v], ...]} and answers one JSON line:
{"xy_z", "xy_uv", "uv_z", "uv_xy", "u_range", "v_range"}. Files load as
`DataSet.open` does (the file's modifiers, else the standard's defaults). Each
contact point has no history, so every (x, y) → (u, v) search starts afresh.
"""

import json
import sys

import pycrg

pycrg.set_message_level(pycrg.MSG_LEVEL_NONE)
for line in sys.stdin:
    req = json.loads(line)
    with pycrg.DataSet.open(req["file"]) as ds:
        cp = ds.create_contact_point()
        out = {
            "u_range": list(ds.u_range()),
            "v_range": list(ds.v_range()),
            "xy_z": [], "xy_uv": [], "uv_z": [], "uv_xy": [],
        }
        for x, y in req["xy"]:
            cp2 = ds.create_contact_point()
            out["xy_uv"].append(list(cp2.xy_to_uv(x, y)))
            out["xy_z"].append(cp2.xy_to_z(x, y))
        for u, v in req["uv"]:
            out["uv_z"].append(cp.uv_to_z(u, v))
            out["uv_xy"].append(list(cp.uv_to_xy(u, v)))
    print(json.dumps(out), flush=True)
