package local

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"github.com/konverge/konverge/cluster"
)

// What the control plane creates by itself: in every namespace the
// default ServiceAccount (kube-controller-manager's serviceaccount
// controller) and the kube-root-ca.crt ConfigMap (its root-ca-cert-publisher),
// recreated when deleted; in the default namespace the kubernetes Service
// (kube-apiserver) and its Endpoints and EndpointSlice; the system
// PriorityClasses. The embedded cluster
// creates them in the transaction that creates the namespace, so that a
// pod applied with its namespace finds its ServiceAccount.

const (
	rootCAConfigMap = "kube-root-ca.crt"
	rootCADesc      = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
	// keyCA is the meta key of the cluster's CA certificate (PEM).
	keyCA = "ca.crt"
	// keyBootstrap marks a state whose control-plane objects exist.
	keyBootstrap = "bootstrap"
	// bootstrapVersion is what keyBootstrap holds once Open created them.
	bootstrapVersion = "2"
)

// kubernetesServiceIP is the first address of the service range.
const kubernetesServiceIP = "10.96.0.1"

// The API server's address and port in the kubernetes Service's
// endpoints: the simulated node's address (where a single-node cluster
// such as kind runs it) and kube-apiserver's default secure port.
const (
	apiServerAddress = "172.18.0.2"
	apiServerPort    = int64(6443)
)

// KubernetesService is the kubernetes Service of the default namespace
// as kube-apiserver creates it (at the start, and again within ten
// seconds whenever it is missing: see sim's controllers), with the
// embedded cluster's service range and port; ManagerAPIServer is the
// field manager it writes it with.
func KubernetesService() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "kubernetes", "namespace": "default",
			"labels": map[string]any{"component": "apiserver", "provider": "kubernetes"}},
		"spec": map[string]any{
			"clusterIP":       kubernetesServiceIP,
			"ports":           []any{map[string]any{"name": "https", "port": int64(443), "protocol": "TCP", "targetPort": apiServerPort}},
			"type":            "ClusterIP",
			"sessionAffinity": "None",
			"ipFamilies":      []any{"IPv4"}, "ipFamilyPolicy": "SingleStack",
		},
	}
}

// ManagerAPIServer is the field manager of what kube-apiserver writes
// itself.
const ManagerAPIServer = managerAPIServer

