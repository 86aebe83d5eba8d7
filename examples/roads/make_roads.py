#!/usr/bin/env python3
"""Writes the sample OpenCRG roads of examples/roads/ (plain Python, no packages).

    python3 examples/roads/make_roads.py

Each road exercises a part of the format that implementations get wrong; the Rust
reader (road/) is checked against the official OpenCRG C library on all of them
(road/tests/road/pycrg.rs). Elevations are closed forms sampled on the grid, so the files
are reproducible; all are small (< 40 kB).

- straight.crg   straight reference line from the header only (start away from the
                 origin, heading 0.4 rad: the default modifiers move it to the
                 origin), long sections by position, text format LRFI.
- curved.crg     heading channel (a clothoid into an arc and back), long sections by
                 index (their default lateral positions from LONG_SECTION_V_RIGHT and
                 _INCREMENT), text format LDFI.
- banked.crg     gentle curve with banking and slope channels, start and end
                 elevation and end point given (both blended integrations), binary
                 double precision KDBI.
- nans.crg       straight, NaN borders of varying width (default modifiers: keep the
                 last valid value), binary single precision KRBI.
- nans_mods.crg  the same grid with its own modifiers: NaNs set to an offset and the
                 road moved by a reference point (u fraction, x, y, z, heading).
- friction.crg   friction μ on the reference line of curved.crg (grid_nan_mode only,
                 so it is not moved): for `Road::new(curved, Some(friction))`.
"""

import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def header(road, mods=None, comment="fdc sample road"):
    lines = ["$CT", comment, "$", "$ROAD_CRG"]
    lines += [f"{k:<26}= {v!r}" for k, v in road.items()]
    lines.append("$")
    if mods is not None:
        lines.append("$ROAD_CRG_MODS")
        lines += [f"{k:<26}= {v!r}" for k, v in mods.items()]
        lines.append("$")
    return lines


def kd(fmt, channels):
    return ["$KD_DEFINITION", f"#:{fmt}", "U:reference line u,m"] + [f"D:{c}" for c in channels] + ["$"]


def text_records(records, width, decimals):
    out = []
    per_line = 80 // width
    for rec in records:
        fields = []
        for x in rec:
            if x is None or (isinstance(x, float) and math.isnan(x)):
                fields.append("NaN".rjust(width))
            else:
                s = f"{x:{width}.{decimals}f}"
                if len(s) > width:
                    s = f"{x:{width}.{decimals - (len(s) - width)}f}"
                fields.append(s)
        for i in range(0, len(fields), per_line):
            out.append("".join(fields[i : i + per_line]))
    return out


def write(name, head, records, fmt):
    path = os.path.join(HERE, name)
    start = "$$$$$$$$10$$$$$$$$20$$$$$$$$30$$$$$$$$40$$$$$$$$50$$$$$$$$60$$$$$$$$70$$$$$$$$80"
    with open(path, "wb") as f:
        f.write(("\n".join(head + [start]) + "\n").encode())
        if fmt in ("LRFI", "LDFI"):
            width, dec = (10, 6) if fmt == "LRFI" else (20, 13)
            f.write(("\n".join(text_records(records, width, dec)) + "\n").encode())
        else:
            code = ">f" if fmt == "KRBI" else ">d"
            for rec in records:
                for x in rec:
                    f.write(struct.pack(code, float("nan") if x is None else x))


def bumps(u, v):
    return 0.02 * math.sin(2 * math.pi * u / 8) + 0.01 * math.cos(2 * math.pi * v / 3) + 0.004 * u * v / 10


def straight():
    vs = [-2.0 + 0.5 * i for i in range(9)]
    n, du = 81, 0.5
    road = dict(
        REFERENCE_LINE_START_U=0.0, REFERENCE_LINE_END_U=(n - 1) * du, REFERENCE_LINE_INCREMENT=du,
        REFERENCE_LINE_START_X=12.0, REFERENCE_LINE_START_Y=-3.0, REFERENCE_LINE_START_PHI=0.4,
        LONG_SECTION_V_RIGHT=vs[0], LONG_SECTION_V_LEFT=vs[-1],
    )
    chans = [f"long section at v = {v:.3f},m" for v in vs]
    recs = [[bumps(i * du, v) for v in vs] for i in range(n)]
    write("straight.crg", header(road) + kd("LRFI", chans), recs, "LRFI")


def curvature(u):
    # Straight 5 m, clothoid to 1/25 m over 10 m, arc, clothoid back, straight.
    if u < 5:
        return 0.0
    if u < 15:
        return (u - 5) / 10 / 25
    if u < 25:
        return 1 / 25
    if u < 35:
        return (35 - u) / 10 / 25
    return 0.0


def headings(n, du, phi0, curv):
    phi = [phi0]
    for i in range(1, n):
        # Heading at the point (midpoint rule for the curvature integral).
        phi.append(phi[-1] + du * curv((i - 0.5) * du))
    return phi


