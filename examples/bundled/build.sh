#!/bin/sh
# Rebuilds dist/app.min.js and its source map from src/ with a pinned esbuild from npm
# (run through npx: nothing is installed in the repository). Run from anywhere.
set -eu
ESBUILD_VERSION=0.28.2
cd "$(dirname "$0")"
npx --yes "esbuild@$ESBUILD_VERSION" src/main.js \
  --bundle --minify --sourcemap --format=iife --target=es2020 \
  --outfile=dist/app.min.js
