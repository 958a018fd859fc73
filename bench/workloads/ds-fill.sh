#!/bin/sh
# ds-fill.sh BINARY [STATE_DIR] — a DaemonSet beside a Deployment of
# REPLICAS (20,000) filling: `apply` of both, then three `clock advance
# 30s` (each ends at its work limit while the Deployment fills); each
# command under /usr/bin/time (user, system CPU seconds, wall seconds,
# peak RSS KiB), with the load average.
#
#	sh bench/workloads/ds-fill.sh ./konverge /tmp/ds-state
bin=$1
state=${2:-$(mktemp -d)}
n=${REPLICAS:-20000}
rm -rf "$state"; mkdir -p "$state"
m=$state/manifest.yaml
cat >"$m" <<YAML
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: a, image: nginx:1.25}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  replicas: $n
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers: [{name: c, image: nginx:1.25}]
YAML
k() {
	/usr/bin/time -f "%U user %S sys %e wall %M KiB" "$bin" --state "$state/s" "$@" >/dev/null 2>"$state/time"
	printf '%-45s exit %s  %s  load %s\n' "$*" "$?" "$(tail -1 "$state/time")" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
k cluster init --clock manual
k apply -f "$m"
k clock advance 30s
k clock advance 30s
k clock advance 30s
