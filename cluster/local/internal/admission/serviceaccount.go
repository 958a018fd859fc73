package admission

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
)

// Names the ServiceAccount plugin uses.
const (
	defaultServiceAccount = "default"
	tokenVolumePrefix     = "kube-api-access-"
	tokenMountPath        = "/var/run/secrets/kubernetes.io/serviceaccount"
	mirrorPodAnnotation   = "kubernetes.io/config.mirror"
	rootCAConfigMap       = "kube-root-ca.crt"
)

// ServiceAccount runs a created pod as its namespace's default
// ServiceAccount unless it names one, which must exist; it mounts the
// account's token (a projected kube-api-access-* volume in every
// container) unless automounting is off, and gives the pod the account's
// imagePullSecrets when it has none. Mirror pods are left alone.
type ServiceAccount struct{}

// Name implements Plugin.
func (ServiceAccount) Name() string { return "ServiceAccount" }

// Mutate implements Mutator.
func (ServiceAccount) Mutate(s Store, a *Attributes) error {
	if a.Operation != Create || a.Kind() != podGK {
		return nil
	}
	pod := a.Object
	md := jsonobj.Metadata(pod)
	if _, mirror := peek(md, "annotations")[mirrorPodAnnotation]; mirror {
		return nil
	}
	spec := child(pod, "spec")
	if str(spec, "serviceAccountName") == "" {
		spec["serviceAccountName"] = defaultServiceAccount
		spec["serviceAccount"] = defaultServiceAccount
	}
	ns := str(md, "namespace")
	saName := str(spec, "serviceAccountName")
	sa, err := s.Get(serviceAccountGK, ns, saName)
	if err != nil {
		return err
	}
	if sa == nil {
		return a.forbid(fmt.Sprintf("error looking up service account %s/%s: serviceaccount %q not found", ns, saName, saName))
	}
	automount := true
	if v, ok := spec["automountServiceAccountToken"].(bool); ok {
		automount = v
	} else if v, ok := sa["automountServiceAccountToken"].(bool); ok {
		automount = v
	}
	if automount {
		mountServiceAccountToken(pod)
	}
	if l, _ := spec["imagePullSecrets"].([]any); len(l) == 0 {
		var secrets []any
		for _, s := range objectList(sa["imagePullSecrets"]) {
			secrets = append(secrets, map[string]any{"name": str(s, "name")})
		}
		if len(secrets) > 0 {
			spec["imagePullSecrets"] = secrets
		} else {
			delete(spec, "imagePullSecrets")
		}
	}
	return nil
}

// mountServiceAccountToken adds the token volume and its read-only mount
// in every container (init containers first) that mounts nothing at the
// token's path.
func mountServiceAccountToken(pod map[string]any) {
	spec := child(pod, "spec")
	volumes := objectList(spec["volumes"])
	volName, hasVolume := "", false
	for _, v := range volumes {
		if n := str(v, "name"); strings.HasPrefix(n, tokenVolumePrefix) {
			volName, hasVolume = n, true
			break
		}
	}
	if volName == "" {
		volName = tokenVolumePrefix + tokenVolumeSuffix(pod)
	}
	needed := false
	for _, field := range []string{"initContainers", "containers"} {
		for _, c := range objectList(spec[field]) {
			mounts, _ := c["volumeMounts"].([]any)
			mounted := false
			for _, m := range objectList(mounts) {
				if str(m, "mountPath") == tokenMountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				c["volumeMounts"] = append(mounts, map[string]any{"name": volName, "readOnly": true, "mountPath": tokenMountPath})
				needed = true
			}
		}
	}
	if hasVolume || !needed {
		return
	}
	list, _ := spec["volumes"].([]any)
	spec["volumes"] = append(list, map[string]any{
		"name": volName,
		"projected": map[string]any{
			"defaultMode": int64(0o644),
			"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"path": "token", "expirationSeconds": int64(3607)}},
				map[string]any{"configMap": map[string]any{"name": rootCAConfigMap, "items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
				map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{
					"path": "namespace", "fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"},
				}}}},
			},
		},
	})
}

// tokenVolumeSuffix is the five characters that end the token volume's
// name: random on a real API server; here a hash of the pod's namespace and
// name (its uid is random already), so that tests of named pods are
// repeatable.
func tokenVolumeSuffix(pod map[string]any) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New64a()
	h.Write([]byte(metaString(pod, "namespace") + "/" + metaString(pod, "name")))
	n := h.Sum64()
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	return string(b)
}
