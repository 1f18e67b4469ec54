#!/usr/bin/env bash
# Builds tools/oracle/main.go against the two vendored upstream trees (see ../shared/upstream-go/README.md for
# how each tree is laid out): GO135=<dir with go.mod + vendor of v1.35.4>, GO136=<cluster-autoscaler dir of the
# fork vendoring v1.36.2>, OUT=<dir for oracle-1.35 and oracle-1.36>. Needs `go` on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${GO135:?set GO135}" "${GO136:?set GO136}" "${OUT:?set OUT}"
export GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local
mkdir -p "$GO135/oracle-ext" "$GO136/oracle-ext"
cp "$here/main.go" "$GO135/oracle-ext/main.go"
sed 's/V1alpha3().DeviceTaintRules()/V1beta2().DeviceTaintRules()/' "$here/main.go" > "$GO136/oracle-ext/main.go"
(cd "$GO135" && go build -o "$OUT/oracle-1.35" ./oracle-ext)
(cd "$GO136" && go build -o "$OUT/oracle-1.36" ./oracle-ext)
echo "built $OUT/oracle-1.35 $OUT/oracle-1.36"
