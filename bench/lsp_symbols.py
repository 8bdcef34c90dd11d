#!/usr/bin/env python3
"""The language server's document symbols of a large plan.

    bench/lsp_symbols.py LOOPC PLAN

Opens PLAN in `loopc lsp`, waits for its diagnostics, asks for
`textDocument/documentSymbol` and prints how many symbols came back and how
long each step took; exits 1 when the server dies, answers with an error,
or returns fewer symbols than PLAN has items. bench/run.sh runs it on the
1,000,000-task shapes (a chain, a fan-in, a fan-out), where a tree walk
that recursed per task would overflow the stack. Not part of the test
suite (tests/check/scale.rs holds the same shapes at 20,000 tasks on a small
stack).
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_keystroke import frame, read  # noqa: E402


def main():
    loopc, plan = sys.argv[1], sys.argv[2]
    text = open(plan, encoding="utf-8").read()
    items = sum(1 for line in text.splitlines() if line.startswith("task "))
    uri = "file:///bench/plan.loop"
    server = subprocess.Popen([loopc, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(m):
        server.stdin.write(frame(m))
        server.stdin.flush()

    def answer(id):
        while True:
            m = read(server.stdout)
            if m.get("id") == id:
                return m

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    answer(1)
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    start = time.perf_counter()
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "loop", "version": 1, "text": text}}})
    while read(server.stdout).get("method") != "textDocument/publishDiagnostics":
        pass
    opened = time.perf_counter() - start
    start = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/documentSymbol",
          "params": {"textDocument": {"uri": uri}}})
    m = answer(2)
    asked = time.perf_counter() - start
    send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    answer(3)
    send({"jsonrpc": "2.0", "method": "exit"})
    server.wait(timeout=60)
    symbols = m.get("result") or []
    print(f"lsp document symbols ({items} tasks): {len(symbols)} symbols; "
          f"open {opened:.1f} s, symbols {asked:.1f} s; exit {server.returncode}")
    if "error" in m or len(symbols) < items or server.returncode != 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
