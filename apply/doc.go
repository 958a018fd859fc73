// Package apply applies a set of Kubernetes objects to a cluster exactly as
// client-side kubectl apply does: each object is created with the
// kubectl.kubernetes.io/last-applied-configuration annotation, or patched
// with the three-way merge between that annotation, the object and the live
// object (a strategic merge patch for built-in kinds, a JSON merge patch for
// custom resources), and the results print kubectl's lines
// ("deployment.apps/web configured"). It also prunes (package prune) and
// simulates (DryRunClient, DryRunServer); package diff builds on it.
//
// It does not read files (package manifest does; Objects wraps objects built
// in code), compute merges (package merge) or print (the CLI prints
// Results).
//
//	results, err := apply.New(c, apply.Options{}).Apply(ctx, objs)
//	for _, r := range results {
//		fmt.Println(r) // deployment.apps/web created
//	}
//
// # Plans
//
// A GitOps tool shows what an apply would do before it does it. Plan
// (Applier.Plan against a cluster, Planner.Plan against any LiveSource:
// a Snapshot of objects the tool holds, or its own cache) computes the
// same patches as Apply without writing, and returns a Plan: per object a
// Change with the Action (kubectl's verb: created, configured, unchanged,
// pruned), the Live object, the Merged one as the server would store it
// (predicted locally, see Change), the Patch, and Drift, whether Live
// and Merged differ, with the Paths where they do. Drift is the fact to
// act on: a Secret written with stringData or a quantity in another
// spelling makes kubectl print "configured" on every apply although
// nothing changes, and makes no Drift here. ApplyPlan sends a plan as it
// was computed, so that what was shown is what is applied.
//
//	p, err := apply.NewPlanner(apply.NewSnapshot(live...), mapper, opts).Plan(ctx, objs)
//	for _, c := range p.Drifted() {
//		fmt.Println(c, c.Paths) // deployment.apps/web configured [spec.template.spec.containers[name="web"].image]
//	}
//	results, err := apply.New(c, opts).ApplyPlan(ctx, p)
//
// # Ignore rules
//
// Options.Ignore lists fields that others own (an autoscaler's
// spec.replicas, an injected caBundle, every field of some field
// manager): plan, diff and apply leave them as they are live, neither
// reporting, nor overwriting, nor deleting them (see IgnoreRule).
//
// # Field paths
//
// Every field path is a value.Path, printed in one spelling
// (spec.template.spec.containers[name="web"].image, with a label or
// annotation key in brackets: metadata.labels[app.kubernetes.io/name])
// and with Pointer as a JSON pointer: Change.Paths, ObjectError.Path,
// FieldConflict.Path, cluster.Cause.Path; an IgnoreRule takes either
// form as it is. value.ParsePath reads the spellings of kube-apiserver
// and of server-side apply back.
//
// # Validation before writing
//
// An apply checks all of its objects before it writes any: every object is resolved
// (an unknown kind is an error unless the input holds its
// CustomResourceDefinition, against whose schema it is then checked),
// namespaced (Options.Namespace for objects without one; with
// EnforceNamespace another namespace is kubectl's error), checked against
// its kind's schema (merge.Validate) and for duplicates (one kind,
// namespace and name twice), and then tried on the server, where defaulting
// and validation happen. If any object fails, nothing is written and Apply
// returns Errors: one *ObjectError per object and cause, sorted by source,
// each naming the source, the object and the field path, and never a
// Secret's value.
//
// All or nothing holds in one case only: a client-side apply on a
// cluster that implements Batcher (cluster/local, the embedded cluster),
// where the whole apply, pruning included, runs in one transaction: the
// writes themselves are the trial, committed only when every object
// succeeded. A server-side apply there is a request per object, as
// kubectl sends it: the objects the server refused are in the error, the
// others are applied. Elsewhere (a real API server) every write is first
// sent as a server dry run, all of them before any is made, but a write
// can still fail after every dry run passed (a conflict, a quota, a
// webhook): Apply then returns the results of the writes made with the
// error. Objects in a namespace the input creates, custom resources whose
// CRD the input creates, and objects whose admission depends on another
// object of the input (see Order) can only be checked locally there.
//
// Plan runs the same checks without writing: the local ones above, then
// the API server's validation of the object it predicts (package
// validate, as the embedded cluster runs it), and reports what fails as
// Apply does, in the same Errors.
//
// # Secrets
//
// A Secret's values never leave this package in plaintext unless the
// caller asks: in every Change and Result (Live, Merged, Object, Patch,
// the last-applied annotation inside them) they are masked as package
// mask masks them ("***"; "*** (before)" and "*** (after)" where a value
// changes), so that whatever prints, logs or serialises a plan or a
// result (fmt's %v and %+v, encoding/json) shows none; an *ObjectError's
// message masks them too. Change.Unmasked, Plan.Unmasked and
// Result.Unmasked return the plaintext, for a caller that must write the
// object elsewhere or print it as the server holds it (kubectl apply
// -o yaml). ApplyPlan needs no unmasking: a Plan applies the plaintext it
// keeps unexported.
//
// # Results
//
// Result.Action is kubectl's verb; Result.Drift says whether the object
// changed: a Configured patch that changes nothing (a Secret re-applied
// with stringData) has no Drift, as a Change of a Plan has none.
//
// # ApplySets
//
// Options.ApplySet (with Prune) labels every object as a member of the
// set and prunes the members the input no longer holds. The parent of a
// set is a Secret by default, which is namespaced: as kubectl requires -n
// for it, the parent's namespace is Options.Namespace only with
// EnforceNamespace set, and without it Apply and Plan refuse with
// kubectl's "namespace is required to use namespace-scoped ApplySet".
// A parent of a cluster-scoped kind needs neither.
//
// # Order
//
// Namespaces first, then CustomResourceDefinitions (waiting until each is
// Established and served), then everything else. Results come back in
// input order, as kubectl prints them, followed by the pruned objects.
//
// # Reads and writes in a batch
//
// On a Batcher, a client-side apply writes the objects one after the
// other in its transaction, 1,024 at a time: each chunk's live objects are
// read when the chunk before it starts being written (in one call when
// the batch is a cluster.ManyGetter, which decodes them on other
// goroutines, without their managedFields when
// Options.LiveWithoutManagedFields allows), its merges computed on the
// other CPUs meanwhile, and its patches told to a cluster.Prefetcher as
// soon as they are computed, so that the batch prepares them before they
// are sent. A chunk is thus read after the writes of the chunks two before
// it, as kubectl reads each object just before it applies it.
//
// # Reads, plans and requests on a real cluster
//
// On a cluster that is not a Batcher, the live state is read in bulk: one
// List per kind and namespace that holds three objects or more of the
// input, one Get for each other object. Every merge is then computed
// locally, and only the objects whose patch is not empty (or that do not
// exist) are sent anything: a re-apply that changes nothing sends no
// write and no dry run. Reads, dry runs and writes go out
// Options.Concurrency at a time (DefaultConcurrency, 16), in waves: the
// Namespaces, the CustomResourceDefinitions, then the rest, split at the
// objects that change how the API server admits what follows them
// (admission webhooks and policies, ResourceQuotas, APIServices; for Pods
// and PersistentVolumeClaims also ServiceAccounts, LimitRanges,
// PriorityClasses, RuntimeClasses and StorageClasses), so that every
// object is admitted as it would be in kubectl's one-by-one order.
//
// # Create or patch
//
// As kubectl's apply.go and patcher.go: an object that does not exist is
// created with its annotation (nulls dropped); otherwise the patch is
// merge.ThreeWay (kinds the API patches strategically) or
// merge.ThreeWayJSONMerge (custom resources, unknown kinds), with
// DetectConflicts for NoOverwrite. An empty patch is Unchanged and sends
// nothing; otherwise the patch is sent and the object is Configured. A
// Conflict makes the patch be computed again from a fresh read, up to five
// times, pausing a second before the second and later tries. A live object
// without the annotation gets kubectl's warning in Result.Warnings.
//
// # Dry runs
//
// DryRunClient reads and sends nothing else: results come from merge.Apply
// locally. DryRunServer sends every write as a dry run, except on a Batcher,
// where the writes are made and the transaction is rolled back: unlike
// kubectl, objects then see the namespaces and CRDs their input creates.
// Result lines carry kubectl's " (dry run)" and " (server dry run)".
//
// # Differences from kubectl
//
// Duplicates in one input are an error (kubectl applies both, the second
// over the first). Cluster-scoped objects lose a metadata.namespace they
// name. The API server's defaulting and validation errors of all objects
// come before any write (kubectl writes up to the first bad object and goes
// on).
//
// # Server-side apply
//
// With Options.ServerSide each object is sent as an apply patch
// (application/apply-patch+yaml) for Options.FieldManager ("kubectl" by
// default), as kubectl apply --server-side sends it, and the server merges
// it by field ownership (managedFields); the embedded cluster does so with
// kube-apiserver's own field manager. Afterwards, as kubectl, the applier
// takes over the fields of client-side apply's managers (client-go's
// csaupgrade) and applies again, so that an object moves from client-side
// to server-side apply without conflicts and without keeping fields its
// configuration dropped; for "kubectl" the last-applied annotation is kept
// under the manager kubectl-last-applied, so that a later client-side apply
// still works. A refused apply because other managers own fields is a
// *ConflictError listing the managers and fields; ForceConflicts takes them
// over. The configuration is not validated locally: the server's errors
// are those kubectl would print.
package apply
