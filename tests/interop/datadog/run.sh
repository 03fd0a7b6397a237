#!/usr/bin/env bash
# Runs DataDog's real Go and Java libraries over values.txt and writes go-keys.txt and
# java-keys.txt, which tests/datadog_keys.rs compares tailguard with, and the mappings
# their accuracy constructors build, go-constructors.txt and java-constructors.txt, which
# tests/datadog_mappings.rs compares with. Not run by CI (it needs the libraries'
# sources); see README.md in this folder.
#
#   SKETCHES_GO=/path/to/sketches-go SKETCHES_JAVA=/path/to/sketches-java bash run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Go, in GOPATH mode: the mapping package needs only the standard library and protobuf
# (Debian's golang-google-protobuf-dev), so no module download is needed.
mkdir -p "$work/go/src/github.com/DataDog" "$work/go/src/google.golang.org" "$work/go/src/keys" \
  "$work/go/src/constructors"
ln -s "$SKETCHES_GO" "$work/go/src/github.com/DataDog/sketches-go"
ln -s "${GO_PROTOBUF:-/usr/share/gocode/src/google.golang.org/protobuf}" \
  "$work/go/src/google.golang.org/protobuf"
cp "$here/keys.go" "$work/go/src/keys/main.go"
(cd "$work/go/src/keys" && GO111MODULE=off GOPATH="$work/go" go run .) \
  < "$here/values.txt" > "$here/go-keys.txt"
cp "$here/constructors.go" "$work/go/src/constructors/main.go"
(cd "$work/go/src/constructors" && GO111MODULE=off GOPATH="$work/go" go run .) \
  > "$here/go-constructors.txt"

# Java: the library's main sources compile on their own (no dependencies).
mkdir -p "$work/java"
javac -d "$work/java" $(find "$SKETCHES_JAVA/src/main/java" -name '*.java') "$here/Keys.java" \
  "$here/Constructors.java"
java -cp "$work/java" Keys < "$here/values.txt" > "$here/java-keys.txt"
java -cp "$work/java" Constructors > "$here/java-constructors.txt"

echo "go $(go version | cut -d' ' -f3-), sketches-go $(git -C "$SKETCHES_GO" rev-parse --short HEAD)" > "$here/versions.txt"
echo "java $(java -version 2>&1 | head -1), sketches-java $(git -C "$SKETCHES_JAVA" rev-parse --short HEAD)" >> "$here/versions.txt"
wc -l "$here"/*-keys.txt "$here"/*-constructors.txt
