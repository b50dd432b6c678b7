#!/usr/bin/env python3
"""ncu_pick.py - read Nsight Compute CSV for bench/gpu-check.sh --ncu.

  ncu_pick.py LIST.csv       `ncu --import R --csv --print-units base
                             --print-kernel-base function` of a run profiled
                             with --metrics gpu__time_duration.sum; prints
                             "NAME SKIP NS COUNT TOTAL_NS": the slowest
                             kernel, how many launches of that name precede it
                             (ncu's --launch-skip with -k NAME), its time, the
                             number of kernels and their total time
  ncu_pick.py --details F    the details page (--set full) as CSV: one line of
                             the metrics that say where a kernel's time goes
  ncu_pick.py --selftest     both on built-in samples (no ncu needed; the
                             rehearsal runs it)
Plain Python: no numpy.
"""
import csv
import io
import sys

DETAILS = [  # (label, metric names as the details page spells them)
    ("dur", ("Duration",)),
    ("mem%", ("Memory Throughput",)),
    ("dram%", ("DRAM Throughput",)),
    ("sm%", ("Compute (SM) Throughput",)),
    ("occ%", ("Achieved Occupancy",)),
    ("regs", ("Registers Per Thread",)),
    ("grid", ("Grid Size",)),
    ("block", ("Block Size",)),
]


def rows(text):
    lines = text.splitlines()
    for i, l in enumerate(lines):  # skip anything before the header (==PROF== lines)
        if l.startswith('"ID"'):
            return list(csv.DictReader(io.StringIO("\n".join(lines[i:]))))
    return []


def num(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return None


def kname(r):
    return r.get("Kernel Name") or r.get("Function Name") or "?"


def pick(text):
    ks = []
    for r in rows(text):
        if r.get("Metric Name") == "gpu__time_duration.sum":
            v = num(r.get("Metric Value"))
            if v is not None:
                ks.append((int(num(r["ID"])), kname(r), v))
    if not ks:
        return None
    ks.sort()
    i = max(range(len(ks)), key=lambda j: ks[j][2])
    _, name, ns = ks[i]
    skip = sum(1 for k in ks[:i] if k[1] == name)
    name = name.split("(")[0].split("<")[0].strip().replace(" ", "_")
    return f"{name} {skip} {ns:.0f} {len(ks)} {sum(k[2] for k in ks):.0f}"


def details(text):
    got = {}
    for r in rows(text):
        got.setdefault(r.get("Metric Name"), (r.get("Metric Value"), r.get("Metric Unit", "")))
    out = []
    for label, names in DETAILS:
        for n in names:
            if n in got:
                v, u = got[n]
                out.append(f"{label} {v}{'' if u in ('', '%') else ' ' + u}")
                break
    return "; ".join(out).replace(",", "")


LIST_SAMPLE = '''==PROF== Disconnected from process 1234
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1234","ata-bench","127.0.0.1","ata_probe_kernel","1","7","(256, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","3,104"
"1","1234","ata-bench","127.0.0.1","ata_sptrsv_pull","1","7","(256, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","1,200"
"2","1234","ata-bench","127.0.0.1","ata_sptrsv_pull","1","7","(256, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","45,000"
"3","1234","ata-bench","127.0.0.1","ata_vec_kernel","1","7","(256, 1, 1)","(528, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","900"
'''
DETAIL_SAMPLE = '''"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1234","ata-bench","127.0.0.1","ata_sptrsv_pull","1","7","(256, 1, 1)","(132, 1, 1)","0","9.0","GPU Speed Of Light Throughput","Duration","ns","45,000"
"0","1234","ata-bench","127.0.0.1","ata_sptrsv_pull","1","7","(256, 1, 1)","(132, 1, 1)","0","9.0","GPU Speed Of Light Throughput","Memory Throughput","%","12.5"
"0","1234","ata-bench","127.0.0.1","ata_sptrsv_pull","1","7","(256, 1, 1)","(132, 1, 1)","0","9.0","Occupancy","Achieved Occupancy","%","40.1"
'''


def selftest():
    got = pick(LIST_SAMPLE)
    assert got == "ata_sptrsv_pull 1 45000 4 50204", got
    d = details(DETAIL_SAMPLE)
    assert d == "dur 45000 ns; mem% 12.5; occ% 40.1", d
    assert pick("nothing") is None
    print("ncu_pick selftest: ok")


def main(argv):
    if argv[1:] == ["--selftest"]:
        selftest()
        return 0
    if len(argv) == 3 and argv[1] == "--details":
        print(details(open(argv[2], errors="replace").read()))
        return 0
    if len(argv) == 2:
        p = pick(open(argv[1], errors="replace").read())
        if p:
            print(p)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
