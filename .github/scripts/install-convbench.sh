#!/usr/bin/env bash
# Installs cargo-convbench and prints the path of the binary (the last line of stdout).
#
# First choice, in seconds: the release binary of the version in "$CONVBENCH_SOURCE/Cargo.toml"
# (the pinned checkout of action.yml, or the default branch in comment.yml), built by
# release.yml, downloaded over HTTPS and accepted only when its SHA-256 is the one the release's
# SHA256SUMS lists. Otherwise (no release for this version or machine, a download or checksum
# failure): `cargo install --locked` from that same checkout, into "$CONVBENCH_ROOT" (which the
# callers cache). Nothing here reads the pull request's files, and the binary is called by its
# path afterwards, never through `cargo` in a checkout whose `.cargo/config.toml` could alias it.
#
# CONVBENCH_SOURCE       the checkout to install from (required)
# CONVBENCH_ROOT         where bin/ goes (default: ~/.convbench)
# CONVBENCH_RELEASE_URL  the releases' download URL (default: the repository's GitHub releases)
set -euo pipefail

source_dir="${CONVBENCH_SOURCE:?set CONVBENCH_SOURCE to the convbench checkout}"
root="${CONVBENCH_ROOT:-$HOME/.convbench}"
release_url="${CONVBENCH_RELEASE_URL:-https://github.com/convbench/convbench/releases/download}"

# The workspace's version: the first `version = "..."` of [workspace.package].
version="$(awk '/^\[/{in_package = ($0 == "[workspace.package]")} in_package && /^version *= *"/ {gsub(/^version *= *"|".*$/, ""); print; exit}' "$source_dir/Cargo.toml")"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
  echo "::error::no version in [workspace.package] of $source_dir/Cargo.toml" >&2
  exit 1
fi

ext=""
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
  Darwin-arm64) target=aarch64-apple-darwin ;;
  Darwin-x86_64) target=x86_64-apple-darwin ;;
  MINGW*-x86_64 | MSYS*-x86_64 | CYGWIN*-x86_64) target=x86_64-pc-windows-msvc ext=".exe" ;;
  *) target="" ;;
esac
binary="$root/bin/cargo-convbench$ext"

sha256() {
  if command -v sha256sum > /dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d ' ' -f 1
}

# The release binary, when it exists for this machine and its checksum matches.
prebuilt() {
  [ -n "$target" ] || return 1
  local name="cargo-convbench-$target"
  local dir
  dir="$(mktemp -d)"
  local base="$release_url/v$version"
  curl --proto '=https,file' --fail --silent --show-error --location --retry 3 \
    --output "$dir/$name.tar.gz" "$base/$name.tar.gz" || return 1
  curl --proto '=https,file' --fail --silent --show-error --location --retry 3 \
    --output "$dir/SHA256SUMS" "$base/SHA256SUMS" || return 1
  local expected
  expected="$(awk -v file="$name.tar.gz" '$2 == file || $2 == "*" file {print $1; exit}' "$dir/SHA256SUMS")"
  local actual
  actual="$(sha256 "$dir/$name.tar.gz")"
  if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
    echo "::warning::$name.tar.gz of v$version does not match its SHA256SUMS entry; building from source instead" >&2
    return 1
  fi
  tar -xzf "$dir/$name.tar.gz" -C "$dir" "$name/cargo-convbench$ext" || return 1
  mkdir -p "$root/bin"
  mv "$dir/$name/cargo-convbench$ext" "$binary"
  chmod +x "$binary"
  echo "installed the release binary of convbench v$version ($target), SHA-256 $actual" >&2
}

if [ -x "$binary" ] && [ "$("$binary" convbench --version 2> /dev/null)" = "cargo-convbench $version" ]; then
  echo "convbench v$version is already installed (cached)" >&2
elif ! prebuilt; then
  echo "no usable release binary of convbench v$version for this machine; cargo install --locked" >&2
  cargo install --locked --quiet --path "$source_dir/cargo-convbench" --root "$root" >&2
fi
echo "$binary"
