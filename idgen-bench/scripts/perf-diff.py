#!/usr/bin/env python3
"""Compares two perf profiles of a server per call: for every frame (Java, JVM or kernel), the CPU time per call of
the samples that have it on their stack, in the first profile, in the second, and the difference, largest first.
With --only, the frames whose names contain one of the given strings, in that order.

JFR's execution samples leave out threads in native code (syscalls, the JVM), which is a third of a gRPC server's
time; perf's cpu-clock samples take everything. Record each profile over a window of known calls/s:

  java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -jar ...   # the server
  perf record -F 997 -g -p PID -o a.data -- sleep 30       # during the load
  jcmd PID Compiler.perfmap                                 # /tmp/perf-PID.map: names for the JIT's code
  perf script -i a.data -F comm,tid,ip,sym > a.txt

  scripts/perf-diff.py a.txt CALLS_A b.txt CALLS_B [--hz 997] [--top 60] [--only NAME ...]

CALLS_A, CALLS_B: the calls the process served while perf recorded (calls/s x seconds).
"""
import argparse
import collections
import sys


def stacks(path):
    """Each sample's frames, innermost first."""
    frames = None
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if frames is not None:
                    yield frames
                frames = None
            elif not line[0].isspace():
                frames = []  # the sample's header: thread name and id
            elif frames is not None:
                parts = line.strip().split(" ", 1)
                frames.append(parts[1] if len(parts) > 1 else "?")
    if frames:
        yield frames


def inclusive(path, names):
    """Samples per frame (a frame counted once per sample), samples with a frame containing each of names, and all
    samples: one pass over the file."""
    per_frame, per_name, n = collections.Counter(), collections.Counter(), 0
    for frames in stacks(path):
        n += 1
        unique = set(frames)
        per_frame.update(unique)
        per_name.update(name for name in names if any(name in f for f in unique))
    return per_frame, per_name, n


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first")
    parser.add_argument("first_calls", type=float)
    parser.add_argument("second")
    parser.add_argument("second_calls", type=float)
    parser.add_argument("--hz", type=float, default=997)
    parser.add_argument("--top", type=int, default=60)
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME")
    args = parser.parse_args(argv[1:])
    period_us = 1e6 / args.hz
    a, a_named, na = inclusive(args.first, args.only)
    b, b_named, nb = inclusive(args.second, args.only)
    per_a, per_b = period_us / args.first_calls, period_us / args.second_calls
    print(f"all samples: {na * per_a:7.1f} {nb * per_b:7.1f} us per call")
    print(f"{'diff':>7} {'first':>7} {'second':>7}  frame (us of CPU per call)")
    if args.only:
        rows = [(a_named[k] * per_a - b_named[k] * per_b, a_named[k] * per_a, b_named[k] * per_b, k)
                for k in args.only]
    else:
        rows = sorted(((a[k] * per_a - b[k] * per_b, a[k] * per_a, b[k] * per_b, k) for k in set(a) | set(b)),
                      reverse=True)[: args.top]
    for d, x, y, name in rows:
        print(f"{d:7.2f} {x:7.2f} {y:7.2f}  {name[:160]}")


if __name__ == "__main__":
    main(sys.argv)
