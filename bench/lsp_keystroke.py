#!/usr/bin/env python3
"""How long `loopc lsp` takes from a keystroke to its diagnostics.

    bench/lsp_keystroke.py LOOPC PLAN [KEYSTROKES]

Opens PLAN (e.g. the bench generator's 10,000-task plan.loop) in the
language server, then types KEYSTROKES characters (default 50) one at a
time at the end of the first task's name, as an editor does: each
keystroke is a `textDocument/didChange` with the one character as a ranged
edit when the server announces incremental sync (loopc does), else with the
whole new text, and the time is measured from writing it to reading
the `textDocument/publishDiagnostics` for that version. Prints the median,
90th percentile and worst, in milliseconds. Not part of the test suite
(no test asserts a duration); bench/run.sh runs it.
"""

import json
import os
import statistics
import subprocess
import sys
import time


def frame(msg):
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read(out):
    length = None
    while True:
        line = out.readline()
        if not line:
            raise SystemExit("the server closed its output")
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(out.read(length))


def cpu_ms(pid):
    """The CPU time (user + system) process `pid` has used, in ms (10 ms
    ticks): on a machine shared with other work the wall time alone says
    little."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


def main():
    loopc, plan = sys.argv[1], sys.argv[2]
    keystrokes = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    text = open(plan, encoding="utf-8").read()
    uri = "file:///bench/plan.loop"
    server = subprocess.Popen([loopc, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    send = lambda m: (server.stdin.write(frame(m)), server.stdin.flush())

    def diagnostics_for(version):
        while True:
            m = read(server.stdout)
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == version:
                return m

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    while True:
        m = read(server.stdout)
        if m.get("id") == 1:
            break
    sync = m["result"]["capabilities"].get("textDocumentSync", {})
    incremental = isinstance(sync, dict) and sync.get("change") == 2
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    start = time.perf_counter()
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "loop", "version": 1, "text": text}}})
    diagnostics_for(1)
    opened = (time.perf_counter() - start) * 1000
    # Type after the first task's name: each keystroke makes a new name.
    at = text.index("task ") + len("task ")
    at += len(text[at:].split()[0].rstrip(":{"))
    times = []
    cpu = []
    for k in range(keystrokes):
        text = text[:at] + "x" + text[at:]
        at += 1
        version = k + 2
        if incremental:
            # One character at the cursor, as an editor sends it.
            line = text.count("\n", 0, at - 1)
            col = len(text[text.rfind("\n", 0, at - 1) + 1:at - 1].encode("utf-16-le")) // 2
            pos = {"line": line, "character": col}
            change = {"range": {"start": pos, "end": pos}, "text": "x"}
        else:
            change = {"text": text}
        start = time.perf_counter()
        cpu_start = cpu_ms(server.pid)
        send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [change]}})
        diagnostics_for(version)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append(cpu_ms(server.pid) - cpu_start)
    send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    send({"jsonrpc": "2.0", "method": "exit"})
    server.wait(timeout=30)
    times.sort()
    p90 = times[int(len(times) * 0.9) - 1] if len(times) >= 10 else times[-1]
    print(f"lsp ({len(text) // 1024} KiB): open {opened:.1f} ms; keystroke to diagnostics: "
          f"median {statistics.median(times):.1f} ms, p90 {p90:.1f} ms, worst {times[-1]:.1f} ms "
          f"({keystrokes} keystrokes, {'ranged edits' if incremental else 'full text'}); "
          f"server CPU per keystroke: median {statistics.median(cpu):.0f} ms")


if __name__ == "__main__":
    main()
