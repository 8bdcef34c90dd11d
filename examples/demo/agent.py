#!/usr/bin/env python3
"""A scripted stand-in for a coding agent, for the loopc demo.

It follows loopc's agent protocol exactly as a real agent CLI would:
the prompt arrives on stdin, the task and files come from the LOOP_*
environment variables, the work is left as file changes in the current
directory (the task's worktree), and a handoff JSON is written to
$LOOP_HANDOFF.

    agent.py work     do the task named by $LOOP_TASK
    agent.py review   judge the diff in $LOOP_DIFF_FILE (an agent-judged gate)

It makes real code changes. The `titlecase` task is written with a bug on
its first attempt; the next attempt reads $LOOP_FEEDBACK_FILE (the failing
test output loopc saved) and fixes it, as an agent would.
"""

import json
import os
import sys

SLUG = '''"""Turning text into URL slugs."""

import re


def slugify(text):
    """Return ``text`` lowercased, punctuation dropped, words joined by "-"."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)
'''

SLUG_TESTS = '''import unittest

from textkit.slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_words_joined_by_dashes(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_extra_spaces_and_case(self):
        self.assertEqual(slugify("  Loop   Compiler 2 "), "loop-compiler-2")


if __name__ == "__main__":
    unittest.main()
'''

# First attempt: capitalizes every word (the bug the tests catch).
TITLE_NAIVE = '''"""Title case for headings."""


def title_case(text):
    """Return ``text`` with every word capitalized."""
    return " ".join(word.capitalize() for word in text.split())
'''

TITLE_FIXED = '''"""Title case for headings."""

SMALL_WORDS = {"a", "an", "and", "of", "the", "in", "on"}


def title_case(text):
    """Return ``text`` in title case; small words stay lower case unless first."""
    words = text.lower().split()
    return " ".join(
        word if i > 0 and word in SMALL_WORDS else word.capitalize()
        for i, word in enumerate(words)
    )
'''

TITLE_TESTS = '''import unittest

from textkit.titlecase import title_case


class TitleCaseTest(unittest.TestCase):
    def test_capitalizes_words(self):
        self.assertEqual(title_case("loop compiler"), "Loop Compiler")

    def test_small_words_stay_lower_case(self):
        self.assertEqual(title_case("the lord of the rings"), "The Lord of the Rings")


if __name__ == "__main__":
    unittest.main()
'''

CLI = '''"""Command line: ``python3 -m textkit slug|title TEXT``."""

import argparse
import sys

from textkit.slug import slugify
from textkit.titlecase import title_case


def main(argv=None):
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="textkit")
    parser.add_argument("command", choices=["slug", "title"])
    parser.add_argument("text")
    args = parser.parse_args(argv)
    convert = slugify if args.command == "slug" else title_case
    sys.stdout.write(convert(args.text) + "\\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

CLI_TESTS = '''import subprocess
import sys
import unittest


def textkit(*args):
    return subprocess.run(
        [sys.executable, "-m", "textkit", *args],
        capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL,
    ).stdout


class CliTest(unittest.TestCase):
    def test_slug(self):
        self.assertEqual(textkit("slug", "Hello, World!"), "hello-world\\n")

    def test_title(self):
        self.assertEqual(textkit("title", "war and peace"), "War and Peace\\n")


if __name__ == "__main__":
    unittest.main()
'''


def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except (OSError, TypeError):
        return ""


def handoff(status, summary, **extra):
    with open(os.environ["LOOP_HANDOFF"], "w", encoding="utf-8") as f:
        json.dump({"status": status, "summary": summary, "cost_usd": 0.0, **extra}, f)


def work():
    sys.stdin.read()  # the prompt; a real agent would act on it
    task = os.environ["LOOP_TASK"]
    feedback = read(os.environ.get("LOOP_FEEDBACK_FILE"))
    if task == "slugify":
        write("textkit/slug.py", SLUG)
        write("tests/test_slug.py", SLUG_TESTS)
        handoff("completed", "added slugify() with tests")
    elif task == "titlecase":
        write("tests/test_titlecase.py", TITLE_TESTS)
        if "title_case" in feedback or "Lord" in feedback:
            # The previous attempt failed its tests; the feedback shows why.
            write("textkit/titlecase.py", TITLE_FIXED)
            handoff("completed", "added title_case(); small words stay lower case (fixed from feedback)")
        else:
            write("textkit/titlecase.py", TITLE_NAIVE)
            handoff("completed", "added title_case() with tests")
    elif task == "cli":
        write("textkit/__main__.py", CLI)
        write("tests/test_cli.py", CLI_TESTS)
        handoff("completed", "added python3 -m textkit slug|title")
    else:
        handoff("blocked", "the scripted agent does not know task %r" % task)


def review():
    sys.stdin.read()
    diff = read(os.environ.get("LOOP_DIFF_FILE"))
    problems = []
    current = None
    first_line_seen = {}
    for line in diff.splitlines():
        if line.startswith("+++ b/"):
            current = line[len("+++ b/"):]
        elif line.startswith("+") and not line.startswith("+++") and current:
            added = line[1:]
            if current.startswith("textkit/") and current.endswith(".py"):
                if current not in first_line_seen:
                    first_line_seen[current] = added
                    if not added.startswith('"""'):
                        problems.append("%s has no module docstring" % current)
                if "print(" in added:
                    problems.append("%s prints from library code" % current)
            if "TODO" in added:
                problems.append("%s leaves a TODO" % current)
    if not diff.strip():
        problems.append("the diff is empty")
    if problems:
        handoff("failed", "; ".join(problems))
    else:
        handoff("completed", "reviewed %d file(s): docstrings present, no prints, no TODOs" % len(first_line_seen))


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "work"
    review() if mode == "review" else work()
