#!/usr/bin/env python3
"""Summarizes JFR execution samples: share of samples per thread, per leaf frame, and (with a prefix) the
first frame of that package in each stack (several prefixes: comma-separated, e.g.
dev.idgen.server,dev.idgen.core to leave out the generated dev.idgen.api classes that a bare server runs too);
with --inclusive THREAD, every frame's inclusive share on the
threads whose name contains THREAD.

  jfr print --events jdk.ExecutionSample --stack-depth 64 server.jfr > server.txt
  scripts/jfr-top.py server.txt dev.idgen
  scripts/jfr-top.py server.txt --inclusive grpc-default-worker
"""
import collections
import re
import sys


def events(path):
    for ev in open(path).read().split("jdk.ExecutionSample {")[1:]:
        t = re.search(r'sampledThread = "([^"]*)"', ev)
        yield (t.group(1) if t else "?"), re.findall(r"^\s+([\w$.<>]+)\(.*?line:", ev, re.M)


def show(title, counter, n, top):
    print("--", title)
    for key, c in counter.most_common(top):
        print(f"{c * 100 / n:5.1f}% {key}")


def main(argv):
    path = argv[1]
    if len(argv) > 3 and argv[2] == "--inclusive":
        inc, n = collections.Counter(), 0
        for thread, frames in events(path):
            if argv[3] in thread:
                n += 1
                inc.update(set(frames))
        print("samples", n)
        show("inclusive, threads named *" + argv[3] + "*", inc, max(n, 1), 50)
        return
    prefix = tuple(argv[2].split(",")) if len(argv) > 2 else None
    threads, leaf, first, n = collections.Counter(), collections.Counter(), collections.Counter(), 0
    for thread, frames in events(path):
        n += 1
        threads[re.sub(r"\d+", "N", thread)] += 1
        if frames:
            leaf[frames[0]] += 1
        if prefix:
            hit = next((f for f in frames if f.startswith(prefix)), None)
            if hit:
                first[hit] += 1
    print("samples", n)
    n = max(n, 1)
    show("threads", threads, n, 8)
    show("leaf frames", leaf, n, 15)
    if prefix:
        show("first frame under " + ",".join(prefix), first, n, 30)
        print(f"{sum(first.values()) * 100 / n:5.1f}% of the samples have a frame under {','.join(prefix)}")


if __name__ == "__main__":
    main(sys.argv)
