#!/bin/sh
# update_disposable.sh regenerates disposable_domains.txt from the npm package
# disposable-email-domains (MIT, https://github.com/ivolo/disposable-email-domains).
#
# To move to a newer list: check `npm view disposable-email-domains version`,
# set VERSION below, run this script, review the diff and run `go test .`.
set -eu

VERSION=1.0.62
PACKAGE=disposable-email-domains

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null && tar -xzf "$PACKAGE-$VERSION.tgz")
cd "$here"
go run gen_disposable.go -pkg "$tmp/package" -out disposable_domains.txt
head -n 4 disposable_domains.txt
