#!/bin/sh
# service-ports.sh BINARY [STATE_DIR] — the steady-state cost of a Service
# of 100 numeric ports over a Deployment of 3,000 replicas: `cluster init
# --clock manual`, `apply` of both, four `clock advance 10s` (the first
# fills the Deployment, the others find a steady state); each command
# under /usr/bin/time (user,
# system CPU seconds, wall seconds, peak RSS KiB), with the load average.
#
#	sh bench/workloads/service-ports.sh ./konverge /tmp/svc-state
set -e
bin=$1
state=${2:-$(mktemp -d)}
ports=${PORTS:-100}
replicas=${REPLICAS:-3000}
rm -rf "$state"; mkdir -p "$state"
m=$state/manifest.yaml
{
	printf 'apiVersion: v1\nkind: Service\nmetadata: {name: many}\nspec:\n  selector: {app: many}\n  ports:\n'
	i=0
	while [ $i -lt "$ports" ]; do
		printf '  - {name: p%d, port: %d, targetPort: %d}\n' $i $((1000 + i)) $((1000 + i))
		i=$((i + 1))
	done
	printf -- '---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: many}\nspec:\n  replicas: %d\n' "$replicas"
	printf '  selector: {matchLabels: {app: many}}\n  template:\n    metadata: {labels: {app: many}}\n'
	printf '    spec:\n      containers:\n      - name: c\n        image: nginx:1.25\n'
} >"$m"
k() {
	/usr/bin/time -f "%U user %S sys %e wall %M KiB" "$bin" --state "$state/s" "$@" >/dev/null 2>"$state/time" || { cat "$state/time"; exit 1; }
	printf '%-24s %s  load %s\n' "$*" "$(tail -1 "$state/time")" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
k cluster init --clock manual
k apply -f "$m"
for i in 1 2 3 4; do
	k clock advance 10s
done
