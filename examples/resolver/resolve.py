#!/usr/bin/env python3
"""The scripted resolver of the resolver example (no AI needed).

loopc runs it in a scratch worktree at the integration branch head, with
the conflicting merge in progress: each conflicted file holds conflict
markers (diff3 style: ours, the common base, theirs). For a list like
features.txt the right resolution keeps the lines of both sides, in
order; that is what this does. A real resolver is an agent such as
`claude -p`, given the same prompt on stdin (both tasks' titles and
prompts, and the conflicted files).
"""
import json
import os
import subprocess
import sys

prompt = sys.stdin.read()  # what a real agent would read

conflicted = subprocess.run(
    ["git", "diff", "--name-only", "--diff-filter=U"],
    capture_output=True, text=True, check=True,
).stdout.split()

for path in conflicted:
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    out, ours, theirs, state = [], [], [], None
    for line in lines:
        if line.startswith("<<<<<<<"):
            state, ours, theirs = "ours", [], []
        elif line.startswith("|||||||"):
            state = "base"
        elif line == "=======" and state in ("ours", "base"):
            state = "theirs"
        elif line.startswith(">>>>>>>"):
            # Both sides' lines, each once, sorted like the rest of the list.
            out.extend(sorted(set(ours + theirs)))
            state = None
        elif state == "ours":
            ours.append(line)
        elif state == "theirs":
            theirs.append(line)
        elif state is None:
            out.append(line)
    header = [l for l in out if l.startswith("#")]
    body = sorted(set(l for l in out if not l.startswith("#")))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(header + body) + "\n")
    print(f"resolved {path}: kept both sides' entries")

with open(os.environ["LOOP_HANDOFF"], "w", encoding="utf-8") as f:
    json.dump({"status": "completed",
               "summary": f"kept both sides in {', '.join(conflicted)}",
               "extra_files": []}, f)
