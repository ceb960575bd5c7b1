#!/bin/sh
# Re-vendor (or just verify) the third-party front-end assets in this folder.
#
#   static/vendor.sh          download pinned tarballs with `npm pack`, check
#                             their integrity, copy the files, verify sha256
#   static/vendor.sh --check  only verify the sha256 of the files already here
#
# To upgrade: change a version below, run with UPDATE=1 to print the new
# integrity/sha256 values, paste them here and into README.md.
set -eu

HTMX_VERSION=2.0.11
HTMX_INTEGRITY=sha512-Thx/WtpeOQqSrqBCw/A1cwGJGg4UrVa3+sW0GmrM3p4gJgO89ecH4qtbnyzDDWFvBTqjnIMCgELTNt636dtamA==
HTMX_SHA256=d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717

PICO_VERSION=2.1.1
PICO_INTEGRITY=sha512-kIDugA7Ps4U+2BHxiNHmvgPIQDWPDU4IeU6TNRdvXQM1uZX+FibqDQT2xUOnnO2yq/LUHcwnGlu1hvf4KfXnMg==
PICO_SHA256=fbc9a63fc9fc9f72d12fd7fc9806e11fa9f77ae4f9cad146b27003a1119ba3db

UPDATE=${UPDATE:-}
here=$(cd "$(dirname "$0")" && pwd)

verify() { # file expected-sha256
	if command -v sha256sum >/dev/null; then
		got=$(sha256sum "$here/$1" | cut -d' ' -f1)
	else # macOS
		got=$(shasum -a 256 "$here/$1" | cut -d' ' -f1)
	fi
	if [ "$got" != "$2" ]; then
		echo "sha256 mismatch for $1: got $got, want $2" >&2
		[ -n "$UPDATE" ] || exit 1
	else
		echo "ok  $1  $got"
	fi
}

if [ "${1:-}" != "--check" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT INT TERM
	fetch() { # spec expected-integrity dir
		json=$(cd "$tmp" && npm pack --silent --json "$1")
		tgz=$(printf '%s\n' "$json" | sed -n 's/.*"filename": *"\([^"]*\)".*/\1/p')
		integrity=$(printf '%s\n' "$json" | sed -n 's/.*"integrity": *"\([^"]*\)".*/\1/p')
		if [ "$integrity" != "$2" ]; then
			echo "integrity mismatch for $1: got $integrity, want $2" >&2
			[ -n "$UPDATE" ] || exit 1
		fi
		mkdir -p "$tmp/$3"
		tar -xzf "$tmp/$tgz" -C "$tmp/$3"
	}
	fetch "htmx.org@$HTMX_VERSION" "$HTMX_INTEGRITY" htmx
	fetch "@picocss/pico@$PICO_VERSION" "$PICO_INTEGRITY" pico
	mkdir -p "$here/js" "$here/css"
	cp "$tmp/htmx/package/dist/htmx.min.js" "$here/js/htmx.min.js"
	cp "$tmp/pico/package/css/pico.min.css" "$here/css/pico.min.css"
fi

verify js/htmx.min.js "$HTMX_SHA256"
verify css/pico.min.css "$PICO_SHA256"
