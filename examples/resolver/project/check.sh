#!/bin/sh
# The project's test suite: features.txt has no conflict markers, and its
# entries are sorted and unique.
set -eu
if grep -nE '^(<<<<<<<|\|\|\|\|\|\|\||=======|>>>>>>>)' features.txt; then
  echo "features.txt has conflict markers"; exit 1
fi
grep -v '^#' features.txt > "${TMPDIR:-/tmp}/entries.$$"
if ! LC_ALL=C sort -uc "${TMPDIR:-/tmp}/entries.$$"; then
  rm -f "${TMPDIR:-/tmp}/entries.$$"
  echo "features.txt is not sorted, or lists a feature twice"; exit 1
fi
rm -f "${TMPDIR:-/tmp}/entries.$$"
echo "features.txt: ok"