def curved():
    n, du = 81, 0.5
    nv, dv, vr = 13, 0.25, -1.5
    phi = headings(n, du, 0.3, curvature)
    road = dict(
        REFERENCE_LINE_START_U=0.0, REFERENCE_LINE_END_U=(n - 1) * du, REFERENCE_LINE_INCREMENT=du,
        REFERENCE_LINE_START_X=0.0, REFERENCE_LINE_START_Y=0.0, REFERENCE_LINE_START_PHI=0.3,
        REFERENCE_LINE_END_PHI=phi[-1],
        LONG_SECTION_V_RIGHT=vr, LONG_SECTION_V_LEFT=vr + (nv - 1) * dv, LONG_SECTION_V_INCREMENT=dv,
    )
    chans = ["reference line phi,rad"] + [f"long section {k + 1},m" for k in range(nv)]
    recs = [[phi[i]] + [bumps(i * du, vr + k * dv) for k in range(nv)] for i in range(n)]
    write("curved.crg", header(road) + kd("LDFI", chans), recs, "LDFI")
    # Friction on the same reference line: a patch of low μ on the left half.
    fric = [[phi[i]] + [0.9 - 0.5 * (k >= 7) * (15 <= i * du <= 25) for k in range(nv)] for i in range(n)]
    mods = dict(GRID_NAN_MODE=2)
    write("friction.crg", header(road, mods, "friction of curved.crg") + kd("LRFI", chans), fric, "LRFI")


def banked():
    n, du = 61, 0.5
    vs = [-1.75 + 0.5 * i for i in range(8)]
    phi = headings(n, du, -0.2, lambda u: 0.01)
    # End point of the continuous curve (not the discrete one: the blend matters).
    x_end = (math.sin(-0.2 + 0.01 * 30) - math.sin(-0.2)) / 0.01
    y_end = -(math.cos(-0.2 + 0.01 * 30) - math.cos(-0.2)) / 0.01
    road = dict(
        REFERENCE_LINE_START_U=0.0, REFERENCE_LINE_END_U=(n - 1) * du, REFERENCE_LINE_INCREMENT=du,
        REFERENCE_LINE_START_X=0.0, REFERENCE_LINE_START_Y=0.0, REFERENCE_LINE_START_PHI=-0.2,
        REFERENCE_LINE_END_X=x_end, REFERENCE_LINE_END_Y=y_end, REFERENCE_LINE_END_PHI=phi[-1],
        REFERENCE_LINE_START_Z=1.5, REFERENCE_LINE_END_Z=2.1,
        LONG_SECTION_V_RIGHT=vs[0], LONG_SECTION_V_LEFT=vs[-1],
    )
    chans = ["reference line phi,rad", "reference line banking,m/m", "reference line slope,m/m"]
    chans += [f"long section at v = {v:.3f},m" for v in vs]
    recs = []
    for i in range(n):
        u = i * du
        bank = 0.04 * math.sin(math.pi * u / 30)
        slope = 0.02 + 0.01 * math.cos(2 * math.pi * u / 15)
        recs.append([phi[i], bank, slope] + [0.5 * bumps(u, v) for v in vs])
    write("banked.crg", header(road) + kd("KDBI", chans), recs, "KDBI")


def nans():
    n, du = 41, 0.5
    vs = [-1.5 + 0.5 * i for i in range(7)]
    road = dict(
        REFERENCE_LINE_START_U=2.0, REFERENCE_LINE_END_U=2.0 + (n - 1) * du, REFERENCE_LINE_INCREMENT=du,
        REFERENCE_LINE_START_PHI=0.0, LONG_SECTION_V_RIGHT=vs[0], LONG_SECTION_V_LEFT=vs[-1],
    )
    chans = [f"long section at v = {v:.3f},m" for v in vs]
    recs = []
    for i in range(n):
        right, left = i % 3, (i // 2) % 4  # NaN border widths
        rec = [0.01 * (1 + k) + 0.003 * i for k in range(len(vs))]
        for k in range(len(vs)):
            if k < right or k >= len(vs) - left:
                rec[k] = None
        recs.append(rec)
    write("nans.crg", header(road) + kd("KRBI", chans), recs, "KRBI")
    mods = dict(GRID_NAN_MODE=1, GRID_NAN_OFFSET=0.05, REFPOINT_U_FRACTION=0.5, REFPOINT_V=0.25,
                REFPOINT_X=100.0, REFPOINT_Y=50.0, REFPOINT_Z=3.0, REFPOINT_PHI=1.0)
    write("nans_mods.crg", header(road, mods) + kd("KRBI", chans), recs, "KRBI")


if __name__ == "__main__":
    straight()
    curved()
    banked()
    nans()
