#!/bin/sh
# Records what kube-apiserver stores for quantities in a pod's resource
# lists (parsing, SetDefaults_ResourceList's rounding to milli units,
# canonical form) or how it refuses them, into
# testdata/quantity/pod-resources.txt: one line per input,
# "<input>\t<stored cpu request>" or "<input>\tERROR". Needs a real cluster
# (scripts/realcluster.sh up; eval "$(scripts/realcluster.sh env)").
set -eu
out=$(dirname "$0")/../testdata/quantity/pod-resources.txt
ns=record-quantities
kubectl create namespace $ns >/dev/null 2>&1 || true
: > "$out.tmp"
while IFS= read -r q; do
	[ -z "$q" ] && continue
	cat > /tmp/record-quantity.yaml <<YAML
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: $ns}
spec:
  containers:
  - name: c
    image: nginx:1.16.1
    resources:
      requests: {cpu: "$q"}
YAML
	if kubectl apply -f /tmp/record-quantity.yaml >/dev/null 2>&1; then
		got=$(kubectl -n $ns get pod q -o jsonpath='{.spec.containers[0].resources.requests.cpu}')
		kubectl -n $ns delete pod q --grace-period=0 --force >/dev/null 2>&1
	else
		got=ERROR
	fi
	printf '%s\t%s\n' "$q" "$got" >> "$out.tmp"
done <<'LIST'
9223372036854775807
9223372036854775808
-1
1e300
99999999999999999999999999999
123456789012345678901234567890Ki
1e9223372036854775807
0.1n
1.5n
100u
1.0001m
8Ei
9Ei
1e3
+1
1.5e1
0.5Ki
0.5
1000m
1.5Gi
1536Mi
12e6
15e-1
1e-3
1e-4
0.0001
1E
1000E
123456789012345678901234567890
0.1234567890123456789
LIST
mv "$out.tmp" "$out"
kubectl delete namespace $ns --wait=false >/dev/null
