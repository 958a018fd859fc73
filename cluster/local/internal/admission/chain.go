package admission

// Default is the chain of a default kube-apiserver 1.37: the plugins of
// --enable-admission-plugins' defaults that act on what a user writes, in
// the order the API server runs them (ResourceQuota last, so that it
// counts the object as the other plugins left it).
//
// By phase, that is:
//   - lifecycle: NamespaceLifecycle;
//   - mutating: LimitRanger, ServiceAccount, Priority,
//     DefaultTolerationSeconds, RuntimeClass, DefaultStorageClass,
//     StorageObjectInUseProtection;
//   - validating: LimitRanger, Priority, RuntimeClass, ResourceQuota.
func Default() Chain {
	return Chain{
		NamespaceLifecycle{},
		LimitRanger{},
		ServiceAccount{},
		Priority{},
		DefaultTolerationSeconds{},
		RuntimeClass{},
		DefaultStorageClass{},
		StorageObjectInUseProtection{},
		ResourceQuota{},
	}
}
