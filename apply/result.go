package apply

import (
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/objref"
)

// Action is what an apply did to one object. Its value is the operation
// kubectl prints after the object's name.
type Action string

// The actions of apply, prune and delete.
const (
	// Created: the object did not exist and was created.
	Created Action = "created"
	// Configured: the object existed and was patched.
	Configured Action = "configured"
	// Unchanged: the object existed and needed no change (an empty patch,
	// nothing sent).
	Unchanged Action = "unchanged"
	// ServerSideApplied: the object was sent as a server-side apply patch.
	ServerSideApplied Action = "serverside-applied"
	// Pruned: the object was deleted because the input no longer holds it.
	Pruned Action = "pruned"
	// Deleted: the object was deleted (konverge delete).
	Deleted Action = "deleted"
)

// DryRun says whether and where a run is simulated, as kubectl's
// --dry-run flag.
type DryRun string

// The dry-run strategies. The zero value is DryRunNone.
const (
	// DryRunNone writes.
	DryRunNone DryRun = ""
	// DryRunClient computes every result locally and sends no write.
	DryRunClient DryRun = "client"
	// DryRunServer sends every write as a dry run: the server validates and
	// defaults and stores nothing.
	DryRunServer DryRun = "server"
)

// suffix is what kubectl appends to result lines in this mode.
func (d DryRun) suffix() string {
	switch d {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}

// Result is what happened to one object.
type Result struct {
	// Ref names the object.
	Ref objref.Ref
	// Action is what was done.
	Action Action
	// DryRun is the mode the result was computed in.
	DryRun DryRun
	// Object is the object after the action, as the server returned it
	// (with DryRunClient, as computed locally); for Pruned and Deleted, the
	// object as it was before. It is what -o yaml|json prints.
	Object map[string]any
	// Live is the object before the action: nil for Created.
	Live map[string]any
	// Patch is the patch sent for Configured (of type PatchType), nil
	// otherwise.
	Patch     map[string]any
	PatchType cluster.PatchType
	// Source is where the object was read from; zero for pruned objects.
	Source manifest.Source
	// Warnings are what kubectl prints on standard error about the object
	// ("Warning: resource deployments/web is missing the ... annotation
	// ..."), one line each, without the trailing newline.
	Warnings []string
}

// String returns kubectl's result line: "deployment.apps/nginx created",
// "configmap/x unchanged (server dry run)".
func (r Result) String() string {
	return r.Ref.String() + " " + string(r.Action) + r.DryRun.suffix()
}

// Changed reports whether the action changed (or, in a dry run, would
// change) the cluster.
func (r Result) Changed() bool {
	return r.Action != Unchanged
}
