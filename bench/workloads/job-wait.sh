#!/bin/sh
# job-wait.sh BINARY [STATE_DIR] — an Indexed Job of PARALLELISM
# (50,000) pods whose image does not exist (they never start): `apply`,
# then `wait --for=condition=complete` (it ends at its work limit, exit 1)
# and two `clock advance 1m`; each command under /usr/bin/time (user,
# system CPU seconds, wall seconds, peak RSS KiB), with the load average.
#
#	sh bench/workloads/job-wait.sh ./konverge /tmp/job-state
bin=$1
state=${2:-$(mktemp -d)}
n=${PARALLELISM:-50000}
rm -rf "$state"; mkdir -p "$state"
m=$state/manifest.yaml
cat >"$m" <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: wide}
spec:
  completionMode: Indexed
  completions: $n
  parallelism: $n
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: registry.invalid/none:1
YAML
k() {
	/usr/bin/time -f "%U user %S sys %e wall %M KiB" "$bin" --state "$state/s" "$@" >/dev/null 2>"$state/time"
	printf '%-50s exit %s  %s  load %s\n' "$*" "$?" "$(tail -1 "$state/time")" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
k cluster init --clock manual
k apply -f "$m"
k wait --for=condition=complete job/wide --timeout=1h
k clock advance 1m
k clock advance 1m
