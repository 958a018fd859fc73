package local

import (
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/admission"
	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/usage"
	"github.com/konverge/konverge/value"
)

// Creates and updates go through the admission chain of package
// internal/admission (its chain.go lists the plugins in order), in the
// places kube-apiserver runs its phases: the lifecycle check before
// anything else of a create, the mutating plugins after defaulting and
// before the registry strategy, the validating plugins after validation
// and before the write.

var admissionChain = admission.Default()

// Kinds the registry and the store treat apart.
var (
	serviceAccountGK = groupKind{"", "ServiceAccount"}
	priorityClassGK  = groupKind{"scheduling.k8s.io", "PriorityClass"}
	pvGK             = groupKind{"", "PersistentVolume"}
	configMapGK      = groupKind{"", "ConfigMap"}
)

// defaultServiceAccount is the account every namespace gets.
const defaultServiceAccount = "default"

// admissionStore is what the plugins see of a transaction.
type admissionStore struct{ t *txn }

func (s admissionStore) Get(gk jsonobj.GroupKind, ns, name string) (map[string]any, error) {
	obj, _, err := s.t.read(objKey{gk: groupKind(gk), namespace: ns, name: name})
	return obj, err
}

func (s admissionStore) List(gk jsonobj.GroupKind, ns string) ([]map[string]any, error) {
	return s.t.objectsIn(groupKind(gk), ns)
}

func (s admissionStore) NamespacePhase(name string) (string, error) {
	return s.t.namespacePhase(name)
}

func (s admissionStore) Quotas(ns string) ([]map[string]any, []usage.Set, error) {
	q, err := s.t.quotasOf(ns)
	if err != nil {
		return nil, nil, err
	}
	return q.quotas, q.used, nil
}

func (s admissionStore) CountName(gk jsonobj.GroupKind) string {
	return s.t.quotaCountName(groupKind(gk))
}

// admit runs one phase of the chain on a request.
func (t *txn) admit(phase func(admission.Chain, admission.Store, *admission.Attributes) error,
	op admission.Operation, res cluster.Resource, obj, old map[string]any, name string) error {
	return phase(admissionChain, admissionStore{t}, &admission.Attributes{
		Operation: op, Resource: res, Name: name, Object: obj, Old: old,
	})
}

// objectsIn decodes the objects of a kind in a namespace ("" for
// cluster-scoped kinds), in name order.
func (t *txn) objectsIn(gk groupKind, ns string) ([]map[string]any, error) {
	var out []map[string]any
	err := t.scan(gk, ns, func(sns, name string, raw []byte) error {
		if sns != ns {
			return nil
		}
		obj, err := value.DecodeObject(raw)
		if err != nil {
			return t.wrap("decode", objKey{gk: gk, namespace: sns, name: name}, err)
		}
		out = append(out, obj)
		return nil
	})
	return out, err
}
