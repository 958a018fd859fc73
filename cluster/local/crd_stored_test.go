package local

import (
	"context"
	"strings"
	"testing"

	"github.com/konverge/konverge/schema"
)

// TestCRDAsStored: a conversion webhook's service port defaults to 443;
// a CRD of a protected group needs its approval annotation (and keeps
// needing a valid one on update) and gets the approval condition; the
// status defaults of a custom resource's schema are in it on create.
func TestCRDAsStored(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	crdGVK := schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	webhook := mustCreate(t, s, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: portals.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: portals, kind: Portal}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {service: {namespace: default, name: conv}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            default: {conditions: [{type: Accepted, status: Unknown, reason: Pending}]}
            properties:
              listeners: {type: integer, default: 0}
              conditions: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`)
	if got, _ := encodeString(webhook["spec"].(map[string]any)["conversion"]); !strings.Contains(got, `"port":443`) {
		t.Errorf("conversion: %s", got)
	}
	cr := mustCreate(t, s, `
apiVersion: example.com/v1
kind: Portal
metadata: {name: front, namespace: default}
spec: {a: b}
status: {listeners: 7}
`)
	if got, _ := encodeString(cr["status"]); got != `{"conditions":[{"reason":"Pending","status":"Unknown","type":"Accepted"}],"listeners":0}` {
		t.Errorf("custom resource status on create: %s", got)
	}

	protected := func(annotation string) map[string]any {
		o := obj(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.policy.k8s.io}
spec:
  group: policy.k8s.io
  scope: Namespaced
  names: {plural: things, kind: Thing}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`)
		if annotation != "" {
			o["metadata"].(map[string]any)["annotations"] = map[string]any{"api-approved.kubernetes.io": annotation}
		}
		return o
	}
	if _, err := s.Create(ctx, protected("")); err == nil || !strings.Contains(err.Error(), `metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111`) {
		t.Errorf("no annotation: %v", err)
	}
	if _, err := s.Create(ctx, protected("unapproved, testing")); err != nil {
		t.Fatal(err)
	}
	live := mustGet(t, s, crdGVK, "", "things.policy.k8s.io")
	if got, _ := encodeString(live["status"].(map[string]any)["conditions"]); !strings.Contains(got, `"message":"not approved: \"unapproved, testing\"","reason":"UnapprovedAnnotation","status":"False","type":"KubernetesAPIApprovalPolicyConformant"`) {
		t.Errorf("conditions: %s", got)
	}
	next := protected("yes")
	next["metadata"].(map[string]any)["resourceVersion"] = live["metadata"].(map[string]any)["resourceVersion"]
	if _, err := s.Update(ctx, next); err == nil || !strings.Contains(err.Error(), `Invalid value: "yes": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved"`) {
		t.Errorf("invalid annotation: %v", err)
	}
	next = protected("https://github.com/kubernetes/enhancements/pull/1111")
	next["metadata"].(map[string]any)["resourceVersion"] = live["metadata"].(map[string]any)["resourceVersion"]
	if _, err := s.Update(ctx, next); err != nil {
		t.Fatal(err)
	}
	live = mustGet(t, s, crdGVK, "", "things.policy.k8s.io")
	if got, _ := encodeString(live["status"].(map[string]any)["conditions"]); !strings.Contains(got, `"message":"approved in https://github.com/kubernetes/enhancements/pull/1111","reason":"ApprovedAnnotation","status":"True"`) {
		t.Errorf("conditions after approval: %s", got)
	}
}
