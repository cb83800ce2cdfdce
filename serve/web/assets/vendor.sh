#!/usr/bin/env bash
# Reproduces the vendored libraries of static/vendor/ from npm, at the pinned
# versions below, and checks them against static/vendor/SHA256SUMS:
#
#   vendor.sh           fetch, and check that npm's files are the committed copies
#   vendor.sh --update  fetch, copy them over the committed ones, rewrite SHA256SUMS
#
# The committed files are the source: quire serves them from the binary
# (go:embed) and nothing is fetched at run time. This script only shows where
# they come from. Run it from anywhere; it works in a temporary folder.
set -euo pipefail
PLOT=0.6.17   # @observablehq/plot; its UMD bundle names d3@7.9.0
D3=7.9.0
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/static/vendor"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
command -v npm >/dev/null || { echo "npm is needed: apt-get install nodejs npm"; exit 1; }
cd "$tmp"
# The packages whose licenses are kept are pinned too (overrides), so that a
# newer release of one does not change the check.
cat > package.json <<JSON
{"private": true, "overrides": {"internmap": "2.0.3", "delaunator": "5.1.0", "robust-predicates": "3.0.3",
 "interval-tree-1d": "1.0.4", "binary-search-bounds": "2.0.5", "isoformat": "0.2.1"}}
JSON
npm install --silent --no-audit --no-fund --ignore-scripts "@observablehq/plot@$PLOT" "d3@$D3" >/dev/null
nm=node_modules
mkdir -p got/LICENSES
cp "$nm/d3/dist/d3.min.js" got/d3.min.js
cp "$nm/@observablehq/plot/dist/plot.umd.min.js" got/plot.umd.min.js
# The licenses of what the two bundles hold: d3's bundle holds internmap,
# delaunator and robust-predicates; Plot's holds interval-tree-1d (with
# binary-search-bounds) and isoformat.
for p in d3 internmap delaunator robust-predicates @observablehq/plot interval-tree-1d binary-search-bounds isoformat; do
  v="$(node -p "require('./$nm/$p/package.json').version")"
  cp "$nm/$p/LICENSE" "got/LICENSES/${p#@observablehq/}@$v.txt"
done
(cd got && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum) > got.sums
if [ "${1:-}" = "--update" ]; then
  rm -rf "$out"
  mkdir -p "$out"
  cp -r got/. "$out/"
  cp got.sums "$out/SHA256SUMS"
  echo "vendored @observablehq/plot@$PLOT and d3@$D3 into $out"
  exit 0
fi
(cd "$out" && sha256sum --quiet -c SHA256SUMS) || { echo "the committed copies in $out do not match their SHA256SUMS"; exit 1; }
diff -u "$out/SHA256SUMS" got.sums || { echo "npm's @observablehq/plot@$PLOT and d3@$D3 differ from the committed copies (vendor.sh --update replaces them)"; exit 1; }
echo "static/vendor/ is @observablehq/plot@$PLOT and d3@$D3 from npm, byte for byte"