// systemPriorityClasses exist in every cluster.
var systemPriorityClasses = []map[string]any{
	{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": "system-node-critical"},
		"value": int64(2000001000), "description": "Used for system critical pods that must not be moved from their current node."},
	{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": "system-cluster-critical"},
		"value": int64(2000000000), "description": "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
}

// bootstrap creates what the control plane holds from the start and is
// missing: the initial namespaces and their content, the kubernetes
// Service, the system PriorityClasses.
func (t *txn) bootstrap() error {
	for _, ns := range initialNamespaces {
		if t.exists(objKey{gk: namespaceGK, name: ns}) {
			continue
		}
		obj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
		if _, err := t.create(obj, cluster.CreateOptions{FieldManager: managerAPIServer}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	var namespaces []string
	if err := t.scan(namespaceGK, "", func(_, name string, _ []byte) error {
		namespaces = append(namespaces, name)
		return nil
	}); err != nil {
		return err
	}
	for _, ns := range namespaces {
		if err := t.populateNamespace(ns); err != nil {
			return err
		}
	}
	for _, pc := range systemPriorityClasses {
		if t.exists(objKey{gk: priorityClassGK, name: metaString(pc, "name")}) {
			continue
		}
		if _, err := t.create(pc, cluster.CreateOptions{FieldManager: managerAPIServer}); err != nil {
			return fmt.Errorf("create priority class: %w", err)
		}
	}
	if !t.exists(objKey{gk: serviceGK, namespace: "default", name: "kubernetes"}) {
		if _, err := t.create(KubernetesService(), cluster.CreateOptions{FieldManager: managerAPIServer}); err != nil {
			return fmt.Errorf("create service kubernetes: %w", err)
		}
	}
	// Its endpoints, as kube-apiserver's endpoint reconciler (lease)
	// writes them.
	if !t.exists(objKey{gk: endpointsGK, namespace: "default", name: "kubernetes"}) {
		ep := map[string]any{
			"apiVersion": "v1", "kind": "Endpoints",
			"metadata": map[string]any{"name": "kubernetes", "namespace": "default",
				"labels": map[string]any{"endpointslice.kubernetes.io/skip-mirror": "true"}},
			"subsets": []any{map[string]any{
				"addresses": []any{map[string]any{"ip": apiServerAddress}},
				"ports":     []any{map[string]any{"name": "https", "port": apiServerPort, "protocol": "TCP"}},
			}},
		}
		if _, err := t.create(ep, cluster.CreateOptions{FieldManager: managerAPIServer}); err != nil {
			return fmt.Errorf("create endpoints kubernetes: %w", err)
		}
	}
	if !t.exists(objKey{gk: groupKind{"discovery.k8s.io", "EndpointSlice"}, namespace: "default", name: "kubernetes"}) {
		eps := map[string]any{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata": map[string]any{"name": "kubernetes", "namespace": "default",
				"labels": map[string]any{"kubernetes.io/service-name": "kubernetes"}},
			"addressType": "IPv4",
			"endpoints": []any{map[string]any{
				"addresses":  []any{apiServerAddress},
				"conditions": map[string]any{"ready": true},
			}},
			"ports": []any{map[string]any{"name": "https", "port": apiServerPort, "protocol": "TCP"}},
		}
		if _, err := t.create(eps, cluster.CreateOptions{FieldManager: managerAPIServer}); err != nil {
			return fmt.Errorf("create endpointslice kubernetes: %w", err)
		}
	}
	return t.tx.Bucket(bucketMeta).Put([]byte(keyBootstrap), []byte(bootstrapVersion))
}

// populateNamespace creates the default ServiceAccount and the
// kube-root-ca.crt ConfigMap of an active namespace when they are missing.
func (t *txn) populateNamespace(ns string) error {
	if phase, err := t.namespacePhase(ns); err != nil || phase != "Active" {
		return err
	}
	if !t.exists(objKey{gk: serviceAccountGK, namespace: ns, name: defaultServiceAccount}) {
		sa := map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": defaultServiceAccount, "namespace": ns}}
		// kube-controller-manager's service account controller creates
		// it without managedFields.
		if _, err := t.createObject(sa, cluster.CreateOptions{}, true); err != nil {
			return fmt.Errorf("create the default service account of %s: %w", ns, err)
		}
	}
	if !t.exists(objKey{gk: configMapGK, namespace: ns, name: rootCAConfigMap}) {
		ca, err := t.caCertificate()
		if err != nil {
			return err
		}
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": rootCAConfigMap, "namespace": ns,
				"annotations": map[string]any{"kubernetes.io/description": rootCADesc}},
			"data": map[string]any{"ca.crt": ca}}
		if _, err := t.create(cm, cluster.CreateOptions{FieldManager: managerControllers}); err != nil {
			return fmt.Errorf("create %s in %s: %w", rootCAConfigMap, ns, err)
		}
	}
	return nil
}

// controlPlaneOwned reports the objects populateNamespace recreates.
func controlPlaneOwned(k objKey) bool {
	return (k.gk == serviceAccountGK && k.name == defaultServiceAccount) || (k.gk == configMapGK && k.name == rootCAConfigMap)
}

// caCertificate returns the cluster's CA certificate (PEM), made on first
// use and kept in the meta bucket.
func (t *txn) caCertificate() (string, error) {
	meta := t.tx.Bucket(bucketMeta)
	if v := meta.Get([]byte(keyCA)); v != nil {
		return string(v), nil
	}
	// Nothing connects to the embedded cluster over TLS: the certificate
	// only stands where a real cluster's CA would. Its key is fixed and
	// ed25519 signatures are deterministic, so the same clock gives the
	// same certificate.
	seed := sha256.Sum256([]byte("konverge embedded cluster CA"))
	key := ed25519.NewKeyFromSeed(seed[:])
	now := t.s.clock.Now().UTC().Truncate(time.Second)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "konverge-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return "", fmt.Errorf("local: make the cluster CA: %w", err)
	}
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if t.tx.Writable() {
		if err := meta.Put([]byte(keyCA), []byte(ca)); err != nil {
			return "", fmt.Errorf("local: store the cluster CA: %w", err)
		}
	}
	return ca, nil
}

// The field managers of what the control plane writes itself.
const (
	managerAPIServer   = "kube-apiserver"
	managerControllers = "kube-controller-manager"
)
