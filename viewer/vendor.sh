#!/usr/bin/env bash
# Fetches the pinned npm tarballs of the page's JavaScript libraries, checks their
# sha512 against the pins below and copies the few files the page uses into web/vendor/.
# Run by hand when a pin changes; the build and the page never touch the network.
set -euo pipefail
cd "$(dirname "$0")"
# package version file-in-tarball sha512 (npm's dist.integrity)
pins=(
  "three 0.170.0 package/build/three.module.min.js sha512-FQK+LEpYc0fBD+J8g6oSEyyNzjp+Q7Ks1C568WWaoMRLW+TkNNWmenWeGgJjV105Gd+p/2ql1ZcjYvNiPZBhuQ=="
  "uplot 1.6.31 package/dist/uPlot.iife.min.js sha512-sQZqSwVCbJGnFB4IQjQYopzj5CoTZJ4Br1fG/xdONimqgHmsacvCjNesdGDypNKFbrhLGIeshYhy89FxPF+H+w=="
  "uplot 1.6.31 package/dist/uPlot.min.css sha512-sQZqSwVCbJGnFB4IQjQYopzj5CoTZJ4Br1fG/xdONimqgHmsacvCjNesdGDypNKFbrhLGIeshYhy89FxPF+H+w=="
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pin in "${pins[@]}"; do
  read -r pkg ver file integrity <<<"$pin"
  tgz="$tmp/$pkg-$ver.tgz"
  if [ ! -f "$tgz" ]; then
    (cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null)
    got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
    [ "$got" = "$integrity" ] || { echo "hash mismatch for $pkg@$ver: $got" >&2; exit 1; }
    mkdir -p "$tmp/$pkg"
    tar -xzf "$tgz" -C "$tmp/$pkg"
  fi
  cp "$tmp/$pkg/$file" "web/vendor/$(basename "$file")"
  cp "$tmp/$pkg/package/LICENSE" "web/vendor/LICENSE.$pkg"
done
echo "vendored into web/vendor/"
