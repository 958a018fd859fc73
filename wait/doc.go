// Package wait waits until Kubernetes objects are what their specs ask for:
// ForCurrent until a set of objects is Current (package health) or a
// deadline passes, reporting each change of an object's health as an Event
// a UI can show; Until for any condition.
//
// It does not decide how time passes: a Driver does. The default, Poll,
// checks every Interval of wall time, as kubectl polls a real API server.
// The embedded cluster's simulation moves a virtual clock from one moment
// with work due to the next instead: a *sim.Runner is a Driver.
//
//	wait.ForCurrent(ctx, store, refs, wait.Options{Driver: runner})
//
// so that a rollout that takes minutes of cluster time is waited for at
// once. A *sim.Cluster (sim.Open) is the embedded cluster and its Driver
// in one value: ForCurrent uses a cluster that is a Driver when
// Options.Driver is nil. The package imports neither the simulation nor a cluster backend:
// it reads objects through cluster.Reader.
//
// # Errors
//
// A wait that runs out of time returns a *TimeoutError (errors.Is
// ErrTimeout) naming the objects that were not Current; one that meets a
// Failed object returns a *FailedError unless Options.ContinueOnFailure.
package wait
