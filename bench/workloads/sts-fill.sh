#!/bin/sh
# sts-fill.sh BINARY [STATE_DIR] — a Parallel StatefulSet of REPLICAS
# (100,000): `apply`, then two `clock advance 1h` (each ends at its work
# limit while the set fills); each command under /usr/bin/time (user,
# system CPU seconds, wall seconds, peak RSS KiB), with the load average.
#
#	sh bench/workloads/sts-fill.sh ./konverge /tmp/sts-state
bin=$1
state=${2:-$(mktemp -d)}
n=${REPLICAS:-100000}
rm -rf "$state"; mkdir -p "$state"
m=$state/manifest.yaml
cat >"$m" <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: big}
spec:
  replicas: $n
  podManagementPolicy: Parallel
  serviceName: big
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
k clock advance 1h
k clock advance 1h
k clock advance 1h
