package admission

import (
	"fmt"

	"github.com/konverge/konverge/cluster"
)

// NamespaceLifecycle refuses a create in a namespace that does not exist
// (NotFound, naming the namespace) or is being terminated.
type NamespaceLifecycle struct{}

// Name implements Plugin.
func (NamespaceLifecycle) Name() string { return "NamespaceLifecycle" }

// CheckLifecycle implements LifecycleChecker.
func (NamespaceLifecycle) CheckLifecycle(s Store, a *Attributes) error {
	ns := a.Namespace()
	if a.Operation != Create || ns == "" {
		return nil
	}
	phase, err := s.NamespacePhase(ns)
	switch {
	case err != nil:
		return err
	case phase == "":
		return cluster.NewNotFound("namespaces", ns)
	case phase == "Terminating":
		return a.forbid(fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", ns))
	}
	return nil
}
